#!/bin/sh
# The GPU check-and-bench on the lent GPU machine, written under $OUT:
#   tests    device facts, every test program (GPU tests against the CPU
#            reference included) and `make demo`
#   spmv     krylov bench spmv on the default set (shared matrices and the
#            large generated ones), every format, auto against the best
#   spmm     krylov bench spmm on the default set, k = 4,8,16,32, the
#            formats with their own SpMM kernels and auto, five row orders,
#            against cusparseSpMM (SPMM_FORMATS, SPMM_ORDERS change them);
#            SPMM_LARGE=DIR adds a run on DIR/*.mtx (matrices-large)
#   gje      krylov bench gje: batched Gauss-Jordan against cuBLAS, and the
#            block-Jacobi stages per matrix
#   solve    krylov bench solve on poisson3d:160 (csr, ellr, auto x methods)
#   bjacobi  bench/bjacobi_table.sh: block-Jacobi against Jacobi on every
#            shared matrix (IDR(4), GMRES(30), BiCGSTAB)
#   profile  Nsight Compute on the power-law SpMV (vsr and cuSPARSE)
#   sanitize compute-sanitizer memcheck over the test programs with GPU
#            tests, racecheck and synccheck over those whose kernels use
#            shared memory or warp synchronisation; the error and hazard
#            counts in $OUT/sanitize-summary.md (for bench/results/), each
#            tool's log in $OUT/sanitize-TOOL-PROGRAM.log. Not in the
#            default list: ask for it (about 5-8 minutes).
#   devtests every test program again with KRYLOV_BUILD=device (every
#            format built by kernels; about 4 minutes; DEVTESTS names a
#            subset): what the default KR_BUILD_AUTO waits for
#   nrhs     bench solve --nrhs 16 on poisson3d:128 and elasticity3d:48,
#            CG and IDR(4), Jacobi and bjacobi (about 75 s)
#   grail    krylov reach --bench on issue 17's five graphs (needs the
#            graphs: .graphs carried, KRYLOV_GRAPHS; about 4 minutes);
#            GRAIL_QUERIES=warp times the warp-per-query GPU search
#   setup    host build against device build (--build host|device) of the
#            setup (CSR upload, format build, Jacobi) on poisson3d:160, the
#            large generated set and the shared matrices, CG + Jacobi, one
#            iteration; FORMATS (default "auto csr hyb") picks the formats.
#            The device build's "upload" is the pinned upload of the CSR
#            arrays the issue's target (setup <= 2x it) is measured against
#   train    bench/spmm_train.sh: the row-order predictor's training data
#            (bench spmm --json per matrix, k = 4..32, every format and
#            row order, generated families and the shared matrices) under
#            $OUT/spmm-train, and the tree trained and evaluated on it; on
#            request, about 3-5 minutes (BUDGET_S caps it, default 300 s)
#   small    per-iteration times on the shared matrices with nnz >= 1e5,
#            GPU against the CPU backend at 16 threads (Jacobi, 4 methods),
#            and the setup of poisson3d:160 (jacobi; bjacobi, whose JSON
#            gives the upload of A)
# Usage: sh bench/gpu_check.sh [PART ...]   (no PART: all, which takes
# longer than one 10-minute device command: run them in two or three calls)
# Expects a CUDA build in build/ (made here, `make test-build`, and carried;
# BUILD=DIR names another folder holding krylov, test/ and examples/, e.g.
# a stripped copy, and then the demo runs its command line instead of
# `make demo`) and the matrices, gzipped, in .matrices/ (carried): see
# bench/README.md.
set -u
OUT=${OUT:-/tmp/krylov-gpu-out}
mkdir -p "$OUT"
for f in .matrices/*.mtx.gz; do
    [ -f "${f%.gz}" ] || gunzip -kf "$f"
done
export KRYLOV_MATRICES="$PWD/.matrices"
# The graphs of ../shared/graphs, gzipped as they are, when carried in .graphs
[ -d .graphs ] && export KRYLOV_GRAPHS="$PWD/.graphs"
# The GPU machine has no PETSc: the PETSc comparison is not run there (its
# tests skip visibly without krylov-petsc; CI runs them).
build=${BUILD:-build}
rm -f "$build/krylov-petsc"
parts=${*:-tests spmv gje solve bjacobi profile}

part_tests() {
    {
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
            --format=csv
        date -u +%Y-%m-%dT%H:%M:%SZ
    } >"$OUT/device.txt" 2>&1
    cat "$OUT/device.txt"
    echo "== tests"
    sh test/run_tests.sh "$build" "$build"/test/test_* >"$OUT/tests.log" 2>&1
    echo "tests exit $?"
    grep -E '^([0-9]+%|tests:|FAIL)|:F:|:E:' "$OUT/tests.log" | tail -n 30
    echo "== make demo"
    if [ "$build" = build ]; then
        make demo >"$OUT/demo.txt" 2>&1
    else # the command of the Makefile's demo target
        "$build/krylov" solve --gen poisson3d:64 --method idr --precond jacobi \
            --device auto >"$OUT/demo.txt" 2>&1
    fi
    echo "demo exit $?"
    tail -n 25 "$OUT/demo.txt"
}

part_spmv() {
    echo "== bench spmv (default set: shared matrices + large generated)"
    "$build/krylov" bench spmv --device cuda --reps 100 --json "$OUT/spmv.json" \
        >"$OUT/spmv.md" 2>&1
    echo "bench spmv exit $?"
    grep -iE "geometric|^\| (poisson|powerlaw)" "$OUT/spmv.md" | head -n 40
    sed -n '/^## Automatic choice/,$p' "$OUT/spmv.md"
}

part_spmm() {
    echo "== bench spmm (default set, every k against cusparseSpMM)"
    "$build/krylov" bench spmm --device cuda \
        --formats "${SPMM_FORMATS:-pellr,vsr,hyb,auto}" \
        --permute "${SPMM_ORDERS:-none,plain,lpt,cta,lpt-warp}" \
        --json "$OUT/spmm.json" >"$OUT/spmm.md" 2>&1
    echo "bench spmm exit $?"
    sed -n '/^## Geometric-mean/,$p' "$OUT/spmm.md"
    # ../shared/matrices-large unpacked into a folder (SPMM_LARGE): the
    # issue's large set, rectangular ones included (about 2 minutes)
    [ -n "${SPMM_LARGE:-}" ] || return 0
    "$build/krylov" bench spmm "$SPMM_LARGE"/*.mtx --device cuda \
        --formats "${SPMM_FORMATS:-pellr,vsr,hyb,auto}" \
        --permute "${SPMM_ORDERS:-none,plain,lpt,cta,lpt-warp}" \
        --json "$OUT/spmm-large.json" >"$OUT/spmm-large.md" 2>&1
    echo "bench spmm (large) exit $?"
    sed -n '/^## Geometric-mean/,$p' "$OUT/spmm-large.md"
}

part_gje() {
    echo "== bench gje"
    "$build/krylov" bench gje --device cuda --json "$OUT/gje.json" \
        >"$OUT/gje.md" 2>&1
    echo "bench gje exit $?"
    grep -E "^\| (k =|mix)" "$OUT/gje.md"
}

part_solve() {
    echo "== bench solve, poisson3d:160, Jacobi"
    : >"$OUT/solve.md"
    : >"$OUT/solve.jsonl"
    for f in csr ellr auto; do
        for m in cg bicgstab idr gmres; do
            "$build/krylov" bench solve --gen poisson3d:160 --device cuda \
                --method $m --format $f --reps 3 --maxit 5000 \
                --json /tmp/solve.json >>"$OUT/solve.md" 2>&1
            echo "bench solve $f $m exit $?"
            cat /tmp/solve.json >>"$OUT/solve.jsonl"
            echo >>"$OUT/solve.jsonl"
        done
    done
    grep -E "^\| poisson" "$OUT/solve.md"
}

part_bjacobi() {
    echo "== block-Jacobi against Jacobi on the shared matrices"
    TIMEOUT=${TIMEOUT:-30} RESULTS="$OUT" sh bench/bjacobi_table.sh "$build" cuda \
        >"$OUT/bjacobi.log" 2>&1
    echo "bjacobi table exit $?"
    grep -iE "solve|succe|matrices" "$OUT"/bjacobi-vs-jacobi-*.md | tail -n 20
}

part_profile() {
    echo "== Nsight Compute: power-law SpMV, vsr and cuSPARSE"
    for f in vsr csr; do
        k=k_vsr_chunks
        [ $f = csr ] && k='regex:[Cc]sr|[Ss]p[Mm][Vv]'
        ncu --clock-control none -k "$k" --launch-skip 5 --launch-count 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis \
            "$build/krylov" bench spmv --gen powerlaw:2000000 --formats $f \
            --device cuda --reps 20 >"$OUT/ncu-powerlaw-$f.txt" 2>&1
        echo "ncu $f exit $?"
        grep -E "^  [a-z_]|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Memory Throughput" \
            "$OUT/ncu-powerlaw-$f.txt" | head -n 12
    done
}

# One tool over one test program (no fork, so the tool sees every
# kernel), bounded by SANITIZE_TIMEOUT seconds; appends a summary row.
sanitize_one() {
    tool=$1
    prog=$2
    log="$OUT/sanitize-$tool-$prog.log"
    start=$(date +%s)
    CK_FORK=no KRYLOV_BIN="$PWD/$build/krylov" timeout "${SANITIZE_TIMEOUT:-150}" \
        "$sanitizer" --tool "$tool" --error-exitcode 99 \
        "$build/test/$prog" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" |
        awk '{s += $1} END {print s + 0}')
    hazards=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' \
        "$log" | awk '{s += $1} END {print s + 0}')
    checks=$(grep -E '^[0-9]+%: Checks: ' "$log" | tail -n 1)
    note=""
    [ "$rc" = 124 ] && note="timed out after ${SANITIZE_TIMEOUT:-150} s"
    echo "| $tool | $prog | $rc | $errors | $hazards | $secs | ${checks:-no Check summary} $note |" \
        >>"$OUT/sanitize-summary.md"
    echo "$tool $prog: exit $rc, $errors errors, $hazards hazards, $secs s"
}

part_sanitize() {
    echo "== compute-sanitizer"
    sum="$OUT/sanitize-summary.md"
    sanitizer=$(command -v compute-sanitizer)
    for d in "${CUDA_HOME:-/usr/local/cuda}" /usr/local/cuda; do
        [ -n "$sanitizer" ] && break
        [ -x "$d/compute-sanitizer/compute-sanitizer" ] &&
            sanitizer="$d/compute-sanitizer/compute-sanitizer"
        [ -x "$d/bin/compute-sanitizer" ] && sanitizer="$d/bin/compute-sanitizer"
    done
    if [ -z "$sanitizer" ]; then
        echo "compute-sanitizer not found (PATH, CUDA_HOME)" | tee "$sum"
        return
    fi
    {
        echo "# compute-sanitizer over the GPU test programs"
        echo
        head -n 1 "$OUT/device.txt" 2>/dev/null
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
        "$sanitizer" --version | tail -n 1
        date -u +%Y-%m-%dT%H:%M:%SZ
        echo
        echo "Exit 0 and 0 errors / hazards is clean; exit 99 is an error the"
        echo "tool found (see sanitize-TOOL-PROGRAM.log), 124 a timeout."
        echo
        echo "| tool | program | exit | errors | hazards | seconds | tests |"
        echo "|---|---|---|---|---|---|---|"
    } >"$sum"
    # SANITIZE_MEMCHECK and SANITIZE_RACE name other programs (empty: none),
    # so that the whole set can be split over two device calls.
    for prog in ${SANITIZE_MEMCHECK-test_gpu test_gje_batch test_bjacobi \
        test_bjacobi_cond test_vsr test_ellr test_auto test_solvers \
        test_breakdown test_ksp test_graph test_allocfail test_spmm}; do
        [ -x "$build/test/$prog" ] && sanitize_one memcheck "$prog"
    done
    # Shared memory and warp-synchronous code: the batched Gauss-Jordan
    # kernels, VSR's segmented scan, the reductions (test_gpu), the
    # reachability index's level sweeps and query bits (test_graph), the
    # SpMM's staged rows (test_spmm).
    for prog in ${SANITIZE_RACE-test_gje_batch test_vsr test_gpu test_graph \
        test_spmm}; do
        [ -x "$build/test/$prog" ] || continue
        sanitize_one racecheck "$prog"
        sanitize_one synccheck "$prog"
    done
    cat "$sum"
}

part_small() {
    echo "== bench solve: shared matrices with nnz >= 1e5, GPU and CPU (16 threads)"
    mats=""
    for m in bcsstk16 bcsstk18 bcsstk38 crystm01 memplus nasa4704; do
        mats="$mats $KRYLOV_MATRICES/$m.mtx"
    done
    for m in cg idr bicgstab gmres; do
        for d in cuda cpu; do
            # shellcheck disable=SC2086 # $mats is a list of paths
            "$build/krylov" bench solve $mats --device $d --threads 16 \
                --method $m --reps 5 --maxit 20000 --copy-mb 256 \
                --json "$OUT/small-$m-$d.json" >"$OUT/small-$m-$d.md" 2>&1
            echo "bench solve $m $d exit $?"
            grep -E "^\| /" "$OUT/small-$m-$d.md" | cut -d'|' -f2,5,8,9,11 |
                sed "s|$KRYLOV_MATRICES/||"
        done
    done
    echo "== setup of poisson3d:160 (cg)"
    for pc in jacobi bjacobi; do
        "$build/krylov" bench solve --gen poisson3d:160 --device cuda \
            --method cg --precond $pc --reps 3 --json "$OUT/setup-$pc.json" \
            >"$OUT/setup-$pc.md" 2>&1
        echo "bench solve poisson3d:160 $pc exit $?"
        grep -E "^\| poisson" "$OUT/setup-$pc.md"
        grep -E '"(setup_s|matrix_build_s|precond_build_s|precond_upload_s)"' \
            "$OUT/setup-$pc.json"
    done
}

part_setup() {
    echo "== setup: host build against device build (cg, jacobi, 1 iteration)"
    for b in host device; do
        for f in ${FORMATS:-auto csr hyb}; do
            # shellcheck disable=SC2086 # the matrix list is a list of paths
            "$build/krylov" bench solve --gen poisson3d:160 \
                --gen poisson3d27:110 --gen powerlaw:2000000 \
                "$KRYLOV_MATRICES"/*.mtx --device cuda --build $b --format $f \
                --method cg --precond jacobi --maxit 1 --reps 3 \
                --json "$OUT/setup-$b-$f.json" >"$OUT/setup-$b-$f.md" 2>&1
            echo "bench solve --build $b --format $f exit $?"
            # matrix, setup ms, the note's stages
            grep -E "^\| (poisson|powerlaw|/)" "$OUT/setup-$b-$f.md" |
                awk -F'|' '{print $2 "|" $8 "|" $15}' |
                sed "s|$KRYLOV_MATRICES/||"
        done
    done
}

part_train() {
    echo "== SpMM row-order predictor: training data and tree"
    KRYLOV="$build/krylov" OUT="$OUT/spmm-train" \
        MATRICES="$KRYLOV_MATRICES" sh bench/spmm_train.sh
}

# The test programs with GPU tests again, every format built on the device
part_devtests() {
    echo "== tests with KRYLOV_BUILD=device"
    progs=""
    for t in ${DEVTESTS:-$(cd "$build/test" && ls test_*)}; do
        [ -x "$build/test/$t" ] && progs="$progs $build/test/$t"
    done
    # shellcheck disable=SC2086 # $progs is a list of paths
    KRYLOV_BUILD=device sh test/run_tests.sh "$build" $progs \
        >"$OUT/tests-devbuild.log" 2>&1
    echo "devbuild tests exit $?"
    grep -E '^(tests:|FAIL)|:F:|:E:' "$OUT/tests-devbuild.log" | tail -n 20
}

# 16 right-hand sides together against 16 single solves (issue 19)
part_nrhs() {
    echo "== bench solve --nrhs 16"
    for g in poisson3d:128 elasticity3d:48; do
        for m in cg idr; do
            for pc in jacobi bjacobi; do
                f="$OUT/nrhs-$(echo "$g" | tr ':' '_')-$m-$pc"
                "$build/krylov" bench solve --gen $g --device cuda --method $m \
                    --precond $pc --nrhs 16 --reps 3 --maxit 5000 \
                    --json "$f.json" >"$f.md" 2>&1
                echo "nrhs $g $m $pc exit $?"
                grep -E "^\| (poisson|elast)" "$f.md" | tail -n 1
            done
        done
    done
}

# The GRAIL index on issue 17's five graphs (d = 5, 100,000 queries), GPU
# against one core and all cores in one process per graph (3-4 minutes)
part_grail() {
    echo "== krylov reach --bench"
    g=${KRYLOV_GRAPHS:-../shared/graphs}
    for G in "$g/citeseer.scc.gra.gz" "$g/uniprotenc_22m.scc.gra.gz" \
        --gen=dag:250000,50 --gen=dag:1000000,50 --gen=dag:1000000,100; do
        name=$(echo "$G" | sed 's,^--gen=,,; s,.*/,,; s,[:,],_,g')
        # shellcheck disable=SC2046 # --gen=SPEC becomes two words
        "$build/krylov" reach $(echo "$G" | sed 's,^--gen=,--gen ,') --bench \
            --random 100000 --seed 1 --gpu-queries "${GRAIL_QUERIES:-bits}" \
            >"$OUT/grail-$name.md" 2>&1
        echo "reach $name exit $?"
        grep -E "^\| " "$OUT/grail-$name.md"
    done
}

all_parts="tests devtests spmv spmm gje solve bjacobi profile small sanitize \
setup train nrhs grail"
for p in $parts; do
    case " $all_parts " in
    *" $p "*) "part_$p" ;;
    *) echo "unknown part '$p' ($all_parts)" ;;
    esac
done
