/* Baseline for the CPU benchmark: PETSc KSP on the 3D 7-point Poisson
 * matrix (the same matrix as `krylov gen poisson3d:N`: diagonal 6,
 * neighbours -1, lexicographic order), b = A*ones, x0 = 0, stopping on the
 * unpreconditioned residual relative to ||b||, as krylov does.
 * Usage: petsc_poisson N [-ksp_type cg|bcgs|gmres] [-pc_type jacobi] ...
 * Prints one line: "petsc <ksp> <pc> n=<n> its=<k> solve_s=<t> per_it_ms=<t>".
 */
#include <petscksp.h>
#include <stdlib.h>

static PetscErrorCode assemble(PetscInt N, Mat *A)
{
    PetscInt n = N * N * N;
    PetscFunctionBeginUser;
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 7, NULL, A));
    for (PetscInt k = 0; k < N; k++)
        for (PetscInt j = 0; j < N; j++)
            for (PetscInt i = 0; i < N; i++) {
                PetscInt row = i + N * (j + N * k), cols[7], c = 0;
                PetscScalar v[7];
                if (k > 0) cols[c] = row - N * N, v[c++] = -1;
                if (j > 0) cols[c] = row - N, v[c++] = -1;
                if (i > 0) cols[c] = row - 1, v[c++] = -1;
                cols[c] = row, v[c++] = 6;
                if (i < N - 1) cols[c] = row + 1, v[c++] = -1;
                if (j < N - 1) cols[c] = row + N, v[c++] = -1;
                if (k < N - 1) cols[c] = row + N * N, v[c++] = -1;
                PetscCall(MatSetValues(*A, 1, &row, c, cols, v, INSERT_VALUES));
            }
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    Mat A;
    Vec x, b, ones;
    KSP ksp;
    PetscInt N = argc > 1 ? atoi(argv[1]) : 64, its;
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(assemble(N, &A));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(x, &ones));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMult(A, ones, b));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, 0.0, 1e5, 10000));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    PetscLogDouble t0, t1;
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    KSPType type;
    PC pc;
    PCType pctype;
    PetscCall(KSPGetType(ksp, &type));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetType(pc, &pctype));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "petsc %s %s n=%d its=%d solve_s=%.4f "
                          "per_it_ms=%.3f\n",
                          type, pctype, (int)(N * N * N), (int)its, t1 - t0,
                          its ? 1e3 * (t1 - t0) / its : 0.0));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&ones));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFinalize());
    return 0;
}
