#!/usr/bin/env python3
"""Paired comparison of two lone-agent methods of `fedhe simulate` results.

The same agents (seed, member) run every method of a config, so each
function gives one pair per agent. Prints, for method A against method B,
the agent pairs in which A ended better (lower), and the functions where a
Wilcoxon signed-rank test (p < 0.05, unadjusted) finds A better or worse.
Needs scipy (the peers' venv, never the product):

    /work/venv-peers/bin/python scripts/lone_paired.py A_LABEL B_LABEL results.json [more.json ...]

A file may be given as LABEL=PATH: its runs then count as method LABEL
(two runs of one label, e.g. two builds' `independent-bo`, kept apart). A
file may also be a peer fixture of `scripts/lone_agents_peer.py` (runs keyed
"function/seed", one agent each): two such fixtures of the same config pair
by their agent seeds.
"""
import collections
import json
import sys

from scipy.stats import wilcoxon

from lone_summary import is_peer_fixture


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    a, b, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    agents = collections.defaultdict(dict)
    for arg in files:
        label, _, path = arg.rpartition("=")
        with open(path) as f:
            data = json.load(f)
        runs = data["runs"]
        if is_peer_fixture(data):  # one agent per "function/seed"
            name = label or "peer"
            for r in runs.values():
                agents[(f"cec2005-{r['function']}", name)][(r["seed"], 0)] = r["best"]
            continue
        for r in runs:
            for i, v in enumerate(r["best_per_member"]):
                agents[(r["task"], label or r["method"])][(r["seed"], i)] = v
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
