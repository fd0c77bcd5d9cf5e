/* krylov-petsc petsc-write / petsc-read (drivers/petsc/binio.h): PETSc's
 * own MatView/VecView and MatLoad/VecLoad on krylov's problems, so the
 * tests check io/petsc_bin.c against the library rather than against our
 * reading of its file format. PETSc's messages go to stderr; stdout holds
 * only the lines printed here. */
#include "drivers/petsc/binio.h"

#include "drivers/options.h"
#include "drivers/solve.h"
#include "krylov.h"

#include <petscmat.h>
#include <stdlib.h>
#include <string.h>

/* A binary viewer on path (no .info file beside it). */
static PetscErrorCode open_viewer(const char *path, PetscFileMode mode,
                                  PetscViewer *v)
{
    PetscFunctionBeginUser;
    PetscCall(PetscViewerCreate(PETSC_COMM_SELF, v));
    PetscCall(PetscViewerSetType(*v, PETSCVIEWERBINARY));
    PetscCall(PetscViewerFileSetMode(*v, mode));
    PetscCall(PetscViewerBinarySetSkipInfo(*v, PETSC_TRUE));
    PetscCall(PetscViewerFileSetName(*v, path));
    PetscFunctionReturn(0);
}

/* A as SeqAIJ through MatSetValues, row by row, as a PETSc user builds it;
 * PetscInt copies of the indices in case PetscInt is 64-bit. */
static PetscErrorCode fill_mat(const kr_csr *A, Mat M)
{
    PetscInt *cols;
    PetscFunctionBeginUser;
    PetscCall(PetscMalloc1(A->nnz + 1, &cols));
    for (PetscInt k = 0; k < A->nnz; k++)
        cols[k] = A->colind[k];
    for (PetscInt i = 0; i < A->nrows; i++) {
        PetscInt a = A->rowptr[i], len = A->rowptr[i + 1] - a;
        PetscCall(
            MatSetValues(M, 1, &i, len, cols + a, A->val + a, INSERT_VALUES));
    }
    PetscCall(PetscFree(cols));
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

static PetscErrorCode write_mat(const kr_csr *A, const char *path)
{
    Mat M;
    PetscViewer v;
    PetscInt *len;
    PetscFunctionBeginUser;
    PetscCall(PetscMalloc1(A->nrows + 1, &len));
    for (PetscInt i = 0; i < A->nrows; i++)
        len[i] = A->rowptr[i + 1] - A->rowptr[i];
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, A->nrows, A->ncols, 0, len, &M));
    PetscCall(PetscFree(len));
    PetscCall(fill_mat(A, M));
    PetscCall(open_viewer(path, FILE_MODE_WRITE, &v));
    PetscCall(MatView(M, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatDestroy(&M));
    PetscFunctionReturn(0);
}

static PetscErrorCode write_vec(const double *h, PetscInt n, const char *path)
{
    Vec x;
    PetscViewer v;
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &x));
    PetscCall(VecGetArrayWrite(x, &a));
    if (n > 0) memcpy(a, h, (size_t)n * sizeof *a);
    PetscCall(VecRestoreArrayWrite(x, &a));
    PetscCall(open_viewer(path, FILE_MODE_WRITE, &v));
    PetscCall(VecView(x, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(VecDestroy(&x));
    PetscFunctionReturn(0);
}

/* out with its ".bin" replaced by ".vec.bin" (appended when it has none);
 * malloc'ed. */
static char *vec_path(const char *out)
{
    size_t n = strlen(out);
    if (n >= 4 && !strcmp(out + n - 4, ".bin")) n -= 4;
    char *p = malloc(n + sizeof ".vec.bin");
    if (p) {
        memcpy(p, out, n);
        strcpy(p + n, ".vec.bin");
    }
    return p;
}

/* Loads the problem from args (those of `krylov solve`, on the CPU). */
static int load(int argc, char **argv, solve_opts *o, solve_run *r)
{
    const char *matrix = NULL;
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) return CLI_EXIT_DEVICE;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    args[argc] = "--device";
    args[argc + 1] = "cpu";
    int rc = cli_solve_parse("petsc-write", argc + 2, args, o, &matrix);
    free(args);
    if (rc == CLI_EXIT_HELP)
        return cli_usage_error("petsc-write", "usage: krylov-petsc "
                                              "petsc-write (A.mtx | --gen "
                                              "SPEC) OUT.bin");
    if (rc) return rc;
    r->o = o;
    r->name = matrix ? matrix : o->gen;
    return cli_solve_load(r);
}

int pbin_write(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("petsc-write", "usage: krylov-petsc "
                                              "petsc-write (A.mtx | --gen "
                                              "SPEC) OUT.bin");
    const char *out = argv[argc - 1];
    solve_opts o;
    solve_run r = {0};
    char *vpath = vec_path(out);
    int rc = vpath ? load(argc - 1, argv, &o, &r) : CLI_EXIT_DEVICE;
    if (!rc && PetscInitializeNoArguments()) {
        cli_error("PETSc failed to initialise (its message is above)");
        rc = CLI_EXIT_DEVICE;
    } else if (!rc) {
        if (write_mat(&r.A, out) || write_vec(r.b, r.A.nrows, vpath)) {
            cli_error("PETSc could not write %s (its message is above)", out);
            rc = CLI_EXIT_INPUT;
        }
        PetscFinalize();
    }
    if (!rc)
        printf("wrote %s (%d x %d, %d nonzeros) and %s\n", out, (int)r.A.nrows,
               (int)r.A.ncols, (int)r.A.nnz, vpath);
    free(vpath);
    cli_solve_free(&r);
    return rc;
}

/* ------------------------------------------------------------ petsc-read */

/* Rows, columns, nonzeros and sum of (i+1)(j+1)a_ij in row order, and with
 * entries each "i j a_ij" (0-based), as PETSc's MatGetRow gives them. */
static PetscErrorCode print_mat(Mat M, int entries)
{
    PetscInt m, n, nnz = 0, len;
    const PetscInt *cols;
    const PetscScalar *vals;
    double sum = 0.0;
    PetscFunctionBeginUser;
    PetscCall(MatGetSize(M, &m, &n));
    for (PetscInt i = 0; i < m; i++) {
        PetscCall(MatGetRow(M, i, &len, &cols, &vals));
        for (PetscInt k = 0; k < len; k++) {
            sum += (double)(i + 1) * (double)(cols[k] + 1) * vals[k];
            if (entries)
                printf("entry %d %d %.17g\n", (int)i, (int)cols[k], vals[k]);
        }
        nnz += len;
        PetscCall(MatRestoreRow(M, i, &len, &cols, &vals));
    }
    printf("rows %d\ncols %d\nnnz %d\nchecksum %.17g\n", (int)m, (int)n,
           (int)nnz, sum);
    PetscFunctionReturn(0);
}

static PetscErrorCode read_mat(const char *path, int entries)
{
    Mat M;
    PetscViewer v;
    PetscFunctionBeginUser;
    PetscCall(MatCreate(PETSC_COMM_SELF, &M));
    PetscCall(MatSetType(M, MATSEQAIJ));
    PetscCall(open_viewer(path, FILE_MODE_READ, &v));
    PetscCall(MatLoad(M, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(print_mat(M, entries));
    PetscCall(MatDestroy(&M));
    PetscFunctionReturn(0);
}

/* Length and sum of (i+1)v_i, and with entries each "i v_i". */
static PetscErrorCode read_vec(const char *path, int entries)
{
    Vec x;
    PetscViewer v;
    PetscInt n;
    const PetscScalar *a;
    double sum = 0.0;
    PetscFunctionBeginUser;
    PetscCall(VecCreate(PETSC_COMM_SELF, &x));
    PetscCall(VecSetType(x, VECSEQ));
    PetscCall(open_viewer(path, FILE_MODE_READ, &v));
    PetscCall(VecLoad(x, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(VecGetSize(x, &n));
    PetscCall(VecGetArrayRead(x, &a));
    for (PetscInt i = 0; i < n; i++) {
        sum += (double)(i + 1) * a[i];
        if (entries) printf("ventry %d %.17g\n", (int)i, a[i]);
    }
    PetscCall(VecRestoreArrayRead(x, &a));
    printf("vec_n %d\nvec_checksum %.17g\n", (int)n, sum);
    PetscCall(VecDestroy(&x));
    PetscFunctionReturn(0);
}

int pbin_read(int argc, char **argv)
{
    int entries = argc > 0 && !strcmp(argv[0], "--entries");
    argc -= entries;
    argv += entries;
    if (argc < 1 || argc > 2 || argv[0][0] == '-')
        return cli_usage_error("petsc-read", "usage: krylov-petsc petsc-read "
                                             "[--entries] A.bin [V.bin]");
    if (PetscInitializeNoArguments()) {
        cli_error("PETSc failed to initialise (its message is above)");
        return CLI_EXIT_DEVICE;
    }
    int rc = CLI_EXIT_OK;
    if (read_mat(argv[0], entries)) {
        cli_error("PETSc could not load %s (its message is above)", argv[0]);
        rc = CLI_EXIT_INPUT;
    } else if (argc == 2 && read_vec(argv[1], entries)) {
        cli_error("PETSc could not load %s (its message is above)", argv[1]);
        rc = CLI_EXIT_INPUT;
    }
    fflush(stdout);
    PetscFinalize();
    return rc;
}
