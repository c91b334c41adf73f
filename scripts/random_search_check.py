#!/usr/bin/env python3
"""An independent random search beside fedhe's `random-search` baseline
(issue 14, Deliver item 1): `--reps` repetitions of the best of `--points`
uniform points of the function's box, drawn by numpy and evaluated by
`fedhe objective eval` (noise-free), against the `random-search` runs of a
`fedhe simulate` results.json: where fedhe's mean and median fall in the
distribution of the mean and median of as many independent runs.

    python3 scripts/random_search_check.py --fedhe target/release/fedhe \
        --results RESULTS.json --functions 2,16 --out OUT.json
"""
import argparse
import json
import sys

import numpy as np

from fedhe_objective import box, evaluate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fedhe", default="target/release/fedhe")
    ap.add_argument("--results", required=True)
    ap.add_argument("--functions", default="2,16")
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--points", type=int, default=540)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.results) as f:
        runs = json.load(f)["runs"]
    rng = np.random.default_rng(a.seed)
    report = {"command": " ".join(["python3"] + sys.argv), "numpy": np.__version__,
              "functions": {}}
    for fn in [int(v) for v in a.functions.split(",")]:
        name = f"cec2005-f{fn}"
        ours = np.array([r["best"] for r in runs
                         if r["task"] == name and r["method"] == "random-search"])
        if len(ours) == 0:
            sys.exit(f"no random-search runs of {name} in {a.results}")
        lo, hi = box(a.fedhe, name)
        bests = []
        chunk = 100
        for start in range(0, a.reps, chunk):
            reps = min(chunk, a.reps - start)
            x = lo + (hi - lo) * rng.random((reps * a.points, a.dim))
            v = np.array(evaluate(a.fedhe, name, a.dim, x.tolist())).reshape(reps, a.points)
            bests.extend(v.min(axis=1).tolist())
        bests = np.array(bests)
        # The distribution of the mean (median) of len(ours) independent runs.
        k = len(ours)
        draws = rng.choice(bests, size=(20000, k), replace=True)
        means, medians = draws.mean(axis=1), np.median(draws, axis=1)
        entry = {
            "fedhe_runs": k,
            "fedhe_mean": float(ours.mean()),
            "fedhe_median": float(np.median(ours)),
            "independent_reps": int(len(bests)),
            "independent_mean": float(bests.mean()),
            "independent_median": float(np.median(bests)),
            "p_mean_at_least": float((means >= ours.mean()).mean()),
            "p_median_at_least": float((medians >= np.median(ours)).mean()),
        }
        report["functions"][name] = entry
        print(name, entry, flush=True)
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
