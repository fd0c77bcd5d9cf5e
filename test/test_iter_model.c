/* Each method states the traffic of one iteration next to its code
 * (kr_solver_ops.iter_model), and `krylov bench solve` builds its byte
 * floor from it. Every registered method has a model, and the models give
 * the counts worked out by hand from the kernels each method calls. */
#include "solver/solver.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kr_iter_model model(const char *method, int s, int restart, int32_t n,
                           kr_pc_kind pc, int iterations)
{
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = method;
    o.s = s;
    o.restart = restart;
    const kr_solver_ops *ops = kr_solver_find(method);
    ck_assert_ptr_nonnull(ops);
    ck_assert_ptr_nonnull(ops->iter_model);
    kr_iter_model m;
    memset(&m, 0, sizeof m);
    ops->iter_model(&o, n, pc, iterations, &m);
    ck_assert_msg(strstr(m.text, method) == m.text, "text '%s' names %s",
                  m.text, method);
    return m;
}

START_TEST(every_method_has_a_model)
{
    for (const char *const *p = kr_method_names(); *p; p++) {
        kr_iter_model m = model(*p, 4, 30, 1000, KR_PC_GENERAL, 100);
        ck_assert(m.spmvs >= 1 && m.pcs >= 1 && m.vectors > 0);
    }
}
END_TEST

START_TEST(cg_counts)
{
    /* q = A p; p.q 2; fused x, r, z = d .* r with r.z, r.r 8; p update 3 */
    kr_iter_model m = model("cg", 4, 30, 1000, KR_PC_DIAGONAL, 50);
    ck_assert_double_eq(m.spmvs, 1);
    ck_assert_double_eq(m.pcs, 0);
    ck_assert_double_eq(m.vectors, 13);
    /* no d to read: the fused update moves x, p, r, q (6) */
    m = model("cg", 4, 30, 1000, KR_PC_IDENTITY, 50);
    ck_assert_double_eq(m.vectors, 11);
    /* p.q 2, axpy2 6, dots r.z r.r 2, p update 3, and the operator */
    m = model("cg", 4, 30, 1000, KR_PC_GENERAL, 50);
    ck_assert_double_eq(m.pcs, 1);
    ck_assert_double_eq(m.vectors, 13);
}
END_TEST

START_TEST(bicgstab_counts)
{
    kr_iter_model m = model("bicgstab", 4, 30, 1000, KR_PC_DIAGONAL, 50);
    ck_assert_double_eq(m.spmvs, 2);
    ck_assert_double_eq(m.pcs, 2);
    ck_assert_double_eq(m.vectors, 21);
}
END_TEST

START_TEST(gmres_counts)
{
    /* GMRES(2), 4 iterations: two cycles of 2 Arnoldi steps. Step j: two
     * Gram-Schmidt passes, each gemv_t j+2 and gemv_n j+3, a norm 1 and a
     * scaling 2: 4j + 13; a cycle of k steps adds 10, and k+1 for k > 1:
     * k = 2: 13 + 17 + 10 + 3 = 43 passes; 3 SpMVs (2 steps + residual). */
    kr_iter_model m = model("gmres", 4, 2, 1000, KR_PC_DIAGONAL, 4);
    ck_assert_double_eq(m.spmvs, 6.0 / 4);
    ck_assert_double_eq(m.pcs, 6.0 / 4);
    ck_assert_double_eq(m.vectors, 2 * 43.0 / 4);
    /* 5 iterations: a third cycle of one step, 13 + 10 = 23 passes */
    m = model("gmres", 4, 2, 1000, KR_PC_DIAGONAL, 5);
    ck_assert_double_eq(m.spmvs, 8.0 / 5);
    ck_assert_double_eq(m.vectors, (2 * 43.0 + 23) / 5);
}
END_TEST

START_TEST(idr_counts)
{
    /* IDR(2), scalars on the device, jacobi fused: the reduction 2 + 6 +
     * 2 = 10; step 0: u_k 2*2+2+1 = 7, orth 1+2, update 6: 16; step 1: u_k
     * 2+2+1 less r, made in step 0's update = 4, h 2, orth 1+1 + 5, update
     * 6, d .* r 2: 21; 47 passes per cycle of 3 mat-vecs, the
     * preconditioner inside them */
    kr_iter_model m = model("idr", 2, 30, 1000, KR_PC_DIAGONAL, 50);
    ck_assert_double_eq(m.spmvs, 1);
    ck_assert_double_eq(m.pcs, 0);
    ck_assert_double_eq_tol(m.vectors, 47.0 / 3, 1e-12);
    /* KRYLOV_IDR_FUSED=0: step 1's u_k reads r again (the separate
     * update and v/u ops, as the solver then runs them) */
    setenv("KRYLOV_IDR_FUSED", "0", 1);
    kr_iter_model u = model("idr", 2, 30, 1000, KR_PC_DIAGONAL, 50);
    unsetenv("KRYLOV_IDR_FUSED");
    ck_assert_double_eq_tol(u.vectors, 48.0 / 3, 1e-12);
    /* a general preconditioner: u_k as v then u_k, 2*rest+4 each step */
    kr_iter_model g = model("idr", 2, 30, 1000, KR_PC_GENERAL, 50);
    ck_assert_double_eq(g.pcs, 1);
    ck_assert_double_eq_tol(g.vectors, 48.0 / 3, 1e-12);
    /* s is capped at n, as the method caps its shadow space */
    kr_iter_model c = model("idr", 4, 30, 2, KR_PC_DIAGONAL, 50);
    ck_assert_double_eq_tol(c.vectors, 47.0 / 3, 1e-12);
    /* s > 8 takes the host path: f = P^T r 10 and the reduction 8, steps
     * k = 0..8 (copy 2, gemv_n, axpby 3, gemv_n, bi-orthogonalisation,
     * gemv_t, update 6): 434 passes per cycle of 10 mat-vecs */
    kr_iter_model h = model("idr", 9, 30, 1000, KR_PC_DIAGONAL, 50);
    ck_assert_double_eq(h.pcs, 1);
    ck_assert_double_eq_tol(h.vectors, 434.0 / 10, 1e-12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("iter_model");
    TCase *tc = tcase_create("iter_model");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, every_method_has_a_model);
    tcase_add_test(tc, cg_counts);
    tcase_add_test(tc, bicgstab_counts);
    tcase_add_test(tc, gmres_counts);
    tcase_add_test(tc, idr_counts);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
