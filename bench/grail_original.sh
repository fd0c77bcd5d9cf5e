#!/bin/sh
# Our one-core GRAIL index against the original GRAIL (the authors' C++,
# zakimjz/grail: `make`, then `grail G.gra -test Q -dim 5`), issue 17's
# "no slower" condition, in one run on the same graphs and the same
# uniformly random pairs: citeseer and uniprotenc_22m, d = 5, RUNS (3)
# runs of each program, interleaved. Prints a Markdown table (min / median
# / max over the runs) and checks that both programs give the same answer
# to every pair, the random ones and a set of edge pairs with many "yes".
#   GRAIL_BIN=/path/to/grail [GRAIL_COMMIT=c13a736] \
#       sh bench/grail_original.sh [BUILD]
# Environment: KRYLOV_GRAPHS (default ../shared/graphs), QUERIES (100000),
# SEED (1: the pairs and our labels' traversals), RUNS (3).
set -eu
build=${1:-build}
bin="$build/krylov"
grail=${GRAIL_BIN:?set GRAIL_BIN to the original GRAIL binary}
graphs=${KRYLOV_GRAPHS:-../shared/graphs}
nq=${QUERIES:-100000}
seed=${SEED:-1}
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cores=$(getconf _NPROCESSORS_ONLN)
export OMP_NUM_THREADS=1
status=0

# "min / median / max" of the numbers on stdin, with the printf format $1
spread() {
    sort -g | awk -v f="$1" '{a[NR] = $1}
        END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
              printf f " / " f " / " f, a[1], m, a[NR] }'
}

median() { spread %.6f | awk -F' / ' '{print $2}'; }

# "u v c" lines from "u v ..." lines, c the column's value or $2's answer
# file's line; no newline after the last line: the original reads its test
# file while not at end of file, and would repeat a last query followed by
# a newline.
grail_queries() { # pairs third-column [answers]
    awk -v c="$2" -v ans="${3:-}" '
        { if (ans != "") { getline c < ans }
          printf "%s%s %s %s", (NR > 1 ? "\n" : ""), $1, $2, c }' "$1"
}

# One run of the original: "scc_ms label_ms query_ms reachable queries".
# It reads the graph, condenses its SCCs ("merging time", timed), levels
# it, reads the queries, builds the labels ("construction time", timed
# alone) and answers the queries in one timed loop that also counts them
# against the third column: with 0 there, the failures are its "yes".
grail_run() { # graph queries
    "$grail" "$1" -test "$2" -dim 5 >"$tmp/grail.out"
    awk -F'[:/ ]+' '
        /^merging time:/ { scc = $3 }
        /^#construction time:/ { lab = $3 }
        /^#total query running time:/ { q = $5 }
        /^Success Rate/ { ok = $3; all = $4 }
        END { print scc, lab, q, all - ok, all }' "$tmp/grail.out"
}

# One run of ours: "scc_s label_s query_s reachable queries" from the
# first one-core row of `krylov reach --bench` (queries: best of its 3
# passes over the batch).
krylov_run() { # graph queries
    "$bin" reach "$1" --queries "$2" --bench --threads 1 --labels 5 \
        --seed "$seed" >"$tmp/krylov.out"
    awk -F'|' '
        /^queries:/ { split($0, w, /[:, ]+/); n = w[2]; r = w[3] }
        /^\| cpu/ && !row { row = 1; s = $5; l = $6; q = $7 }
        END { print s + 0, l + 0, q + 0, r, n }' "$tmp/krylov.out"
}

# Pairs (u, first child c), (c, u) and (u, first child of c) of about
# 10,000 vertices u spread over the graph: many of them reachable.
edge_pairs() { # graph
    awk 'FNR == 2 { step = int($1 / 10000); if (step < 1) step = 1 }
        FNR <= 2 { next }
        NR == FNR { if (NF > 2) first[FNR - 3] = $2; next }
        (FNR - 3) % step == 0 && NF > 2 {
            u = FNR - 3; c = $2
            printf "%d %d\n%d %d\n", u, c, c, u
            if (c in first) printf "%d %d\n", u, first[c] }' "$1" "$1"
}

# Both programs' answers to every pair of $2: ours as the original's third
# column, which counts the pairs where it answers the same.
same_answers() { # graph pairs name
    cut -d' ' -f1,2 "$2" >"$tmp/check.txt"
    "$bin" reach "$1" --queries "$tmp/check.txt" --threads 1 --labels 5 \
        --seed "$seed" >"$tmp/ours.txt"
    grail_queries "$tmp/check.txt" 0 "$tmp/ours.txt" >"$tmp/check.q"
    "$grail" "$1" -test "$tmp/check.q" -dim 5 >"$tmp/check.out"
    total=$(wc -l <"$tmp/ours.txt")
    yes=$(grep -c '^1$' "$tmp/ours.txt" || true)
    agree=$(sed -n 's,^Success Rate \([0-9]*\)/\([0-9]*\).*,\1/\2,p' "$tmp/check.out")
    if [ "$agree" = "$total/$total" ]; then
        echo "- $3: $total pairs, $yes reachable: the same answer to every pair"
    else
        echo "- $3: $total pairs, $yes reachable by ours: **the original agrees on $agree**"
        return 1
    fi
}

cpu=$(awk -F': ' '/^model name/ && !m { m = $2 } /^cpu family/ && !f { f = $2 }
    /^model\t/ && !n { n = $2 } END { print m " (family " f ", model " n ")" }' /proc/cpuinfo)
echo "# One-core GRAIL index: krylov against the original GRAIL"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $cpu, $cores cores;" \
    "load before: $(cut -d' ' -f1-3 /proc/loadavg);" \
    "krylov $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "original GRAIL ${GRAIL_COMMIT:-commit unknown}; d = 5, $nq random" \
    "pairs (seed $seed), $runs runs of each program, interleaved."
echo
echo "| graph | program | SCCs s | labeling s (min / median / max) |" \
    "queries ms (min / median / max) | reachable |"
echo "|---|---|---:|---|---|---:|"
: >"$tmp/summary"
: >"$tmp/checks"
for g in citeseer.scc uniprotenc_22m.scc; do
    zcat "$graphs/$g.gra.gz" >"$tmp/g.gra"
    "$bin" reach "$tmp/g.gra" --random "$nq" --seed "$seed" --threads 1 \
        >"$tmp/pairs.txt"
    grail_queries "$tmp/pairs.txt" 0 >"$tmp/q.txt"
    : >"$tmp/grail.runs"
    : >"$tmp/krylov.runs"
    for _ in $(seq "$runs"); do
        grail_run "$tmp/g.gra" "$tmp/q.txt" >>"$tmp/grail.runs"
        krylov_run "$tmp/g.gra" "$tmp/q.txt" >>"$tmp/krylov.runs"
    done
    for p in grail krylov; do
        f="$tmp/$p.runs"
        # the original reports ms, ours s
        if [ "$p" = grail ]; then name="original GRAIL (-dim 5)" to_s=0.001
        else name="krylov, 1 core" to_s=1; fi
        scc=$(awk -v k="$to_s" '{print $1 * k}' "$f" | median)
        lab=$(awk -v k="$to_s" '{print $2 * k}' "$f" | spread %.3f)
        qry=$(awk -v k="$to_s" '{print $3 * 1000 * k}' "$f" | spread %.2f)
        reach=$(awk '{print $4 "/" $5}' "$f" | sort -u | tr '\n' ' ')
        printf '| %s | %s | %.3f | %s | %s | %s|\n' "$g" "$name" "$scc" \
            "$lab" "$qry" "$reach"
    done
    if [ "$(awk '{print $4, $5}' "$tmp/grail.runs" "$tmp/krylov.runs" |
        sort -u | wc -l)" -ne 1 ]; then
        status=1
    fi
    awk -v g="$g" 'NR == FNR { gl[FNR] = $2 / 1000; gq[FNR] = $3; next }
        { kl[FNR] = $2; kq[FNR] = $3 * 1000 }
        END { printf "- %s, ours over the original (median of the per-run ratios, " \
                  "run k against run k): labeling %.1fx, queries %.1fx\n", g,
                  mid(gl, kl, FNR), mid(gq, kq, FNR) }
        function mid(a, b, n,   i, j, r, t) {
            for (i = 1; i <= n; i++) r[i] = a[i] / b[i]
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
            return n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }' \
        "$tmp/grail.runs" "$tmp/krylov.runs" >>"$tmp/summary"
    same_answers "$tmp/g.gra" "$tmp/pairs.txt" "$g, the random pairs" \
        >>"$tmp/checks" || status=1
    edge_pairs "$tmp/g.gra" >"$tmp/edges.txt"
    same_answers "$tmp/g.gra" "$tmp/edges.txt" "$g, edge pairs" \
        >>"$tmp/checks" || status=1
done
echo
cat "$tmp/summary"
echo
echo "Answers (ours as the original's expected column; its \"Success Rate\"):"
cat "$tmp/checks"
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
