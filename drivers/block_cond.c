/* `--verbose` (drivers/block_cond.h): the numbers come from
 * kr_precond_block_cond (precond/block_cond.c); here they are worded, one line
 * per block in the words of bjacobi's singular-block error ("block 2
 * (rows 8..11, 1-based 9..12)"), so a block can be looked up in either. */
#include "block_cond.h"

#include <string.h>

/* What the policy applies in place of a singular block's inverse. */
static const char *stand_in(const solve_run *r)
{
    return strcmp(r->o->bjacobi_singular, "identity") ? "scalar Jacobi"
                                                      : "the identity";
}

static void print_summary(FILE *f, const solve_run *r,
                          const kr_block_cond_stats *s)
{
    int inverted = (int)(s->blocks - s->replaced);
    fputs("block condition numbers, cond_1(B) = ||B||_1 ||B^-1||_1 "
          "(B^-1 as applied):\n",
          f);
    fprintf(f, "  blocks:  %d (%d inverted, %d replaced", (int)s->blocks,
            inverted, (int)s->replaced);
    if (s->replaced) fprintf(f, ": singular, %s applied", stand_in(r));
    fputs(")\n", f);
    if (!inverted) return;
    fprintf(f, "  cond_1:  min %.3e, median %.3e, max %.3e (block %d)\n",
            s->min, s->median, s->max, (int)s->max_block);
    fprintf(f, "  > " CLI_COND_HIGH ":   %d of %d inverted blocks\n",
            (int)s->high, inverted);
    fprintf(f, "  > " CLI_COND_EXTREME ":  %d of %d inverted blocks\n",
            (int)s->extreme, inverted);
}

static void print_block(FILE *f, const solve_run *r, const kr_block_cond *c,
                        int32_t b)
{
    int s = (int)c->starts[b], e = (int)c->starts[b + 1] - 1;
    fprintf(f, "  block %d (rows %d..%d, 1-based %d..%d): size %d, ", (int)b, s,
            e, s + 1, e + 1, e - s + 1);
    if (c->replaced[b])
        fprintf(f, "replaced (singular: %s applied, not an inverse)\n",
                stand_in(r));
    else
        fprintf(f, "cond %.3e\n", c->cond[b]);
}

void cli_block_conds(FILE *f, solve_run *r)
{
    if (kr_precond_block_count(r->P) <= 0) {
        fprintf(f,
                "--verbose: preconditioner %s has no diagonal blocks, so "
                "no condition numbers to report\n",
                r->o->precond);
        return;
    }
    kr_block_cond c;
    kr_status st = kr_precond_block_cond(r->ctx, r->P, &r->A, &c);
    if (st == KR_OK) st = kr_block_cond_summarize(r->ctx, &c, &r->cond);
    if (st == KR_OK) {
        r->have_cond = 1;
        print_summary(f, r, &r->cond);
        for (int32_t b = 0; b < c.nb; b++)
            print_block(f, r, &c, b);
    } else {
        fprintf(stderr, "warning: --verbose: %s\n", kr_ctx_error(r->ctx));
    }
    kr_block_cond_free(&c);
    fflush(f);
}

void cli_block_conds_json(cli_json *j, const kr_block_cond_stats *s)
{
    cli_json_open(j, "block_conditions");
    cli_json_int(j, "blocks", s->blocks);
    cli_json_int(j, "replaced", s->replaced);
    cli_json_num(j, "min", s->min);
    cli_json_num(j, "median", s->median);
    cli_json_num(j, "max", s->max);
    if (s->max_block >= 0)
        cli_json_int(j, "max_block", s->max_block);
    else
        cli_json_null(j, "max_block");
    cli_json_int(j, "over_" CLI_COND_HIGH, s->high);
    cli_json_int(j, "over_" CLI_COND_EXTREME, s->extreme);
    cli_json_close(j);
}
