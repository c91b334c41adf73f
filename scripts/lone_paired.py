#!/usr/bin/env python3
"""Paired comparison of two lone-agent methods of `fedhe simulate` results.

The same agents (seed, member) run every method of a config, so each
function gives one pair per agent. Prints, for method A against method B,
the agent pairs in which A ended better (lower), and the functions where a
Wilcoxon signed-rank test (p < 0.05, unadjusted) finds A better or worse.
Needs scipy (the peers' venv, never the product):

    /work/venv-peers/bin/python scripts/lone_paired.py A_LABEL B_LABEL results.json [more.json ...]
"""
import collections
import json
import sys

from scipy.stats import wilcoxon


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    a, b, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    agents = collections.defaultdict(dict)
    for path in files:
        with open(path) as f:
            for r in json.load(f)["runs"]:
                for i, v in enumerate(r["best_per_member"]):
                    agents[(r["task"], r["method"])][(r["seed"], i)] = v
    tasks = sorted({t for t, _ in agents}, key=lambda t: (len(t), t))
    wins, total, better, worse = 0, 0, [], []
    for t in tasks:
        if (t, a) not in agents or (t, b) not in agents:
            continue
        keys = sorted(set(agents[(t, a)]) & set(agents[(t, b)]))
        d = [agents[(t, a)][k] - agents[(t, b)][k] for k in keys]
        wins += sum(v < 0 for v in d)
        total += len(d)
        if any(d) and wilcoxon(d).pvalue < 0.05:
            (better if sum(v < 0 for v in d) > len(d) / 2 else worse).append(t)
    print(f"{a} vs {b}: better in {wins}/{total} agent pairs; "
          f"significantly better on {better or 'none'}, worse on {worse or 'none'}")


if __name__ == "__main__":
    main()
