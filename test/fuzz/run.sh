#!/bin/sh
# Runs each libFuzzer target of BUILD/fuzz for SECONDS from its seeds
# (test/fuzz/corpus/TARGET, read-only; what a run adds goes to
# BUILD/fuzz-corpus/TARGET). A crash, sanitizer report, leak or timeout is
# copied to test/fuzz/regress/TARGET/ and fails the run: commit the file,
# and test_fuzz_replay (make test) replays it until it is fixed.
#   sh test/fuzz/run.sh BUILD SECONDS
set -u
build=$1
seconds=$2
status=0
for bin in "$build"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    work="$build/fuzz-corpus/$name"
    art="$build/fuzz-artifacts/$name"
    log="$build/fuzz-logs/$name.log"
    mkdir -p "$work" "$art" "$build/fuzz-logs"
    dict=""
    case $name in
    fuzz_mtx | fuzz_blocks) dict="-dict=test/fuzz/mtx.dict" ;;
    fuzz_options) dict="-dict=test/fuzz/options.dict" ;;
    esac
    start=$(date +%s)
    # -rss_limit_mb: readers refuse sizes beyond memory; 2 GB is plenty
    # for inputs of at most 64 KB. One job: the CI machine has 2 cores.
    "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" \
        $dict "$work" "test/fuzz/corpus/$name" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $name: ${execs:-?} inputs in $(($(date +%s) - start)) s," \
        "exit $rc"
    if [ "$rc" -ne 0 ]; then
        status=1
        mkdir -p "test/fuzz/regress/$name"
        for f in "$art"/*; do
            [ -f "$f" ] || continue
            cp "$f" "test/fuzz/regress/$name/"
            echo "fuzz: $name: saved test/fuzz/regress/$name/$(basename "$f")"
        done
        tail -n 60 "$log"
    fi
done
exit $status
