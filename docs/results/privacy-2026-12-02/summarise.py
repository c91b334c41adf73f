#!/usr/bin/env python3
"""Summarise results JSON of this study (standard library only).

usage: summarise.py [--md] FILE.results.json ...

Score of a run = the federation's best noise-free value in the function's own
units (lower is better): `best` for fbo-fedgp / independent-bo (the
federation's best, initial points included); for dp-fts-de, whose `best` is
the agents' MEAN simple regret, min(best_per_member) + optimum (its
best_per_member are simple regrets f_best - f*). The agents' mean is printed
too for dp-fts-de ("dp mean-agent").
Normalised regret = (score - f*) / (f(centre) - f*)  (functions.json).
"""
import json, sys, statistics as st, collections, math, os

here = os.path.dirname(os.path.abspath(__file__))
FN = json.load(open(os.path.join(here, "functions.json")))
md = "--md" in sys.argv
files = [a for a in sys.argv[1:] if not a.startswith("--")]

def fname(task):  # cec2005-f1 -> f1
    return task.split("-")[-1]

score = collections.defaultdict(lambda: collections.defaultdict(dict))  # method -> f -> seed -> score
seen = set()
for f in files:
    for r in json.load(open(f))["runs"]:
        fn = fname(r["task"]); m = r["method"]; s = r["seed"]
        key = (m, fn, s)
        if key in seen:
            continue  # first file wins (no duplicates expected)
        seen.add(key)
        opt = FN[fn]["optimum"]
        if m.startswith("dp-fts-de") or m.startswith("fts-de"):
            v = min(r["best_per_member"]) + opt
        else:
            v = r["best"]
        score[m][fn][s] = v

def key_f(f): return int(f[1:])
methods = sorted(score, key=lambda m: (m.split("-eps")[0], float(m.split("-eps")[1]) if "-eps" in m else 1e99))
funcs = sorted({f for m in score for f in score[m]}, key=key_f)

def med(m, f):
    v = list(score[m].get(f, {}).values())
    return (st.median(v), len(v)) if v else (None, 0)

def norm(f, v):
    o = FN[f]["optimum"]; c = FN[f]["centre_value"]
    return (v - o) / (c - o)

sep = " | " if md else "  "
def row(cells, w=None):
    if md: return "| " + " | ".join(cells) + " |"
    return "  ".join(c.rjust(w or 14) for c in cells)

print("# median federation best per function (n = seeds)\n")
print(row(["fn", "f*"] + methods))
if md: print("|" + "---|" * (len(methods) + 2))
for f in funcs:
    cells = [f, f"{FN[f]['optimum']:g}"]
    for m in methods:
        v, n = med(m, f)
        cells.append("-" if v is None else f"{v:.6g} (n={n})")
    print(row(cells))

# head-to-head counts at each epsilon
def count(a, b, fs):
    le = tot = 0
    for f in fs:
        va, _ = med(a, f); vb, _ = med(b, f)
        if va is None or vb is None: continue
        tot += 1; le += va <= vb
    return le, tot

print("\n# head-to-head (functions where A's median best <= B's)\n")
for e in ["1", "4", "16"]:
    a = f"fbo-private-eps{e}"
    if a not in score: continue
    for b in [f"dp-fts-de-eps{e}", "independent-bo", "fbo-noise-free", "fbo-table1", "fts-de-noise-free"]:
        if b in score:
            le, tot = count(a, b, funcs)
            print(f"- eps={e}: {a} <= {b}: {le} of {tot}")
    both = 0; tot = 0
    for f in funcs:
        va, _ = med(a, f); vb, _ = med(f"dp-fts-de-eps{e}", f); vc, _ = med("independent-bo", f)
        if None in (va, vb, vc): continue
        tot += 1; both += (va <= vb and va <= vc)
    if "independent-bo" in score and f"dp-fts-de-eps{e}" in score:
        print(f"- eps={e}: {a} <= both dp-fts-de and independent-bo: {both} of {tot}")

def sign_p(k, n):
    """Two-sided exact binomial(n, 1/2) p-value of k successes."""
    if n == 0: return float("nan")
    pk = [math.comb(n, i) / 2 ** n for i in range(n + 1)]
    return min(1.0, sum(p for p in pk if p <= pk[k] * (1 + 1e-12)))

# seed-paired wins
print("\n# seed-paired wins of fbo-private (runs with score <= the other's, same function and seed)\n")
for e in ["1", "4", "16"]:
    a = f"fbo-private-eps{e}"
    if a not in score: continue
    for b in [f"dp-fts-de-eps{e}", "independent-bo", "fbo-noise-free"]:
        if b not in score: continue
        w = n = 0
        for f in funcs:
            for s, va in score[a].get(f, {}).items():
                vb = score[b].get(f, {}).get(s)
                if vb is None: continue
                n += 1; w += va <= vb
        print(f"- eps={e}: {a} vs {b}: {w} of {n} (two-sided sign test p = {sign_p(w, n):.2g})")

# normalised table over a common set of functions per method
print("\n# median over functions of the normalised median regret (score - f*)/(f(centre) - f*), and mean rank\n")
def summary(ms, fs, title):
    fs = [f for f in fs if all(med(m, f)[0] is not None for m in ms)]
    if not fs: return
    print(f"{title} ({len(fs)} functions: {','.join(fs)})\n")
    ranks = collections.defaultdict(list)
    for f in fs:
        vals = sorted((med(m, f)[0], m) for m in ms)
        for m in ms:
            v = med(m, f)[0]
            # average rank for ties
            lower = sum(1 for x, _ in vals if x < v); eq = sum(1 for x, _ in vals if x == v)
            ranks[m].append(lower + (eq + 1) / 2)
    print(row(["method", "eps", "median norm. regret", "mean rank"], 22))
    if md: print("|---|---|---|---|")
    for m in ms:
        nr = [norm(f, med(m, f)[0]) for f in fs]
        eps = m.split("-eps")[1] if "-eps" in m else ("none (noise-free)" if "noise-free" in m or "table1" in m else "nothing released")
        print(row([m, eps, f"{st.median(nr):.4g}", f"{st.mean(ranks[m]):.2f}"], 22))
    print()

ms4 = [m for m in methods if m.endswith("eps4") or m in ("independent-bo", "fbo-noise-free", "fbo-table1", "fts-de-noise-free")]
summary(ms4, funcs, "eps = 4, all methods")
msall = [m for m in methods if "-eps" in m or m in ("independent-bo", "fbo-noise-free")]
summary(msall, funcs, "every epsilon (functions run at every epsilon)")

# epsilon -> quality, on the seeds every epsilon has (0..2) and the functions run at every epsilon
print("# eps -> median over functions of the normalised regret of the per-function median (seeds 0-2 only)\n")
E = ["1", "4", "16"]
fam = {"fbo-private": "fbo-private-eps{}", "dp-fts-de": "dp-fts-de-eps{}"}
refs = ["fbo-noise-free", "independent-bo", "fts-de-noise-free"]
def med3(m, f):
    v = [x for s, x in score[m].get(f, {}).items() if s < 3]
    return st.median(v) if v else None
allm = [p.format(e) for p in fam.values() for e in E] + [r for r in refs if r in score]
fs = [f for f in funcs if all(m in score and med3(m, f) is not None for m in allm)]
if fs:
    print(f"({len(fs)} functions: {','.join(fs)}; mean rank among the {len(allm)} columns below)\n")
    ranks = collections.defaultdict(list)
    for f in fs:
        vals = [med3(m, f) for m in allm]
        for m in allm:
            v = med3(m, f)
            ranks[m].append(sum(x < v for x in vals) + (sum(x == v for x in vals) + 1) / 2)
    print(row(["eps"] + [f"{k} norm. regret" for k in fam] + [f"{k} mean rank" for k in fam], 24))
    if md: print("|---|---|---|---|---|")
    for e in E:
        cells = [e]
        cells += [f"{st.median(norm(f, med3(p.format(e), f)) for f in fs):.4g}" for p in fam.values()]
        cells += [f"{st.mean(ranks[p.format(e)]):.2f}" for p in fam.values()]
        print(row(cells, 24))
    for r in refs:
        if r in score:
            print(row([r, f"{st.median(norm(f, med3(r, f)) for f in fs):.4g}", "", f"{st.mean(ranks[r]):.2f}", ""], 24))
