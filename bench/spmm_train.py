#!/usr/bin/env python3
"""Trains the SpMM row-order predictor (issue 19, after Mehrabi et al.).

Reads `krylov bench spmm --json` files, builds one sample per (matrix, k):
the matrix's SpMM features plus k, and the median time of every (format,
row order) the run timed. A cost-sensitive decision tree (CART with the
regret as its impurity: a node's cost is the least, over the choices, of
the summed log(time / the sample's best time)) maps the features to the
choice with the least regret. The tree is evaluated on matrices held out
of training (k-fold by matrix, never by row), then trained on every sample
and written as a C source file in the form spmv/predict.h reads, with the
data's provenance in its header comment. A leaf picks no row order that
was more than --guard (5%) slower than its format unpermuted on any of its
training samples (the issue's bound), so the leaf's cost can exceed the
unguarded least.

Plain Python 3, standard library only (no NumPy on the lent machines).

  bench/spmm_train.py OUT/*.json --c spmv/row_order_model.c \\
      --report bench/results/spmm-predictor-DEVICE-DATE.md

Only a tree trained on GPU timings belongs in spmv/row_order_model.c.
"""

import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import random
import sys

# The order of spmv/predict.c's feature_names (kr_predict_features).
STATS = ["row_nnz", "warp_nnz", "warp_imbalance", "row_blocks",
         "warp_blocks", "neighbour_distance"]
FEATURES = (["nrows", "ncols", "nnz", "density"] +
            ["%s.%s" % (s, m) for s in STATS for m in ("min", "mean", "max")] +
            ["k"])
BASELINE = ("csr", "none")
# A choice the run refused or did not time, for a sample, costs as much as
# being this many times slower than the sample's best.
MISSING_FACTOR = 100.0
META_FORMATS = ("auto", "auto-probe")  # they pick a format; not a choice


# ------------------------------------------------------------------ input

def feature_vector(entry, k):
    f = entry["features"]
    x = [float(entry["nrows"]), float(entry["ncols"]), float(entry["nnz"]),
         float(f["density"])]
    for s in STATS:
        for m in ("min", "mean", "max"):
            x.append(float(f[s][m]))
    x.append(float(k))
    return x


def usable(row):
    return (row.get("status") == "ok" and row.get("median_s") and
            not row.get("note", "").startswith("WRONG") and
            row["format"] not in META_FORMATS)


def read_runs(paths):
    """samples: {(matrix, k): {"x": [...], "t": {(format, order): s}}},
    and the provenance of each file."""
    samples, files = {}, []
    for path in paths:
        with open(path, "rb") as fh:
            raw = fh.read()
        run = json.loads(raw)
        files.append({"path": os.path.basename(path),
                      "sha256": hashlib.sha256(raw).hexdigest()[:16],
                      "device": run.get("device", "?"),
                      "date": run.get("date_utc", "?"),
                      "version": run.get("krylov_version", "?")})
        feats = {m["matrix"]: m for m in run.get("matrices", [])}
        for row in run.get("rows", []):
            if not usable(row) or row["matrix"] not in feats:
                continue
            key = (row["matrix"], int(row["k"]))
            s = samples.setdefault(
                key, {"x": feature_vector(feats[row["matrix"]], row["k"]),
                      "t": {}})
            choice = (row["format"], row["permutation"])
            old = s["t"].get(choice)
            s["t"][choice] = min(old, row["median_s"]) if old else \
                row["median_s"]
    return samples, files


# ------------------------------------------------------------------- tree

class Data:
    """Samples as parallel lists: features, per-choice cost rows."""

    def __init__(self, samples, choices):
        self.keys = sorted(samples)
        self.x = [samples[k]["x"] for k in self.keys]
        self.t = [samples[k]["t"] for k in self.keys]
        self.choices = choices
        self.cost = []
        for t in self.t:
            best = min(t.values())
            self.cost.append([math.log(t[c] / best) if c in t
                              else math.log(MISSING_FACTOR)
                              for c in choices])


def column_sums(cost, idx, nc):
    s = [0.0] * nc
    for i in idx:
        row = cost[i]
        for j in range(nc):
            s[j] += row[j]
    return s


def argmin(v, allowed=None):
    best = None
    for j, c in enumerate(v):
        if allowed is not None and j not in allowed:
            continue
        if best is None or c < v[best]:
            best = j
    return best


def best_split(data, idx, min_leaf):
    """(cost, feature, threshold) of the best split of idx, or None."""
    nc = len(data.choices)
    total = column_sums(data.cost, idx, nc)
    best = None
    for f in range(len(FEATURES)):
        order = sorted(idx, key=lambda i: data.x[i][f])
        left = [0.0] * nc
        for pos in range(len(order) - 1):
            row = data.cost[order[pos]]
            for j in range(nc):
                left[j] += row[j]
            a, b = data.x[order[pos]][f], data.x[order[pos + 1]][f]
            if a == b or pos + 1 < min_leaf or len(order) - pos - 1 < min_leaf:
                continue
            cost = min(left) + min(t - l for t, l in zip(total, left))
            if best is None or cost < best[0] - 1e-12:
                best = (cost, f, a + (b - a) / 2.0)
    return best


def safe(data, idx, c, guard):
    """c is never slower than its format unpermuted by more than guard on
    the samples idx (guard 0: no limit)."""
    if not guard or c[1] == "none":
        return True
    plain = (c[0], "none")
    return all(c in data.t[i] and (plain not in data.t[i] or
                                   data.t[i][c] <= guard * data.t[i][plain])
               for i in idx)


def leaf(data, idx, guard):
    nc = len(data.choices)
    sums = column_sums(data.cost, idx, nc)
    ok = {j for j, c in enumerate(data.choices) if safe(data, idx, c, guard)}
    node = {"leaf": True, "n": len(idx), "cost": min(sums),
            "choice": data.choices[argmin(sums, ok)], "by_format": {}}
    formats = sorted({c[0] for c in data.choices})
    for fmt in formats:
        allowed = {j for j in ok if data.choices[j][0] == fmt and
                   any(data.choices[j] in data.t[i] for i in idx)}
        if allowed:
            node["by_format"][fmt] = data.choices[argmin(sums, allowed)][1]
    return node


def grow(data, idx, depth, args):
    node = leaf(data, idx, args.guard)
    if depth >= args.depth or len(idx) < 2 * args.min_leaf:
        return node
    split = best_split(data, idx, args.min_leaf)
    if split is None or split[0] >= node["cost"] - 1e-9:
        return node
    _, f, thr = split
    left = [i for i in idx if data.x[i][f] <= thr]
    right = [i for i in idx if data.x[i][f] > thr]
    return {"leaf": False, "feature": f, "threshold": thr, "n": len(idx),
            "left": grow(data, left, depth + 1, args),
            "right": grow(data, right, depth + 1, args)}


def predict(node, x):
    while not node["leaf"]:
        node = node["left"] if x[node["feature"]] <= node["threshold"] \
            else node["right"]
    return node


def train(samples, keys, choices, args):
    data = Data({k: samples[k] for k in keys}, choices)
    return grow(data, list(range(len(data.keys))), 0, args)


# ------------------------------------------------------------- evaluation

def geomean(v):
    return math.exp(sum(math.log(a) for a in v) / len(v)) if v else float("nan")


def folds_by_matrix(samples, nfolds, seed):
    mats = sorted({m for m, _ in samples})
    random.Random(seed).shuffle(mats)
    return [set(mats[i::nfolds]) for i in range(nfolds)]


def evaluate(samples, choices, args):
    """Held-out results per sample: the pick's time against the oracle's,
    the baseline's and its format's in A's own order."""
    out = []
    for held in folds_by_matrix(samples, args.folds, args.seed):
        train_keys = [k for k in samples if k[0] not in held]
        if not train_keys or len(train_keys) == len(samples):
            continue
        tree = train(samples, train_keys, choices, args)
        for key in sorted(k for k in samples if k[0] in held):
            t = samples[key]["t"]
            pick = predict(tree, samples[key]["x"])["choice"]
            base = t.get(BASELINE)
            if base is None:
                continue
            t_pick = t.get(pick, base)  # untimed pick: counted as csr's
            t_plain = t.get((pick[0], "none"), base)
            t_none = min(v for c, v in t.items() if c[1] == "none")
            out.append({"matrix": key[0], "k": key[1], "pick": pick,
                        "oracle": min(t, key=t.get),
                        "speedup_pick": base / t_pick,
                        "speedup_oracle": base / min(t.values()),
                        "vs_unpermuted": t_pick / t_plain,
                        "vs_best_unpermuted": t_pick / t_none,
                        "untimed": pick not in t})
    return out


def summary(results):
    if not results:
        return {"samples": 0}
    share = [r["speedup_pick"] / r["speedup_oracle"] for r in results]
    worst = max(results, key=lambda r: r["vs_unpermuted"])
    return {
        "samples": len(results),
        "matrices": len({r["matrix"] for r in results}),
        "geomean_speedup_pick": geomean([r["speedup_pick"] for r in results]),
        "geomean_speedup_oracle": geomean([r["speedup_oracle"]
                                           for r in results]),
        "share_of_oracle": geomean([r["speedup_pick"] for r in results]) /
        geomean([r["speedup_oracle"] for r in results]),
        "worst_share": min(share),
        "worst_vs_unpermuted": worst["vs_unpermuted"],
        "worst_vs_unpermuted_at": "%s k=%d" % (worst["matrix"], worst["k"]),
        "slower_than_unpermuted_by_5pct": sum(r["vs_unpermuted"] > 1.05
                                              for r in results),
        "worst_vs_best_unpermuted": max(r["vs_best_unpermuted"]
                                        for r in results),
        "untimed_picks": sum(r["untimed"] for r in results),
    }


# ----------------------------------------------------------------- output

def flatten(tree):
    """Nodes in preorder (children after their parent)."""
    nodes = []

    def visit(node):
        at = len(nodes)
        nodes.append(node)
        if not node["leaf"]:
            node["_left"] = visit(node["left"])
            node["_right"] = visit(node["right"])
        return at
    visit(tree)
    return nodes


def c_str(s):
    return "NULL" if s is None else '"%s"' % s.replace("\\", "\\\\").replace(
        '"', '\\"')


def comment_text(text):
    return text.replace("*/", "* /")


def emit_c(tree, formats, symbol, provenance, lines):
    nodes = flatten(tree)
    # clang-format would reflow the report lines and the node rows
    out = ["/* clang-format off */",
           "/* Generated by bench/spmm_train.py; do not edit. The row-order",
           " * model of spmv/predict.h: a decision tree over the SpMM",
           " * features and k.", " *"]
    out += [" * " + comment_text(line) for line in lines]
    out += [" */", '#include "spmv/predict.h"', "",
            "static const char *const features[] = {"]
    out += ["    %s," % c_str(f) for f in FEATURES]
    out += ["};", "", "static const char *const formats[] = {"]
    out += ["    %s," % c_str(f) for f in formats]
    out += ["};", "", "static const kr_tree_node nodes[] = {"]
    for n in nodes:
        if n["leaf"]:
            out.append("    {-1, 0.0, 0, 0, %s, %s}, /* %d samples */" %
                       (c_str(n["choice"][0]), c_str(n["choice"][1]), n["n"]))
        else:
            out.append("    {%d, %r, %d, %d, NULL, NULL}, /* %s */" %
                       (n["feature"], n["threshold"], n["_left"],
                        n["_right"], FEATURES[n["feature"]]))
    out += ["};", "", "static const char *const format_orders[] = {"]
    for n in nodes:
        row = [c_str(n["by_format"].get(f)) if n["leaf"] else "NULL"
               for f in formats]
        out.append("    " + ", ".join(row) + ",")
    out += ["};", "",
            "const kr_tree_model %s = {" % symbol,
            "    %s," % c_str(provenance),
            "    %d, features, %d, formats, %d, nodes, format_orders," %
            (len(FEATURES), len(formats), len(nodes)),
            "};", "/* clang-format on */", ""]
    return "\n".join(out)


def write_checks(path, samples, tree):
    """One line per sample: the features (exact), then the tree's pick."""
    with open(path, "w") as fh:
        for key in sorted(samples):
            x = samples[key]["x"]
            pick = predict(tree, x)["choice"]
            fh.write(" ".join(repr(v) for v in x) +
                     " %s %s\n" % (pick[0], pick[1]))


def describe(tree, depth=0):
    pad = "  " * depth
    if tree["leaf"]:
        return ["%s-> %s/%s (%d samples)" % (pad, tree["choice"][0],
                                           tree["choice"][1], tree["n"])]
    lines = ["%sif %s <= %.6g:" % (pad, FEATURES[tree["feature"]],
                                   tree["threshold"])]
    lines += describe(tree["left"], depth + 1)
    lines.append("%selse:" % pad)
    lines += describe(tree["right"], depth + 1)
    return lines


def report_lines(files, samples, choices, stats, args):
    devices = sorted({f["device"] for f in files})
    dates = sorted({f["date"] for f in files})
    lines = ["trained %s UTC on %d samples (%d matrices x k) from %d files" %
             (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
              len(samples), len({m for m, _ in samples}), len(files)),
             "device: %s; runs dated %s to %s" %
             ("; ".join(devices), dates[0] if dates else "?",
              dates[-1] if dates else "?"),
             "choices: %d (format/order); depth <= %d, leaves >= %d "
             "samples, guard %g" % (len(choices), args.depth, args.min_leaf,
                                    args.guard),
             "held out (%d folds by matrix, seed %d):" % (args.folds,
                                                          args.seed)]
    for k in sorted(stats):
        v = stats[k]
        lines.append("  %s: %s" % (k, ("%.4g" % v) if isinstance(v, float)
                                   else v))
    lines.append("files:")
    for f in files:
        lines.append("  %s sha256:%s %s %s %s" % (f["path"], f["sha256"],
                                                  f["device"], f["date"],
                                                  f["version"]))
    return lines


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", nargs="+", help="bench spmm --json files or "
                   "folders of them")
    p.add_argument("--c", help="write the tree as C here")
    p.add_argument("--symbol", default="kr_row_order_model",
                   help="the C model's name (default %(default)s)")
    p.add_argument("--report", help="write the evaluation (markdown) here")
    p.add_argument("--checks", help="write each sample's features and the "
                   "final tree's pick here (for test_predict)")
    p.add_argument("--formats", help="only these formats' choices "
                   "(comma-separated; default: every format timed but auto)")
    p.add_argument("--guard", type=float, default=1.05,
                   help="a leaf picks no order that was slower than its "
                   "format unpermuted by more than this factor on any of "
                   "its training samples (0: no limit; default "
                   "%(default)s, the issue's 5%%)")
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--min-leaf", type=int, default=5)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    paths = []
    for a in args.json:
        paths += sorted(glob.glob(os.path.join(a, "*.json"))) \
            if os.path.isdir(a) else [a]
    samples, files = read_runs(paths)
    samples = {k: s for k, s in samples.items() if BASELINE in s["t"]}
    if not samples:
        sys.exit("spmm_train.py: no sample with a csr/none baseline in %s" %
                 ", ".join(paths))
    if args.formats:
        keep = set(args.formats.split(",")) | {BASELINE[0]}
        for s in samples.values():
            s["t"] = {c: v for c, v in s["t"].items() if c[0] in keep}
    choices = sorted({c for s in samples.values() for c in s["t"]})
    formats = sorted({c[0] for c in choices})
    results = evaluate(samples, choices, args)
    stats = summary(results)
    tree = train(samples, list(samples), choices, args)
    lines = report_lines(files, samples, choices, stats, args)
    lines += ["tree:"] + ["  " + t for t in describe(tree)]
    print("\n".join(lines))
    if args.c:
        prov = "%s, %d matrices, trained %s" % (
            "; ".join(sorted({f["device"] for f in files})),
            len({m for m, _ in samples}),
            datetime.datetime.utcnow().strftime("%Y-%m-%d"))
        with open(args.c, "w") as fh:
            fh.write(emit_c(tree, formats, args.symbol, prov, lines))
    if args.report:
        with open(args.report, "w") as fh:
            fh.write("# SpMM row-order predictor\n\n```\n%s\n```\n\n"
                     "| matrix | k | pick | oracle | pick speedup | oracle "
                     "speedup | vs its format unpermuted | vs the best "
                     "unpermuted |\n"
                     "|---|---|---|---|---|---|---|---|\n" % "\n".join(lines))
            for r in results:
                fh.write("| %s | %d | %s | %s | %.3f | %.3f | %.3f | %.3f |\n"
                         % (r["matrix"], r["k"], "/".join(r["pick"]),
                            "/".join(r["oracle"]), r["speedup_pick"],
                            r["speedup_oracle"], r["vs_unpermuted"],
                            r["vs_best_unpermuted"]))
    if args.checks:
        write_checks(args.checks, samples, tree)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
