/* krylov-petsc's two file modes, for tests that need PETSc itself to write
 * and read PETSc binary files (io/petsc_bin.c is checked against them):
 *
 *   krylov-petsc petsc-write (A.mtx | --gen SPEC) OUT.bin
 *     loads A as `krylov solve` does (on the CPU) and writes it with
 *     MatView, and b = A*ones (or -b FILE) with VecView to OUT.vec.bin
 *     (OUT.bin with its ".bin" replaced);
 *   krylov-petsc petsc-read [--entries] A.bin [V.bin]
 *     loads A with MatLoad (and V with VecLoad) and prints sizes, nonzeros
 *     and checksums, and with --entries every entry, all with %.17g.
 *
 * Not listed in `krylov --help`: they exist for the test suite. */
#ifndef KR_DRIVERS_PETSC_BINIO_H
#define KR_DRIVERS_PETSC_BINIO_H

/* argc, argv after the mode's name; return an exit code. */
int pbin_write(int argc, char **argv);
int pbin_read(int argc, char **argv);

#endif
