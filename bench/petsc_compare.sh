#!/bin/sh
# CPU time per iteration, krylov's CPU backend over PETSc KSP at equal
# thread count (one), from `krylov compare-petsc --device cpu --threads 1
# --json`: CG and BiCGSTAB with Jacobi on poisson3d:64 and two real SPD
# matrices (same A, b = A*ones, x0 = 0, rtol 1e-8 on the unpreconditioned
# residual, both solved in the same process). Median of REPS runs of each.
# Usage: sh bench/petsc_compare.sh BUILD [REPS]
#   KRYLOV_MATRICES   folder of the real matrices (default ../shared/matrices)
#   PETSC_COMPARE_MATRICES  their names (default "bcsstk38 bcsstk16")
# Writes a Markdown table to stdout and bench/results/petsc-compare-DATE.md.
set -eu
build=${1:-build}
reps=${2:-5}
mdir=${KRYLOV_MATRICES:-../shared/matrices}
names=${PETSC_COMPARE_MATRICES:-bcsstk38 bcsstk16}
cores=$(nproc --all)
export OMP_NUM_THREADS=1
if [ ! -x "$build/krylov-petsc" ]; then
    echo "petsc_compare.sh: no $build/krylov-petsc (PETSc and mpicc needed)" >&2
    exit 1
fi

# "krylov_its petsc_its krylov_ms petsc_ms converged threads version"
one() {
    "$build/krylov" compare-petsc "$@" --precond jacobi --device cpu \
        --threads 1 --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r["krylov_converged"] and r["petsc_converged"]
print(r["krylov_iterations"], r["petsc_iterations"],
      1e3 * r["krylov_seconds_per_iteration"],
      1e3 * r["petsc_seconds_per_iteration"],
      "yes" if ok else "no", r["threads"], r["petsc_version"])' || true
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

row() { # label method problem-args...
    label=$1 method=$2
    shift 2
    tmp=$(mktemp)
    for i in $(seq "$reps"); do one "$@" --method "$method"; done >"$tmp"
    if [ ! -s "$tmp" ]; then
        echo "petsc_compare.sh: $label $method failed" >&2
        rm -f "$tmp"
        return
    fi
    set -- $(head -n 1 "$tmp")
    kits=$1 pits=$2 ok=$5 threads=$6 version=$7
    kt=$(cut -d' ' -f3 "$tmp" | median)
    pt=$(cut -d' ' -f4 "$tmp" | median)
    rm -f "$tmp"
    [ "$ok" = yes ] || label="$label (not converged)"
    echo "$threads $version" >"$meta"
    printf '| %s | %s + jacobi | %s | %s | %.4f | %.4f | %.2f |\n' "$label" \
        "$method" "$kits" "$pits" "$kt" "$pt" "$(echo "$kt $pt" | awk '{print $1 / $2}')"
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
date=$(date -u +%Y-%m-%d)
out="bench/results/petsc-compare-$date.md"
meta=$(mktemp)
rows=$(mktemp)
mkdir -p bench/results
for m in cg bicgstab; do
    row "poisson3d:64" $m --gen poisson3d:64
    for name in $names; do
        if [ -r "$mdir/$name.mtx" ]; then
            row "$name" $m "$mdir/$name.mtx"
        else
            echo "petsc_compare.sh: skipping $mdir/$name.mtx (not found)" >&2
        fi
    done
done >"$rows"
set -- $(cat "$meta") 1 unknown
{
    echo "## CPU time per iteration: krylov / PETSc, $1 thread(s) each"
    echo
    echo "$cpu ($cores cores), $date; PETSc $2; \`krylov compare-petsc --device cpu --threads $1\` (krylov csr format; PETSc SeqAIJ, one process); same A, b = A*ones, x0 = 0, rtol 1e-8 on the unpreconditioned residual; median of $reps runs. ratio = krylov ms/it / PETSc ms/it (target <= 1.0)."
    echo
    echo "| matrix | method | krylov its | PETSc its | krylov ms/it | PETSc ms/it | ratio |"
    echo "|---|---|---|---|---|---|---|"
    cat "$rows"
} | tee "$out"
rm -f "$meta" "$rows"
