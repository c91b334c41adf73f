#!/usr/bin/env python3
"""Two-sided Mann-Whitney U p-values of each variant against a reference, per
function, for fedhe simulate results (each lone agent one sample) and for the
BoTorch ablation (each seed one sample; the peer fixture fills the
baseline's seeds). Needs scipy (e.g. /work/venv-peers/bin/python).

    python scripts/ablation_stats.py --fedhe R1.json [R2.json ...] --ref std-logei
    python scripts/ablation_stats.py --ablation A.json --peer P.json --ref baseline
"""
import argparse
import json
import statistics
from collections import defaultdict

from scipy.stats import mannwhitneyu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fedhe", nargs="*", default=[])
    ap.add_argument("--ablation")
    ap.add_argument("--peer")
    ap.add_argument("--ref", required=True)
    a = ap.parse_args()
    vals = defaultdict(lambda: defaultdict(dict))
    for path in a.fedhe:
        for r in json.load(open(path))["runs"]:
            fn = r["task"].replace("cec2005-", "")
            for i, b in enumerate(r["best_per_member"]):
                vals[fn][r["method"]][(r["seed"], i)] = b
    if a.ablation:
        for r in json.load(open(a.ablation))["runs"].values():
            vals[r["function"]][r["label"]][r["seed"]] = r["best"]
    if a.peer:
        for r in json.load(open(a.peer))["runs"].values():
            vals[r["function"]]["baseline"].setdefault(r["seed"], r["best"])
    print("| function | variant | n | median | ref median | p (Mann-Whitney, two-sided) | better agents/seeds, paired |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for fn in sorted(vals, key=lambda f: int(f[1:])):
        ref = vals[fn].get(a.ref)
        if not ref:
            continue
        for label, d in vals[fn].items():
            if label == a.ref or len(d) < 3:
                continue
            x, y = list(d.values()), list(ref.values())
            p = mannwhitneyu(x, y, alternative="two-sided").pvalue
            common = [k for k in d if k in ref]
            better = sum(d[k] < ref[k] for k in common)
            print(f"| {fn} | {label} | {len(x)} | {statistics.median(x):.4g} | "
                  f"{statistics.median(y):.4g} | {p:.3f} | {better}/{len(common)} |")


if __name__ == "__main__":
    main()
