/* Byte models of one iteration (tools/bench/bench_model.h): the method
 * counts its own passes (kr_solver_ops.iter_model), this file adds what
 * one preconditioner application moves. */
#include "tools/bench/bench_model.h"

#include "solver/solver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *pc_model(kr_pc_kind pc, double *vectors)
{
    if (pc == KR_PC_IDENTITY) {
        *vectors = 2;
        return "preconditioner none: copy z = r, 2 passes";
    }
    if (pc == KR_PC_DIAGONAL) {
        *vectors = 3;
        return "diagonal preconditioner (jacobi): d and r read, z written, "
               "3 passes";
    }
    *vectors = 2;
    return "preconditioner: r read and z written, 2 passes; its own data is "
           "not counted, so the floor is low";
}

int bench_iter_model_make(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                          int iterations, bench_iter_model *m)
{
    memset(m, 0, sizeof *m);
    const kr_solver_ops *ops = kr_solver_find(o->method);
    if (!ops || !ops->iter_model) {
        m->spmvs = m->pcs = m->vectors = NAN;
        snprintf(m->text, sizeof m->text, "no byte model for method '%s'",
                 o->method ? o->method : "(null)");
        return -1;
    }
    kr_iter_model it;
    memset(&it, 0, sizeof it);
    ops->iter_model(o, n, pc, iterations, &it);
    m->spmvs = it.spmvs;
    m->pcs = it.pcs;
    m->vectors = it.vectors;
    const char *pct = pc_model(pc, &m->pc_vectors);
    if (m->pcs > 0) /* CG fuses a diagonal preconditioner: counted above */
        snprintf(m->text, sizeof m->text, "%s; %s", it.text, pct);
    else
        snprintf(m->text, sizeof m->text, "%s", it.text);
    return 0;
}

double bench_iter_bytes(const bench_iter_model *m, double spmv_bytes, int32_t n)
{
    return m->spmvs * spmv_bytes +
           8.0 * n * (m->vectors + m->pcs * m->pc_vectors);
}
