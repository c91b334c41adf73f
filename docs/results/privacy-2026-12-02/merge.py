#!/usr/bin/env python3
"""merge.py OUTDIR FILE.results.json ... : one results.json for `fedhe-sim report`,
with each dp-fts-de / fts-de run's `best` (its agents' MEAN simple regret) replaced by
the federation's best value min(best_per_member) + f*, the score every other method's
`best` is (its trace is dropped: it is in regret units)."""
import json, os, sys
F = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "functions.json")))
runs = []
for f in sys.argv[2:]:
    for r in json.load(open(f))["runs"]:
        if r["method"].startswith(("dp-fts-de", "fts-de")):
            o = F[r["task"].split("-")[-1]]["optimum"]
            r["best"] = min(r["best_per_member"]) + o
            r["best_per_member"] = [b + o for b in r["best_per_member"]]
            r["trace"] = [r["best"]] * len(r["trace"])
            r.pop("cumulative_regret", None)
        runs.append(r)
os.makedirs(sys.argv[1], exist_ok=True)
json.dump({"runs": runs}, open(os.path.join(sys.argv[1], "results.json"), "w"))
print(len(runs), "runs")
