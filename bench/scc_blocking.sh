#!/bin/sh
# SCC-aware blocking against supervariable blocking for block-Jacobi on the
# reducible matrices of ../shared/matrices (more than one SCC), all four
# methods, on the CPU with one thread. Prints a Markdown table.
#   sh bench/scc_blocking.sh [BUILD] [DEVICE]
set -eu
build=${1:-build}
device=${2:-cpu}
dir=${KRYLOV_MATRICES:-../shared/matrices}
bin="$build/krylov"
mats="adder_dcop_32 bcsstk08 bcsstk14 bcsstk16 bcsstk18 cavity10 crystm01
fs_541_1 lnsp3937 memplus mhd4800b sherman1 sherman3 sherman5 utm5940"
field() { python3 -c "import json,sys; d=json.load(open('$1')); print(d.get('$2', ''))"; }
echo "| matrix | method | blocks sv / scc | iterations sv / scc | reason sv / scc | setup ms sv / scc | solve ms sv / scc |"
echo "|---|---|---|---|---|---|---|"
tmp=$(mktemp -d)
for m in $mats; do
    for method in cg bicgstab idr gmres; do
        for b in supervariable scc; do
            "$bin" solve "$dir/$m.mtx" --method "$method" --precond bjacobi \
                --blocking "$b" --device "$device" --threads 1 --json \
                >"$tmp/$b.json" 2>/dev/null || true
        done
        s="$tmp/supervariable.json" c="$tmp/scc.json"
        if [ ! -s "$s" ] || [ ! -s "$c" ]; then
            echo "| $m | $method | error | | | | |"
            continue
        fi
        ms() { python3 -c "import json; print('%.1f' % (1e3*json.load(open('$1'))['$2']))"; }
        echo "| $m | $method | $(field "$s" precond_blocks) / $(field "$c" precond_blocks) |" \
            "$(field "$s" iterations) / $(field "$c" iterations) |" \
            "$(field "$s" reason) / $(field "$c" reason) |" \
            "$(ms "$s" setup_seconds) / $(ms "$c" setup_seconds) |" \
            "$(ms "$s" solve_seconds) / $(ms "$c" solve_seconds) |"
    done
done
rm -rf "$tmp"
