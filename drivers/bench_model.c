/* Byte models of one iteration per method. Every count is a pass over a
 * vector of n doubles (a read or a write), taken from the kernel calls in
 * solver/cg.c, bicgstab.c, gmres.c and idr.c; a dot of two different
 * vectors reads 2, of a vector with itself 1. */
#include "drivers/bench_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* With a diagonal preconditioner (none, jacobi) CG fuses x, r, z and both
 * inner products into one pass (solver/cg.c), counted here in full. */
static void cg(bench_iter_model *m, const char *precond)
{
    m->spmvs = 1;
    if (!strcmp(precond, "jacobi") || !strcmp(precond, "none")) {
        int jac = !strcmp(precond, "jacobi");
        m->pcs = 0;
        m->vectors = 2 + (jac ? 8 : 6) + 3;
        snprintf(m->text, sizeof m->text,
                 "cg: 1 SpMV (q = A p), %d vector passes: dot p.q 2, fused "
                 "update %s, axpby p = z + b p 3",
                 (int)m->vectors,
                 jac ? "x += a p, r -= a q, z = d .* r with r.z and r.r 8"
                     : "x += a p, r -= a q with r.r 6");
        return;
    }
    m->pcs = 1;
    m->vectors = 2 + 6 + 2 + 3;
    snprintf(m->text, sizeof m->text,
             "cg: 1 SpMV (q = A p), 1 preconditioner, 13 vector passes: "
             "dot p.q 2, axpy2 x += a p, r -= a q 6, dots r.z and r.r 2, "
             "axpby p = z + b p 3");
}

static void bicgstab(bench_iter_model *m)
{
    m->spmvs = 2;
    m->pcs = 2;
    m->vectors = 2 + 3 + 1 + 2 + 4 + 3 + 2 + 4;
    snprintf(m->text, sizeof m->text,
             "bicgstab: 2 SpMVs, 2 preconditioners, 21 vector passes: dot "
             "r0.v 2, axpby s = r - a v 3, dot s.s 1, dots t.s and t.t 2, "
             "axpbypcz x += a p^ + w s^ 4, axpby r = s - w t 3, dots r0.r "
             "and r.r 2, axpbypcz p = r + b (p - w v) 4");
}

/* Passes of one GMRES cycle of k Arnoldi steps: step j does two classical
 * Gram-Schmidt passes (gemv_t j+2, gemv_n j+3), a norm 1 and a scaling 2;
 * the cycle adds its residual (copy 2, norm 1), v0 scaling 2 and the
 * update x += M^-1 V y (t = y0 v0 2, gemv_n k+1 when k > 1, x += z 3). */
static double gmres_cycle(int k)
{
    return 2.0 * k * (k - 1) + 13.0 * k + 10 + (k > 1 ? k + 1 : 0);
}

static void gmres(bench_iter_model *m, int restart, int its)
{
    if (its < 1) its = restart;
    int full = its / restart, rest = its % restart;
    int cycles = full + (rest > 0);
    double passes =
        full * gmres_cycle(restart) + (rest ? gmres_cycle(rest) : 0);
    m->spmvs = (double)(its + cycles) / its;
    m->pcs = m->spmvs;
    m->vectors = passes / its;
    snprintf(m->text, sizeof m->text,
             "gmres(%d): Arnoldi step j: 1 preconditioner, 1 SpMV, 4j + 13 "
             "vector passes (two Gram-Schmidt passes gemv_t j+2 and gemv_n "
             "j+3, norm 1, scaling 2); each cycle of k steps adds 1 SpMV and "
             "copy 2 + norm 1 (residual), scaling 2, 1 preconditioner and "
             "5 + (k+1) passes (update of x); averaged over the %d "
             "iterations of this solve: %.2f SpMVs, %.2f vector passes",
             restart, its, m->spmvs, m->vectors);
}

/* Passes of step k of an IDR(s) cycle on the host path (rest = s - k
 * columns left). */
static double idr_step(int s, int k)
{
    int rest = s - k;
    double p = 2 + (rest + 2) + 3 + (rest > 1 ? rest + 1 : 0); /* direction */
    if (k > 0) p += (k + 1) + 2.0 * (k + 2); /* bi-orthogonalisation */
    return p + (s - k + 1) + 6; /* column of M, x and r update with r.r */
}

/* The largest s whose scalars stay on the device (KR_IDR_DEV_MAX_S in
 * core/backend.h, which drivers/ cannot include). */
#define IDR_DEV_MAX_S 8

/* Step k on the device path (solver/idr.c): the u_k op (fused: r,
 * G(:,k:s), U(:,k+1:s), u_k read and written, d when jacobi; else idr_v
 * rest + 2 and idr_u rest + 2), idr_h k + 1, idr_orth 1 + rest (+ g_k
 * written, G(:,0:k), u_k twice, U(:,0:k) when k > 0), idr_update 6 (+
 * z = d .* r on the last step when fused). */
static double idr_dev_step(int s, int k, int fused, int jac)
{
    int rest = s - k;
    double p = fused ? 2.0 * rest + 2 + jac : 2.0 * rest + 4;
    if (k > 0) p += (k + 1) + (3 + 2.0 * k);
    p += 1 + rest + 6;
    return p + (fused && k == s - 1 ? 1 + jac : 0);
}

static void idr_host(bench_iter_model *m, int s)
{
    double passes = s + 1 + 8; /* f = P^T r; reduction: dots 2, update 6 */
    for (int k = 0; k < s; k++)
        passes += idr_step(s, k);
    m->spmvs = 1;
    m->pcs = 1;
    m->vectors = passes / (s + 1);
    snprintf(m->text, sizeof m->text,
             "idr(%d): per mat-vec (= iteration) 1 SpMV, 1 preconditioner; a "
             "cycle of s+1 mat-vecs moves %.0f vector passes (f = P^T r s+1; "
             "step k: copy 2, gemv_n (s-k)+2, axpby 3, gemv_n (s-k)+1, "
             "bi-orthogonalisation 3k+5 when k > 0, gemv_t (s-k)+1, x and r "
             "update with r.r 6; reduction: dots 2, update 6): %.2f per "
             "iteration",
             s, passes, m->vectors);
}

/* With a diagonal preconditioner (none, jacobi) the device path fuses it
 * into the u_k op and the last step's update, counted here in full. */
static void idr(bench_iter_model *m, const char *precond, int s)
{
    if (s > IDR_DEV_MAX_S) {
        idr_host(m, s);
        return;
    }
    int jac = !strcmp(precond, "jacobi");
    int fused = jac || !strcmp(precond, "none");
    double passes = 2 + 6 + s; /* reduction: omega 2, update with P^T r */
    for (int k = 0; k < s; k++)
        passes += idr_dev_step(s, k, fused, jac);
    m->spmvs = 1;
    m->pcs = fused ? 0 : 1;
    m->vectors = passes / (s + 1);
    snprintf(
        m->text, sizeof m->text,
        "idr(%d), scalars on the device: per mat-vec (= iteration) 1 "
        "SpMV%s; a cycle of s+1 mat-vecs moves %.0f vector passes (step "
        "k: u_k %s, h = P^T g_k k+1 when k > 0, g_k and u_k "
        "orthogonalised with M's column (s-k)+1 (+ 2k+3 when k > 0), x "
        "and r update 6%s; reduction: omega 2, update with f = P^T r "
        "6+s): %.2f per iteration",
        s, fused ? "" : ", 1 preconditioner", passes,
        fused ? (jac ? "with d .* v 2(s-k)+3" : "2(s-k)+2")
              : "(v, then u_k) 2(s-k)+4",
        fused ? (jac ? ", + d .* r 2 on the last" : ", + z = r 1 on the last")
              : "",
        m->vectors);
}

static const char *pc_model(const char *precond, double *vectors)
{
    if (!strcmp(precond, "none")) {
        *vectors = 2;
        return "preconditioner none: copy z = r, 2 passes";
    }
    if (!strcmp(precond, "jacobi")) {
        *vectors = 3;
        return "preconditioner jacobi: d and r read, z written, 3 passes";
    }
    *vectors = 2;
    return "preconditioner: r read and z written, 2 passes; its own data is "
           "not counted, so the floor is low";
}

int bench_iter_model_make(const char *method, const char *precond, int s,
                          int restart, int iterations, bench_iter_model *m)
{
    memset(m, 0, sizeof *m);
    if (!strcmp(method, "cg"))
        cg(m, precond);
    else if (!strcmp(method, "bicgstab"))
        bicgstab(m);
    else if (!strcmp(method, "gmres"))
        gmres(m, restart, iterations);
    else if (!strcmp(method, "idr"))
        idr(m, precond, s);
    else {
        m->spmvs = m->pcs = m->vectors = NAN;
        snprintf(m->text, sizeof m->text, "no byte model for method '%s'",
                 method);
        return -1;
    }
    const char *pc = pc_model(precond, &m->pc_vectors);
    size_t used = strlen(m->text);
    if (m->pcs > 0) /* CG fuses a diagonal preconditioner: counted above */
        snprintf(m->text + used, sizeof m->text - used, "; %s", pc);
    return 0;
}

double bench_iter_bytes(const bench_iter_model *m, double spmv_bytes, int32_t n)
{
    return m->spmvs * spmv_bytes +
           8.0 * n * (m->vectors + m->pcs * m->pc_vectors);
}
