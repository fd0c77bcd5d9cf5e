#!/bin/sh
# Block-Jacobi against Jacobi on real matrices: for every .mtx in
# $KRYLOV_MATRICES (default ../shared/matrices), `krylov bench solve` with
# IDR(4), GMRES(30) and BiCGSTAB, each with --precond jacobi and --precond
# bjacobi, rtol 1e-9, maxit 50000, b = A*ones, x0 = 0: one warm-up run (the
# setup and at most 100 iterations, untimed, so that loading the GPU
# kernels is not counted) and then the timed solve(s), medians of $REPS.
# Beside bjacobi's setup share it gives the setup floor bench solve
# measured in the same process (setup_floor_s: one kernel launch plus one
# 8-byte download, synchronised; none on the CPU) and, where the share is
# over 5%, setup / floor, with a count of those setups within 2x and 10x
# of it. Writes a Markdown table and summary counts to
# $RESULTS/bjacobi-vs-jacobi-DEVICE-DATE.md and prints it.
#
# Usage: sh bench/bjacobi_table.sh BUILD [DEVICE]
#   BUILD    the build folder holding krylov (e.g. build)
#   DEVICE   cuda, cpu or auto (default auto); the file is named after the
#            device the solves ran on (cuda or cpu)
# Environment:
#   KRYLOV_MATRICES  the folder of .mtx files (default ../shared/matrices)
#   TIMEOUT          seconds one solve may take (default 60); a solve cut
#                    off is recorded as "timeout"
#   RESULTS          output folder (default bench/results)
#   THREADS          CPU threads (default 0: the OpenMP default)
#   REPS             timed solves per (matrix, method, preconditioner),
#                    medians reported (default 1)
#   SHORT_S, SHORT_REPS
#                    a solve whose setup + solve took under SHORT_S
#                    seconds (default 0.05) is run again with SHORT_REPS
#                    timed solves (default 7) and that run's medians are
#                    reported: on such solves the setup is a sizeable
#                    share, and one timing of a 0.1 ms setup moves by
#                    10-20% between runs (0 = never)
#   COPY_MB          MB of the copy-bandwidth measurement each bench
#                    solve makes (default 0: bench solve's default for the
#                    device; tests pass 1 to stay quick)
#   JOBS             matrices solved at once (default 1); more finish
#                    sooner but share the device, so their times mean
#                    little: use it for the success counts only
#
# Success = converged, true relative residual <= 1e-9, within 50,000
# iterations. Jacobi refuses a matrix with a zero diagonal entry: recorded
# as "refused: zero diagonal". Singular diagonal blocks get scalar Jacobi
# (bjacobi's default); their count is in the table. A solve that restarted
# from x after a residual gap (--gap-restarts, default 3) or after a
# breakdown (--breakdown-restarts, default 3) says so in its note.
set -u
build=${1:?usage: sh bench/bjacobi_table.sh BUILD [DEVICE]}
device=${2:-auto}
krylov="$build/krylov"
dir=${KRYLOV_MATRICES:-../shared/matrices}
timeout_s=${TIMEOUT:-60}
results=${RESULTS:-bench/results}
threads=${THREADS:-0}
jobs=${JOBS:-1}
reps=${REPS:-1}
short_s=${SHORT_S:-0.05}
short_reps=${SHORT_REPS:-7}
copy_mb=${COPY_MB:-0}
rtol=1e-9
maxit=50000

[ -x "$krylov" ] || { echo "no $krylov (build first)" >&2; exit 2; }
[ -d "$dir" ] || { echo "no folder $dir (set KRYLOV_MATRICES)" >&2; exit 2; }
to=""
command -v timeout >/dev/null 2>&1 && to="timeout $timeout_s"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# The value of "KEY" in the JSON of the last solve (one key per line).
field() {
    printf '%s\n' "$json" | sed -n "s/^  \"$1\": //p" | sed 's/,$//; s/^"//; s/"$//'
}

# Seconds with 4 significant digits, "-" when absent.
secs() { awk -v v="$1" 'BEGIN { if (v == "" || v == "-") print "-"; else printf "%.4g", v }'; }

# Why a solve that gave no result failed, from its stderr.
failure() {
    if grep -Eq 'zero diagonal|diagonal entry .* zero' "$err"; then
        echo "refused: zero diagonal"
    else
        msg=$(grep -m 1 'failed: \|error: ' "$err" || head -n 1 "$err")
        echo "error: $(printf '%s' "$msg" | sed 's/^.*failed: //; s/^krylov: error: //; s/|/\\|/g' | cut -c1-100)"
    fi
}

# `krylov bench solve` with REPS timed solves; sets rc and json.
bench_once() { # matrix method precond reps
    rm -f "$jf"
    # shellcheck disable=SC2086 # $to and $mopt are lists of words
    $to "$krylov" bench solve "$1" --method "$2" $mopt --precond "$3" \
        --rtol $rtol --maxit $maxit --device "$device" --threads "$threads" \
        --reps "$4" --warmup 1 --copy-mb "$copy_mb" --json "$jf" \
        >/dev/null 2>"$err"
    rc=$?
    json=$(cat "$jf" 2>/dev/null)
}

# One solve; sets its, pset (precond build s), pup (of it the upload of A,
# bjacobi only), sfloor (the setup floor, "" on the CPU), solve, ok, note,
# blocks, singular.
run_solve() { # matrix method precond
    case $2 in
    idr) mopt="--s 4" ;;
    gmres) mopt="--restart 30" ;;
    *) mopt="" ;;
    esac
    jf="$err.json"
    bench_once "$1" "$2" "$3" "$reps"
    if [ "$rc" -eq 0 ] && [ "$short_reps" -gt "$reps" ] &&
        awk -v a="$(field precond_build_s)" -v b="$(field solve_s)" -v s="$short_s" \
            'BEGIN { exit !(a != "" && b != "" && a + b < s + 0) }'; then
        bench_once "$1" "$2" "$3" "$short_reps"
    fi
    its=- pset=- pup="" sfloor="" solve=- ok=no note="" blocks="" singular=""
    if [ -n "$to" ] && [ "$rc" -eq 124 ]; then
        note="timeout (${timeout_s} s)"
        return
    fi
    if [ "$rc" -ne 0 ] || [ "$(field status)" != ok ]; then
        note=$(failure)
        return
    fi
    [ -s "$tmp/device" ] || field device >"$tmp/device"
    its=$(field iterations)
    pset=$(field precond_build_s)
    pup=$(field precond_upload_s)
    # null on the CPU, absent from older builds' JSON
    sfloor=$(field setup_floor_s | sed 's/^null$//')
    solve=$(field solve_s)
    blocks=$(field precond_blocks)
    singular=$(field precond_singular_blocks)
    conv=$(field reason | sed -n 's/^CONVERGED.*/true/p')
    ok=$(awk -v c="$conv" -v r="$(field true_relative_residual)" \
        -v i="$its" -v t=$rtol -v m=$maxit \
        'BEGIN { print (c == "true" && r != "null" && r + 0 <= t + 0 && i + 0 <= m) ? "yes" : "no" }')
    if [ "$ok" = no ] && [ "$conv" = true ]; then
        note="converged, but true rel. residual $(field true_relative_residual)"
    elif [ "$ok" = no ]; then
        note=$(field reason)
    fi
    # restarts from x after a residual gap (absent from older builds' JSON)
    restarts=$(field true_residual_restarts)
    if [ "${restarts:-0}" -gt 0 ]; then
        note="${note:+$note, }$restarts true-residual restart(s)"
    fi
    # restarts from x after a breakdown (absent from older builds' JSON)
    restarts=$(field breakdown_restarts)
    if [ "${restarts:-0}" -gt 0 ]; then
        note="${note:+$note, }$restarts breakdown restart(s)"
    fi
}

row() { # matrix-path method
    name=$(basename "$1")
    run_solve "$1" "$2" jacobi
    j_its=$its j_ok=$ok j_note=$note
    j_time=$(awk -v a="$pset" -v b="$solve" 'BEGIN { if (b == "-") print "-"; else print a + b }')
    run_solve "$1" "$2" bjacobi
    share=$(awk -v a="$pset" -v b="$solve" 'BEGIN { if (b == "-") print "-"; else printf "%.1f%%", 100 * a / (a + b) }')
    floor=$(secs "${sfloor:--}")
    # setup / floor where the share is over 5%: how far from one launch
    # plus one download such a setup is
    over=$(awk -v a="$pset" -v s="${share%\%}" -v f="$sfloor" \
        'BEGIN { if (s == "-" || s + 0 <= 5 || f == "" || f + 0 <= 0) print "-";
                 else printf "%.6g", a / f }')
    overtxt=$(awk -v r="$over" 'BEGIN { if (r == "-") print "-";
        else printf (r < 10 ? "%.1fx floor" : "%.0fx floor"), r }')
    upshare=$(awk -v u="$pup" -v a="$pset" -v b="$solve" 'BEGIN { if (b == "-" || u == "") print "-"; else printf "%.1f%%", 100 * u / (a + b) }')
    speedup=$(awk -v j="$j_time" -v a="$pset" -v b="$solve" -v jo="$j_ok" -v bo="$ok" \
        'BEGIN { if (jo == "yes" && bo == "yes") printf "%.2f", j / (a + b); else print "-" }')
    bl="-"
    [ -n "$blocks" ] && bl="$blocks ($singular)"
    n=$(sed -n '/^[^%]/{p;q}' "$1" | awk '{print $1}')
    notes=""
    [ -n "$j_note" ] && notes="jacobi: $j_note"
    [ -n "$note" ] && notes="${notes:+$notes; }bjacobi: $note"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
        "$name" "$n" "$2" "$j_its" "$(secs "$j_time")" "$j_ok" "$its" \
        "$(secs "$pset")" "$(secs "$solve")" "$ok" "$share" "$floor" \
        "$overtxt" "$upshare" "$speedup" "$bl" "$notes" >>"$tmp/body.$idx"
    echo "$name $2 $j_ok $ok ${share%\%} ${upshare%\%} $over" >>"$tmp/counts.$idx"
}

# The three methods on matrix number $1 (zero-padded, so the parts sort in
# order), path $2; its own stderr file, so jobs may run at once.
matrix_rows() {
    idx=$1 err="$tmp/err.$1"
    for meth in idr gmres bicgstab; do
        echo "[$1/$total] $(basename "$2") $meth" >&2
        row "$2" "$meth"
    done
}

# Per method and overall: solves by each preconditioner, both, either only.
summary() {
    awk '
    { m[$2] = 1; t[$2]++; j[$2] += $3 == "yes"; b[$2] += $4 == "yes";
      if ($4 == "yes" && $5 != "-") {
          nok++
          if ($5 + 0 <= 5) low++
          else {
              if ($6 != "-") { upfull += $6 + 0 > 5; uphalf += $6 + 0 > 2.5 }
              if ($7 != "-") { floored++; in2 += $7 + 0 <= 2; in10 += $7 + 0 <= 10 }
          }
      }
      both[$2] += $3 == "yes" && $4 == "yes";
      jm[$1] = jm[$1] || $3 == "yes"; bm[$1] = bm[$1] || $4 == "yes"; mats[$1] = 1 }
    END {
      print "| method | matrices | jacobi solves | bjacobi solves | both | jacobi only | bjacobi only | neither |"
      print "|---|---|---|---|---|---|---|---|"
      split("idr gmres bicgstab", order, " ")
      for (k = 1; k <= 3; k++) {
        x = order[k]; if (!(x in m)) continue
        printf "| %s | %d | %d | %d | %d | %d | %d | %d |\n", x, t[x], j[x], b[x], both[x],
               j[x] - both[x], b[x] - both[x], t[x] - j[x] - b[x] + both[x]
        T += t[x]; J += j[x]; B += b[x]; BO += both[x]
      }
      printf "| all (matrix, method) pairs | %d | %d | %d | %d | %d | %d | %d |\n", T, J, B, BO,
             J - BO, B - BO, T - J - B + BO
      for (x in mats) { M++; JM += jm[x]; BM += bm[x] }
      printf "\nMatrices solved by at least one method: jacobi %d, bjacobi %d, of %d.\n", JM, BM, M
      if (nok) {
          printf "\nbjacobi setup share <= 5%%: %d of %d successful solves; of the %d above, the upload of A alone is over 5%% in %d and over half of the 5%% in %d", low, nok, nok - low, upfull, uphalf
          if (floored) printf "; of the %d above with a setup floor, %d within 2x of it and %d within 10x.\n", floored, in2, in10
          else if (nok > low) print "; no setup floor in the JSON (none on the CPU, which launches nothing)."
          else print "."
      }
    }' "$tmp/counts"
}

set -- "$dir"/*.mtx
total=$#
i=0
running=0
for m in "$@"; do
    [ -f "$m" ] || continue
    i=$((i + 1))
    if [ "$jobs" -le 1 ]; then
        matrix_rows "$(printf '%04d' $i)" "$m"
        continue
    fi
    matrix_rows "$(printf '%04d' $i)" "$m" &
    running=$((running + 1))
    [ "$running" -lt "$jobs" ] || { wait; running=0; }
done
wait
cat "$tmp"/counts.* >"$tmp/counts" 2>/dev/null
cat "$tmp"/body.* >"$tmp/body" 2>/dev/null
[ -s "$tmp/counts" ] || { echo "no .mtx files in $dir" >&2; exit 2; }
dev_name=$(cat "$tmp/device" 2>/dev/null)

case $device:$dev_name in
cpu:* | auto:cpu*) kind=cpu ;;
*) kind=cuda ;;
esac
date=$(date -u +%Y-%m-%d)
took=$(($(date +%s) - start))
mkdir -p "$results"
out="$results/bjacobi-vs-jacobi-$kind-$date.md"
{
    echo "## Block-Jacobi vs Jacobi: ${dev_name:-$device}, $date"
    echo
    echo "\`krylov bench solve\` ($("$krylov" --version 2>/dev/null | head -n 1)) on every matrix of $dir; b = A*ones, x0 = 0, rtol $rtol, maxit $maxit; per (matrix, method, preconditioner) one untimed warm-up (the setup and at most 100 iterations) and then the median of $reps timed solve(s)$([ "$short_reps" -gt "$reps" ] && [ "$short_s" != 0 ] && echo ", or of $short_reps (a second run) where setup + solve took under $short_s s"); IDR(4), GMRES(30), BiCGSTAB; bjacobi: supervariable blocks up to 32 rows, singular blocks replaced by scalar Jacobi (blocks column: count (singular)). Success (ok) = converged with true relative residual <= $rtol within $maxit iterations. Times in seconds: jacobi time = its preconditioner build + solve; bjacobi setup = its preconditioner build (precond_build_seconds, the matrix build excluded for both); share = setup / (setup + solve); floor = the setup floor bench solve measured in the same process (setup_floor_s: one kernel launch plus one 8-byte download, synchronised, median of 50; '-' on the CPU, which launches nothing); setup / floor = bjacobi setup over that floor, where the setup share is over 5% ('-' elsewhere); upload share = the part of the setup that copied A to the GPU (precond_upload_s), over setup + solve; speedup = jacobi time / bjacobi (setup + solve), where both succeed. Solves cut off after $timeout_s s are 'timeout'. The run took $took s with JOBS = $jobs (matrices solved at once)$([ "$jobs" -gt 1 ] && echo ': the times are distorted by the sharing')."
    echo
    echo "| matrix | n | method | jacobi its | jacobi time | jacobi ok | bjacobi its | bjacobi setup | bjacobi solve | bjacobi ok | setup share | floor | setup / floor | upload share | speedup | blocks | note |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    cat "$tmp/body"
    echo
    summary
} >"$tmp/table.md"
mv "$tmp/table.md" "$out.tmp" && mv "$out.tmp" "$out"
cat "$out"
echo "wrote $out (took $took s)" >&2
