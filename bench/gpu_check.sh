#!/bin/sh
# The whole GPU check-and-bench in one call on the lent GPU machine:
# device facts, every test program (GPU tests against the CPU reference
# included), the demo, and a CPU-vs-GPU solve table, all written under $OUT.
# Expects a CUDA build in build/ (made here and carried) and the matrices,
# gzipped, in .matrices/ (carried): see bench/README.md.
set -u
OUT=${OUT:-/tmp/krylov-gpu-out}
mkdir -p "$OUT"
export KRYLOV_MATRICES="$PWD/.matrices"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
        --format=csv
    date -u +%Y-%m-%dT%H:%M:%SZ
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

# The GPU machine has no PETSc: the PETSc comparison is not run there (its
# tests skip visibly without krylov-petsc; CI runs them).
rm -f build/krylov-petsc

echo "== tests"
sh test/run_tests.sh build build/test/test_* >"$OUT/tests.log" 2>&1
echo "tests exit $?"
grep -E '^(SKIP|[0-9]+%|tests:|FAIL)' "$OUT/tests.log" | tail -n 30

echo "== make demo"
make demo >"$OUT/demo.txt" 2>&1
echo "demo exit $?"
cat "$OUT/demo.txt" | tail -n 25

echo "== bench spmv (default set: shared matrices + large generated)"
build/krylov bench spmv --device cuda --reps 100 --json "$OUT/spmv.json" \
    >"$OUT/spmv.md" 2>&1
echo "bench spmv exit $?"
grep -iE "geometric|^\| (poisson|powerlaw)" "$OUT/spmv.md" | head -n 40
# the automatic formats against each matrix's best
sed -n '/^## Automatic choice/,$p' "$OUT/spmv.md"

echo "== bench solve, poisson3d:160, Jacobi"
: >"$OUT/solve.md"
: >"$OUT/solve.jsonl"
for f in csr ellr auto; do
    for m in cg bicgstab idr gmres; do
        build/krylov bench solve --gen poisson3d:160 --device cuda --method $m \
            --format $f --reps 3 --maxit 5000 --json /tmp/solve.json \
            >>"$OUT/solve.md" 2>&1
        echo "bench solve $f $m exit $?"
        cat /tmp/solve.json >>"$OUT/solve.jsonl"
        echo >>"$OUT/solve.jsonl"
    done
done
grep -E "^\| poisson" "$OUT/solve.md"
