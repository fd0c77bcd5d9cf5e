/* bench gje's report: the Markdown tables (stdout, --markdown) and the
 * JSON (--json) of the dense batches and the matrices, with the device,
 * the date, the settings and the models behind every derived number. */
#include "tools/bench/bench_gje.h"

#include <math.h>
#include <string.h>

static double gflops(double flops, double s) { return flops / s * 1e-9; }

static const char *sizes_label(const gje_dense_row *w, char *buf, size_t len)
{
    if (w->lo == w->hi)
        snprintf(buf, len, "k = %d", w->lo);
    else
        snprintf(buf, len, "mix %d..%d", w->lo, w->hi);
    return buf;
}

/* ---------------------------------------------------------- Markdown */

static void md_header(FILE *f, const gje_run *r)
{
    const gje_opts *o = r->o;
    fprintf(f,
            "# krylov bench gje\n\n- device: %s\n- date (UTC): %s\n"
            "- settings: reps %d, warmup %d, batch %d blocks (%d when a "
            "block exceeds 16 rows), check %d blocks, seed %d, threads %d, "
            "matrices' block size %d, GJE ops '%s'\n"
            "- copy bandwidth: %.2f GB/s (device-to-device copy of %zu MiB, "
            "bytes read + written, median of %d)\n"
            "- times: medians of the timed runs after the warm-up (CUDA "
            "events on the GPU, a wall clock on the CPU)\n\n",
            kr_ctx_device_name(r->ctx), r->date, o->reps, o->warmup, o->batch,
            gje_batch_blocks(o, KR_GJE_MAX), o->check, o->seed,
            kr_ctx_threads(r->ctx), o->block_size, r->ops->name,
            r->copy_bps * 1e-9, r->copy_bytes >> 20, BENCH_COPY_REPS);
}

static void md_dense_intro(FILE *f)
{
    fprintf(f,
            "## Random dense blocks\n\n"
            "- blocks: row-permuted diagonally dominant, tiny diagonal "
            "(pivoting needed), condition < 2k + 1; fresh data per batch\n"
            "- GFLOP/s: %s over the median time; floor: %s; x floor = "
            "median / floor\n"
            "- getrf+getri: cublasDgetrfBatched + cublasDgetriBatched (the "
            "input copied back before each run, untimed); matinv: "
            "cublasDmatinvBatched; a variable-size batch is one call per "
            "size group (groups), times summed; speedup = cuBLAS / ours\n"
            "- residual: %s; vs getri = max |ours - getri| / max |getri| "
            "over the sample; FAIL when ours exceeds %g or any block is "
            "reported singular (none is)\n\n",
            GJE_FLOP_MODEL, GJE_FLOOR_MODEL, GJE_RESIDUAL_MODEL,
            GJE_RESIDUAL_TOL);
    fputs("| sizes | blocks | mean k | MB in+out | ours ms | GFLOP/s | floor "
          "ms | x floor | getrf+getri ms | GFLOP/s | speedup | matinv ms | "
          "GFLOP/s | speedup | groups | residual ours | residual getri | "
          "residual matinv | vs getri | note |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
          "---|---|---|---|\n",
          f);
}

/* "ms | GFLOP/s | speedup |" of one cuBLAS method; when it did not run,
 * "n/a: CPU" or "failed" (the note says why). */
static void md_cublas(FILE *f, const gje_dense_row *w, double s)
{
    if (isnan(s)) {
        int cpu = !strcmp(w->cublas_note, "n/a: CPU");
        fprintf(f, " %s | - | - |", cpu ? "n/a: CPU" : "failed");
        return;
    }
    fprintf(f, " %.4f | %.1f | %.2f |", s * 1e3, gflops(w->flops, s),
            s / w->ours_s);
}

static void md_dense_row(FILE *f, const gje_dense_row *w)
{
    char label[32];
    fprintf(f, "| %s | %d | %.2f | %.1f | %.4f | %.1f | %.4f | %.2f |",
            sizes_label(w, label, sizeof label), (int)w->nb, w->mean_k,
            w->floor_bytes / 1048576.0, w->ours_s * 1e3,
            gflops(w->flops, w->ours_s), w->floor_s * 1e3,
            w->ours_s / w->floor_s);
    md_cublas(f, w, w->lu_s);
    md_cublas(f, w, w->matinv_s);
    if (w->groups)
        fprintf(f, " %d |", w->groups);
    else
        fputs(" - |", f);
    fprintf(f, " %.2e | ", w->res_ours);
    bench_md_num(f, "%.2e", w->res_lu);
    fputs(" | ", f);
    bench_md_num(f, "%.2e", w->res_matinv);
    fputs(" | ", f);
    bench_md_num(f, "%.2e", w->diff_lu);
    fprintf(f, " | %s%s%s |\n", w->cublas_note,
            *w->cublas_note && *w->note ? "; " : "", w->note);
}

static void md_matrix_intro(FILE *f, const gje_run *r)
{
    fprintf(f,
            "\n## Block-Jacobi stages on matrices\n\n"
            "- blocking: supervariable agglomeration up to %d rows on the "
            "host (wall clock); flags: the pattern flags of a device "
            "blocking; extract+invert and apply: the batched ops\n"
            "- apply GB/s: %s, over the median time; %% copy = over the "
            "copy bandwidth\n"
            "- csr SpMV: the csr format (cuSPARSE on the GPU) on "
            "blockdiag(inverses) as CSR, same r and z; SpMV / apply = its "
            "median / apply's\n"
            "- bjacobi setup: kr_precond_create_opts(\"bjacobi\"), wall "
            "clock, one run after the stages\n"
            "- residual: ours over the sampled non-singular blocks (the "
            "reference's in the JSON); FAIL above max(%g, 100 x the "
            "reference's), or when the pattern flags or apply (beyond %g) "
            "are wrong\n\n",
            r->o->block_size, GJE_APPLY_MODEL, GJE_RESIDUAL_TOL, GJE_APPLY_TOL);
    fputs("| matrix | n | nnz | blocks | mean k | max k | singular | "
          "blocking ms | flags ms | extract+invert ms | apply us | apply "
          "GB/s | % copy | csr SpMV us | SpMV / apply | bjacobi setup ms | "
          "residual | note |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
          "---|---|\n",
          f);
}

static void md_matrix_row(FILE *f, const gje_run *r, const gje_matrix_row *w)
{
    fprintf(f, "| %s | %d | %d |", w->item->name, (int)w->n, (int)w->nnz);
    if (!w->done) {
        fprintf(f,
                " - | - | - | - | - | - | - | - | - | - | - | - | - | - "
                "| %s |\n",
                w->note);
        return;
    }
    double gbps = w->apply_bytes / w->apply_s * 1e-9;
    fprintf(f,
            " %d | %.2f | %d | %d | %.3f | %.3f | %.3f | %.2f | %.1f | "
            "%.1f | ",
            (int)w->nb, w->mean_k, (int)w->max_k, (int)w->singular,
            w->blocking_s * 1e3, w->flags_s * 1e3, w->extract_s * 1e3,
            w->apply_s * 1e6, gbps, 1e11 * gbps / r->copy_bps);
    bench_md_num(f, "%.2f", w->spmv_s * 1e6);
    fputs(" | ", f);
    bench_md_num(f, "%.2f", w->spmv_s / w->apply_s);
    fprintf(f, " | %.3f | ", w->precond_s * 1e3);
    bench_md_num(f, "%.2e", w->res);
    fprintf(f, " | %s |\n", w->note);
}

void gje_write_markdown(FILE *f, const void *arg)
{
    const gje_run *r = arg;
    md_header(f, r);
    if (r->dense) md_dense_intro(f);
    for (int i = 0; i < r->ndense; i++)
        md_dense_row(f, &r->dense_rows[i]);
    if (r->matrices) md_matrix_intro(f, r);
    for (int i = 0; i < r->nmats; i++)
        md_matrix_row(f, r, &r->mat_rows[i]);
}

/* -------------------------------------------------------------- JSON */

static void json_cublas(cli_json *j, const gje_dense_row *w, const char *key,
                        double s, int32_t singular, double res)
{
    char k[64];
    snprintf(k, sizeof k, "%s_s", key);
    cli_json_num(j, k, s);
    snprintf(k, sizeof k, "%s_gflops", key);
    cli_json_num(j, k, gflops(w->flops, s));
    snprintf(k, sizeof k, "speedup_vs_%s", key);
    cli_json_num(j, k, s / w->ours_s);
    snprintf(k, sizeof k, "%s_singular_blocks", key);
    if (isnan(s))
        cli_json_null(j, k);
    else
        cli_json_int(j, k, singular);
    snprintf(k, sizeof k, "%s_max_residual", key);
    cli_json_num(j, k, res);
}

static void json_dense_row(FILE *f, const gje_dense_row *w)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "kind", w->lo == w->hi ? "uniform" : "mix");
    cli_json_int(&j, "min_size", w->lo);
    cli_json_int(&j, "max_size", w->hi);
    cli_json_int(&j, "blocks", w->nb);
    cli_json_num(&j, "mean_size", w->mean_k);
    cli_json_num(&j, "flops", w->flops);
    cli_json_num(&j, "floor_bytes", w->floor_bytes);
    cli_json_num(&j, "median_s", w->ours_s);
    cli_json_num(&j, "min_s", w->ours_min_s);
    cli_json_num(&j, "gflops", gflops(w->flops, w->ours_s));
    cli_json_num(&j, "floor_s", w->floor_s);
    cli_json_num(&j, "over_floor", w->ours_s / w->floor_s);
    cli_json_int(&j, "singular_blocks", w->singular_ours);
    cli_json_int(&j, "sampled_blocks", w->sampled);
    cli_json_num(&j, "max_residual", w->res_ours);
    cli_json_int(&j, "cublas_groups", w->groups);
    json_cublas(&j, w, "getrf_getri", w->lu_s, w->singular_lu, w->res_lu);
    json_cublas(&j, w, "matinv", w->matinv_s, w->singular_matinv,
                w->res_matinv);
    cli_json_num(&j, "max_rel_diff_vs_getri", w->diff_lu);
    cli_json_str(&j, "cublas_note", w->cublas_note);
    cli_json_str(&j, "status", w->failed ? "fail" : "ok");
    cli_json_str(&j, "note", w->note);
    cli_json_end(&j);
}

static void json_stages(cli_json *j, const gje_run *r, const gje_matrix_row *w)
{
    cli_json_int(j, "blocks", w->nb);
    cli_json_num(j, "mean_block_size", w->mean_k);
    cli_json_int(j, "max_block_size", w->max_k);
    cli_json_int(j, "singular_blocks", w->singular);
    cli_json_num(j, "blocking_s", w->blocking_s);
    cli_json_num(j, "pattern_flags_s", w->flags_s);
    cli_json_num(j, "extract_invert_s", w->extract_s);
    cli_json_num(j, "apply_s", w->apply_s);
    cli_json_num(j, "apply_bytes", w->apply_bytes);
    cli_json_num(j, "apply_gbytes_per_s", w->apply_bytes / w->apply_s * 1e-9);
    cli_json_num(j, "apply_percent_of_copy",
                 100.0 * w->apply_bytes / w->apply_s / r->copy_bps);
    cli_json_num(j, "spmv_csr_s", w->spmv_s);
    cli_json_num(j, "spmv_over_apply", w->spmv_s / w->apply_s);
    cli_json_num(j, "precond_setup_s", w->precond_s);
    cli_json_int(j, "precond_blocks", w->precond_nb);
    cli_json_int(j, "precond_singular_blocks", w->precond_singular);
    cli_json_int(j, "sampled_blocks", w->sampled);
    cli_json_int(j, "checked_blocks", w->checked);
    cli_json_num(j, "max_residual", w->res);
    cli_json_num(j, "reference_max_residual", w->res_ref);
    cli_json_int(j, "singular_mismatches", w->singular_mismatch);
    cli_json_int(j, "pattern_flag_mismatches", w->flag_mismatch);
    cli_json_num(j, "apply_max_rel_diff", w->apply_diff);
}

static void json_matrix_row(FILE *f, const gje_run *r, const gje_matrix_row *w)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "matrix", w->item->name);
    cli_json_bool(&j, "generated", w->item->generated);
    cli_json_int(&j, "n", w->n);
    cli_json_int(&j, "nnz", w->nnz);
    cli_json_str(&j, "status",
                 w->refused  ? "refused"
                 : w->failed ? "fail"
                             : "ok");
    cli_json_str(&j, "note", w->note);
    if (w->done) json_stages(&j, r, w);
    cli_json_end(&j);
}

static void json_settings(cli_json *j, const gje_run *r)
{
    const gje_opts *o = r->o;
    cli_json_open(j, "settings");
    cli_json_str(j, "part", o->part);
    cli_json_str(j, "sizes", o->sizes);
    cli_json_str(j, "mixes", o->mixes);
    cli_json_int(j, "batch", o->batch);
    cli_json_int(j, "batch_above_16", gje_batch_blocks(o, KR_GJE_MAX));
    cli_json_int(j, "reps", o->reps);
    cli_json_int(j, "warmup", o->warmup);
    cli_json_int(j, "check", o->check);
    cli_json_int(j, "seed", o->seed);
    cli_json_int(j, "block_size", o->block_size);
    cli_json_str(j, "gje_ops", r->ops->name);
    bench_json_run(j, o->device, r->ctx, r->copy_bytes);
    cli_json_close(j);
}

static void json_models(cli_json *j)
{
    cli_json_open(j, "models");
    cli_json_str(j, "flops", GJE_FLOP_MODEL);
    cli_json_str(j, "floor", GJE_FLOOR_MODEL);
    cli_json_str(j, "apply_bytes", GJE_APPLY_MODEL);
    cli_json_str(j, "residual", GJE_RESIDUAL_MODEL);
    cli_json_num(j, "residual_tolerance", GJE_RESIDUAL_TOL);
    cli_json_num(j, "apply_tolerance", GJE_APPLY_TOL);
    cli_json_close(j);
}

void gje_write_json(FILE *f, const void *arg)
{
    const gje_run *r = arg;
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "command", "bench gje");
    cli_json_str(&j, "krylov_version", KR_VERSION_STRING);
    cli_json_str(&j, "device", kr_ctx_device_name(r->ctx));
    cli_json_str(&j, "date_utc", r->date);
    json_settings(&j, r);
    cli_json_num(&j, "copy_bytes_per_s", r->copy_bps);
    json_models(&j);
    cli_json_key(&j, "batches");
    fputc('[', f);
    for (int i = 0; i < r->ndense; i++) {
        fputs(i ? "," : "", f);
        json_dense_row(f, &r->dense_rows[i]);
    }
    fputs("]", f);
    cli_json_key(&j, "matrices");
    fputc('[', f);
    for (int i = 0; i < r->nmats; i++) {
        fputs(i ? "," : "", f);
        json_matrix_row(f, r, &r->mat_rows[i]);
    }
    fputc(']', f);
    cli_json_end(&j);
}
