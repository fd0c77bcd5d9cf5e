#!/usr/bin/env python3
"""Checks the true residual krylov reports against one computed independently
(SciPy) from the solution it writes, for every real matrix and method that
converges with Jacobi. b = A*ones (krylov's default without -b).

Usage: python3 bench/verify_residuals.py [BUILD] [MATRIX_DIR]
Writes a Markdown table to stdout and bench/results/residual-check-DATE.md."""
import datetime, json, os, subprocess, sys, tempfile
import numpy as np
import scipy.io

build = sys.argv[1] if len(sys.argv) > 1 else "build"
mdir = sys.argv[2] if len(sys.argv) > 2 else os.environ.get(
    "KRYLOV_MATRICES", "../shared/matrices")
krylov = os.path.join(build, "krylov")
methods = ["cg", "gmres", "idr", "bicgstab"]


def is_spd_candidate(path):
    with open(path) as f:
        return "symmetric" in f.readline().lower()


def run(path, method, xfile):
    cmd = [krylov, "solve", path, "--method", method, "--precond", "jacobi",
           "--maxit", "20000", "--device", "cpu", "-o", xfile, "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if not p.stdout.strip():
        why = "zero diagonal: Jacobi n/a" if "diagonal" in p.stderr else \
            "error: " + p.stderr.strip()[:60]
        return p.returncode, {"reason": why}
    return p.returncode, json.loads(p.stdout)


def independent_residual(A, xfile):
    x = np.asarray(scipy.io.mmread(xfile)).ravel()
    b = A @ np.ones(A.shape[1])
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


rows, agree, checked = [], 0, 0
tmp = tempfile.mkdtemp()
for name in sorted(f for f in os.listdir(mdir) if f.endswith(".mtx")):
    path = os.path.join(mdir, name)
    A = scipy.sparse.csr_matrix(scipy.io.mmread(path))
    for m in methods:
        if m == "cg" and not is_spd_candidate(path):
            continue
        xfile = os.path.join(tmp, "x.mtx")
        rc, rep = run(path, m, xfile)
        if rc != 0:
            rows.append((name, m, "-", rep["reason"], "-", "-", "-"))
            continue
        mine = independent_residual(A, xfile)
        rel = abs(mine - rep["true_relative_residual"]) / mine
        ok = rel < 5e-4
        checked += 1
        agree += ok
        rows.append((name, m, rep["iterations"], rep["reason"],
                     "%.4e" % rep["true_relative_residual"], "%.4e" % mine,
                     "yes" if ok else "NO (%.1e)" % rel))
        os.remove(xfile)

date = datetime.date.today().isoformat()
out = ["## True residual: krylov's report vs SciPy from the written x",
       "", f"{date}; Jacobi, rtol 1e-8, maxit 20000, b = A*ones, CPU backend. "
       "'3 digits' = relative difference below 5e-4.", "",
       "| matrix | method | its | reason | krylov true rel. res. | SciPy | 3 digits |",
       "|---|---|---|---|---|---|---|"]
out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
out += ["", f"{agree} of {checked} converged solves agree to 3 digits."]
text = "\n".join(out)
print(text)
os.makedirs("bench/results", exist_ok=True)
with open(f"bench/results/residual-check-{date}.md", "w") as f:
    f.write(text + "\n")
sys.exit(0 if agree == checked else 1)
