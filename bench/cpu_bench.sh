#!/bin/sh
# CPU benchmark: krylov against PETSc (same matrix, b = A*ones, x0 = 0,
# unpreconditioned residual, rtol 1e-8) on poisson3d:N, one thread.
# Usage: sh bench/cpu_bench.sh BUILD [N] [REPS]
# Writes a Markdown table to stdout and to bench/results/cpu-<date>.md.
set -eu
build=${1:-build}
N=${2:-64}
reps=${3:-5}
krylov="$build/krylov"
petsc="$build/bench/petsc_poisson"
export OMP_NUM_THREADS=1
if [ ! -x "$petsc" ] && pkg-config --exists PETSc 2>/dev/null &&
    command -v mpicc >/dev/null 2>&1; then
    mkdir -p "$build/bench"
    mpicc -O2 bench/petsc_poisson.c -o "$petsc" $(pkg-config --cflags --libs PETSc)
fi

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# krylov: "iterations per_it_ms" of one run
kr_run() {
    "$krylov" solve --gen "poisson3d:$N" --method "$1" --precond jacobi \
        --device cpu --threads 1 --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["iterations"], 1e3*r["seconds_per_iteration"])'
}

pe_run() {
    "$petsc" "$N" -ksp_type "$1" -pc_type jacobi |
        sed -E 's/.* its=([0-9]+) .* per_it_ms=([0-9.]+).*/\1 \2/'
}

row() { # method-for-krylov method-for-petsc
    kits="" kt="" pits="-" pt="-"
    for i in $(seq "$reps"); do kr_run "$1"; done >/tmp/kr_bench.$$
    kits=$(head -n 1 /tmp/kr_bench.$$ | cut -d' ' -f1)
    kt=$(cut -d' ' -f2 /tmp/kr_bench.$$ | median)
    if [ -x "$petsc" ]; then
        for i in $(seq "$reps"); do pe_run "$2"; done >/tmp/pe_bench.$$
        pits=$(head -n 1 /tmp/pe_bench.$$ | cut -d' ' -f1)
        pt=$(cut -d' ' -f2 /tmp/pe_bench.$$ | median)
    fi
    ratio=$(awk -v a="$kt" -v b="$pt" 'BEGIN { if (b == "-") print "-"; else printf "%.2f", a / b }')
    printf '| %s + jacobi | %s | %.3f | %s | %s | %s |\n' "$1" "$kits" "$kt" "$pits" "$pt" "$ratio"
    rm -f /tmp/kr_bench.$$ /tmp/pe_bench.$$
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
date=$(date -u +%Y-%m-%d)
out="bench/results/cpu-$date.md"
mkdir -p bench/results
{
    echo "## CPU: krylov vs PETSc, poisson3d:$N (n = $((N * N * N))), 1 thread"
    echo
    echo "$cpu, $date; PETSc $(pkg-config --modversion PETSc 2>/dev/null || echo absent); median of $reps runs; b = A*ones, x0 = 0, rtol 1e-8 on the unpreconditioned residual."
    echo
    echo "| method | krylov its | krylov ms/it | PETSc its | PETSc ms/it | krylov / PETSc |"
    echo "|---|---|---|---|---|---|"
    row cg cg
    row bicgstab bcgs
} | tee "$out"
