#!/bin/sh
# Training data for the SpMM row-order predictor (issue 19): runs
# `krylov bench spmm --json` on each training matrix, one process per
# matrix (a failure loses one matrix, not the run), for k = 4, 8, 16, 32,
# every row order and the formats, and writes one JSON file per matrix
# under $OUT (default bench/results/spmm-train), then trains and evaluates
# the tree (bench/spmm_train.py) on what it gathered.
#
#   bench/spmm_train.sh                 # on the GPU machine: the full set
#   SET=smoke DEVICE=cpu bench/spmm_train.sh   # the pipeline on a CPU
#
# Settings (environment): KRYLOV (the command, default build/krylov), OUT,
# DEVICE (cuda), SET (full | smoke), KS (4,8,16,32), FORMATS
# (csr,ellr,pellr,vsr,hyb), ORDERS (every row order), REPS (20), WARMUP
# (3), BUDGET_S (300: no matrix is started after this many seconds),
# MATRICES (folder of .mtx files, default $KRYLOV_MATRICES or
# ../shared/matrices).
#
# Time on an H100, estimated: the device does little (23 SpMMs per k of
# 10..300 us each); the host's build of each (format, order) choice
# dominates: measured on the 2-core development host, 0.3..0.4 s per choice
# (0.17 s of it the row order) for banded:200000,16,3 (3.4e6 nonzeros),
# about linear in nnz. The generated matrices below have nnz <= 2e6 (about
# 6e7 in all), so 35 choices cost about 3 s per 1e6 nonzeros, about 3
# minutes for the 42 generated matrices plus well under a minute for the
# 30 shared ones (all small) and the process starts; the 16-core GPU host
# should be faster. BUDGET_S (300 s) starts no matrix after it, so the
# run ends within about 5 minutes whatever the host; the shared matrices
# go first so a cut loses generated ones. Training takes seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
KRYLOV=${KRYLOV:-$root/build/krylov}
OUT=${OUT:-$root/bench/results/spmm-train}
DEVICE=${DEVICE:-cuda}
SET=${SET:-full}
KS=${KS:-4,8,16,32}
FORMATS=${FORMATS:-csr,ellr,pellr,vsr,hyb}
ORDERS=${ORDERS:-none,plain,flipped,lpt,warp,cta,lpt-warp}
REPS=${REPS:-20}
WARMUP=${WARMUP:-3}
BUDGET_S=${BUDGET_S:-300}
MATRICES=${MATRICES:-${KRYLOV_MATRICES:-$root/../shared/matrices}}

# Generated families with varied parameters (data/gen.c documents each).
full_gens() {
    for spec in 100000,4,1.2 100000,4,2.5 100000,10,1.2 100000,10,1.5 \
        100000,10,3 300000,6,1.5 300000,6,2 50000,30,1.5 50000,30,2.5 \
        200000,2,1.5; do
        echo "powerlaw:$spec"
    done
    for spec in 300000,1 300000,4,1 300000,4,2 200000,8 100000,16,3 \
        50000,32 25000,64,5; do
        echo "banded:$spec"
    done
    for spec in 100000,4,1 60000,4,6 80000,8,2 30000,8,6,4 40000,16,2 \
        25000,16,4,2 30000,32,1 100000,2,8; do
        echo "blocks:$spec"
    done
    for spec in 200000,1 200000,2 100000,4 100000,8 50000,16; do
        echo "arrow:$spec"
    done
    for spec in poisson2d:300 poisson2d:600 poisson3d:40 poisson3d:64 \
        poisson3d27:32 poisson3d27:40 convdiff2d:400,1 convdiff2d:400,100 \
        convdiff2d:600 elasticity3d:16 elasticity3d:24 elasticity3d:32; do
        echo "$spec"
    done
}

smoke_gens() {
    echo powerlaw:3000,5
    echo powerlaw:3000,12,1.2
    echo powerlaw:2000,20,3
    echo banded:4000,2
    echo banded:3000,12,2
    echo blocks:3000,4,3
    echo blocks:2000,8,1
    echo arrow:3000,2
    echo poisson2d:50
    echo elasticity3d:6
    echo convdiff2d:50,50
    echo poisson3d27:12
}

run_one() { # bench spmm's matrix and --json arguments
    "$KRYLOV" bench spmm "$@" --device "$DEVICE" --k "$KS" \
        --formats "$FORMATS" --permute "$ORDERS" --reps "$REPS" \
        --warmup "$WARMUP" >/dev/null
}

mkdir -p "$OUT" || exit 1
start=$(date +%s)
n=0
failed=0
matrix() { # $1: the name for the file; the rest: bench spmm's arguments
    name=$1
    shift
    now=$(date +%s)
    if [ $((now - start)) -ge "$BUDGET_S" ]; then
        echo "spmm_train: budget of $BUDGET_S s spent; $name and later skipped"
        return
    fi
    file="$OUT/$(printf '%s' "$name" | tr ':,/' '___').json"
    run_one "$@" --json "$file"
    rc=$?
    if [ $rc -eq 0 ]; then
        n=$((n + 1))
        echo "spmm_train: $name done at $(($(date +%s) - start)) s"
    else
        failed=$((failed + 1))
        rm -f "$file"
        echo "spmm_train: $name FAILED (exit $rc)"
    fi
}

if [ "$SET" = smoke ]; then
    gens=$(smoke_gens)
else
    gens=$(full_gens)
fi
if [ "$SET" != smoke ]; then
    for f in "$MATRICES"/*.mtx; do
        [ -e "$f" ] && matrix "$(basename "$f" .mtx)" "$f"
    done
fi
for g in $gens; do
    matrix "$g" --gen "$g"
done
echo "spmm_train: $n matrices timed, $failed failed, $(($(date +%s) - start)) s; JSON under $OUT"
if ! command -v python3 >/dev/null; then
    echo "spmm_train: no python3 here; train elsewhere with"
    echo "  python3 bench/spmm_train.py $OUT --report predictor.md --c row_order_model.c"
    exit 0
fi
python3 "$here/spmm_train.py" "$OUT" --report "$OUT/predictor.md" \
    --c "$OUT/row_order_model.c"
echo "spmm_train: the tree is $OUT/row_order_model.c; after review copy it"
echo "  to spmv/row_order_model.c (GPU timings only) and rebuild"
