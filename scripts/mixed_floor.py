#!/usr/bin/env python3
"""How saturated a real mixed task is: per clinic, the lowest validation
error any method reached over every seed (the clinic's floor), and how many
of each method's (clinic, seed) bests sit on it.

Peers come from scripts/peers_mixed.py (a list per peer, seed-major, clinic
minor); fedhe's from `fedhe simulate` results (best_per_member per run).

Usage: mixed_floor.py PEERS.json TASK RESULTS.json [RESULTS.json ...]"""

import json
import statistics
import sys


def main():
    peers = json.load(open(sys.argv[1]))
    task = sys.argv[2]
    runs = [r for path in sys.argv[3:] for r in json.load(open(path))["runs"] if r["task"] == task]
    clinics = len(runs[0]["best_per_member"])
    per = {}
    for peer, values in peers["best"].get(task, {}).items():
        per[peer + " (lone)"] = [values[i::clinics] for i in range(clinics)]
    for method in sorted({r["method"] for r in runs}):
        rs = sorted((r for r in runs if r["method"] == method), key=lambda r: r["seed"])
        per[method] = [[r["best_per_member"][i] for r in rs] for i in range(clinics)]
    floors = [min(min(v[i]) for v in per.values()) for i in range(clinics)]
    print(f"### {task}: each clinic's floor " + ", ".join(f"{f:.4f}" for f in floors) + "\n")
    print("| method | bests on their clinic's floor | median best | per-clinic medians |")
    print("|---|---|---|---|")
    for name, v in per.items():
        at = sum(x == floors[i] for i in range(clinics) for x in v[i])
        n = sum(len(c) for c in v)
        pooled = [x for c in v for x in c]
        medians = ", ".join(f"{statistics.median(c):.4f}" for c in v)
        print(f"| {name} | {at} of {n} | {statistics.median(pooled):.4f} | {medians} |")
    print()


if __name__ == "__main__":
    main()
