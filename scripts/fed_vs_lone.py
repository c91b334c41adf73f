#!/usr/bin/env python3
"""Federations against lone agents on the Table 1 protocol (issue 14's
federation acceptance), from `fedhe simulate`'s results.json.

    python3 scripts/fed_vs_lone.py RESULTS.json [--lone LABEL] [--peer FIXTURE]

For every federated label (method name in results.json): its median best per
function (the best over all members, as Table 1 counts it) beside the median
best of a single lone agent (every member of the `--lone` runs, default
"lone", counted as one agent) and, with --peer, the median over the seeds of
a lone-agent peer fixture (scripts/peers_botorch.py). Counts per label: on
how many functions its median is <= the lone agent's and <= the peer's.
"""

import argparse
import json
import statistics
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--lone", default="lone")
    ap.add_argument("--peer")
    a = ap.parse_args()
    runs = json.load(open(a.results))["runs"]
    fed, lone, seconds = defaultdict(list), defaultdict(list), defaultdict(list)
    labels, tasks = [], []
    for r in runs:
        t = r["task"].replace("cec2005-", "")
        if t not in tasks:
            tasks.append(t)
        if r["method"] == a.lone:
            lone[t] += r["best_per_member"]
            continue
        if r["method"] not in labels:
            labels.append(r["method"])
        fed[(r["method"], t)].append(r["best"])
        seconds[r["method"]].append(r["seconds"])
    peer = {}
    if a.peer:
        data = json.load(open(a.peer))
        by = defaultdict(list)
        for v in data["runs"].values():
            by[v["function"]].append(v["best"])
        peer = {f: statistics.median(v) for f, v in by.items()}
    head = ["function"] + labels + ["lone agent"] + (["peer"] if peer else [])
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |")
    wins_lone, wins_peer = defaultdict(int), defaultdict(int)
    for t in tasks:
        lone_median = statistics.median(lone[t]) if lone[t] else float("nan")
        row = [t]
        for m in labels:
            v = statistics.median(fed[(m, t)])
            wins_lone[m] += v <= lone_median
            if t in peer:
                wins_peer[m] += v <= peer[t]
            row.append(f"{v:.6g}")
        row.append(f"{lone_median:.6g}")
        if peer:
            row.append(f"{peer.get(t, float('nan')):.6g}")
        print("| " + " | ".join(row) + " |")
    print()
    for m in labels:
        line = f"{m}: <= the lone agent on {wins_lone[m]} of {len(tasks)}"
        if peer:
            line += f", <= the peer on {wins_peer[m]} of {sum(t in peer for t in tasks)}"
        line += f"; median run {statistics.median(seconds[m]):.1f} s"
        print(line)


if __name__ == "__main__":
    main()
