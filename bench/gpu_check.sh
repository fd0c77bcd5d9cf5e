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

echo "== solves, CPU (16 threads) vs GPU"
for dev in cpu cuda; do
    for m in cg bicgstab idr gmres; do
        build/krylov solve --gen poisson3d:128 --method $m --precond jacobi \
            --device $dev --json >"$OUT/solve-$dev-$m.json" 2>&1
        echo "$dev $m exit $?: $(cat "$OUT/solve-$dev-$m.json" | head -c 600)"
    done
done | tee "$OUT/solves.txt"
