#!/bin/sh
# SCCs: Tarjan on the host against forward-backward with trimming (fwbw)
# on one core, all cores and the GPU, in one run per graph: the figures to
# set KR_SCC_GPU_MIN_EDGES (graph/scc.h, provisionally 2^22 edges) and the
# pass budgets (kr_fwbw_cpu_steps, kr_fwbw_cuda_steps,
# KR_SCC_GPU_LEVEL_PASSES) from. Prints a Markdown table; the SCC column
# of `krylov reach --bench` (components and numbering, no condensation).
#   sh bench/scc_gpu.sh [BUILD]
set -eu
build=${1:-build}
bin="$build/krylov"
graphs=${KRYLOV_GRAPHS:-../shared/graphs}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" gen poisson3d:100 -o "$tmp/poisson3d_100.mtx" >/dev/null
"$bin" gen convdiff2d:1000 -o "$tmp/convdiff2d_1000.mtx" >/dev/null
inputs="$graphs/citeseer.scc.gra.gz $graphs/uniprotenc_22m.scc.gra.gz
--gen=dag:250000,50 --gen=dag:1000000,50 --gen=dag:1000000,100
$tmp/poisson3d_100.mtx $tmp/convdiff2d_1000.mtx"
echo "| graph | device | scc | SCCs s | SCCs by |"
echo "|---|---|---|---:|---|"
for g in $inputs; do
    for scc in tarjan fwbw; do
        # rows "| device | SCCs s | SCCs by | ..." of the bench table
        "$bin" reach $g --bench --random 1000 --scc "$scc" 2>&1 |
            awk -F'|' -v g="$(echo "$g" | sed "s,^--gen=,,; s,.*/,,")" -v s="$scc" \
                '/^\| / && $2 !~ /device|---/ {
                    for (i = 2; i <= 4; i++) gsub(/^ +| +$/, "", $i)
                    printf "| %s | %s | %s | %s | %s |\n", g, $2, s, $3, $4 }'
    done
done
