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

echo "== tests"
sh test/run_tests.sh build build/test/test_* >"$OUT/tests.log" 2>&1
echo "tests exit $?"
grep -E '^(SKIP|[0-9]+%|tests:|FAIL)' "$OUT/tests.log" | tail -n 30

echo "== make demo"
make demo >"$OUT/demo.txt" 2>&1
echo "demo exit $?"
cat "$OUT/demo.txt" | tail -n 25

echo "== solves, CPU (16 threads) vs GPU: poisson3d:100, Jacobi"
summary='import json,sys; r=json.load(sys.stdin); print("%-8s %-40s its %5d %-15s true_rel %.2e setup %.4fs solve %.4fs per_it %.3fms" % (r["method"], r["device"], r["iterations"], r["reason"], r["true_relative_residual"], r["setup_seconds"], r["solve_seconds"], 1e3*r["seconds_per_iteration"]))'
for dev in cpu cuda; do
    for m in cg bicgstab idr gmres; do
        build/krylov solve --gen poisson3d:100 --method $m --precond jacobi \
            --maxit 3000 --device $dev --json 2>&1 | python3 -c "$summary"
    done
done | tee "$OUT/solves.txt"
