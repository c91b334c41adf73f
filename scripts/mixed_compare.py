#!/usr/bin/env python3
"""The mixed benchmarks' table (issue 46, item 6): per task, each fedhe run's
per-member best (every member of every seed) against each lone peer's best
(one institution alone, the same per-member budget; scripts/peers_mixed.py),
medians and a one-sided Mann-Whitney U test (SciPy) of "fedhe's values are
smaller" per peer. Then, per task, the bar itself: each lone peer against
every other lone peer, its largest one-sided p, so that the table says
whether any standard method is significantly better than the best of the
others on that task with the same seeds.

Usage: mixed_compare.py PEERS.json RESULTS.json [RESULTS.json ...]"""

import json
import statistics
import sys

from scipy.stats import mannwhitneyu


def main():
    peers = json.load(open(sys.argv[1]))
    runs = []
    for path in sys.argv[2:]:
        runs += json.load(open(path))["runs"]
    tasks = sorted({r["task"] for r in runs})
    print(f"per-member budget {peers['budget']}, {peers['seeds']} seeds; minimised (lower is better)\n")
    for task in tasks:
        print(f"### {task}\n")
        print("| method | median best | vs " + " | vs ".join(peers["best"][task]) + " |")
        print("|---|---|" + "---|" * len(peers["best"][task]))
        for peer, values in peers["best"][task].items():
            print(f"| {peer} (lone) | {statistics.median(values):.4f} |" + " |" * len(peers["best"][task]))
        methods = sorted({r["method"] for r in runs if r["task"] == task})
        for m in methods:
            values = [v for r in runs if r["task"] == task and r["method"] == m for v in r["best_per_member"]]
            cells = []
            for peer, pv in peers["best"][task].items():
                p = mannwhitneyu(values, pv, alternative="less").pvalue
                q = mannwhitneyu(values, pv, alternative="greater").pvalue
                cells.append(f"p<={p:.3f} better / p<={q:.3f} worse")
            print(f"| {m} | {statistics.median(values):.4f} | " + " | ".join(cells) + " |")
        print()
        lone = peers["best"][task]
        if len(lone) > 1:
            print("| lone peer | its largest p (\"better\") against the other lone peers |")
            print("|---|---|")
            for peer, values in lone.items():
                worst = max(
                    mannwhitneyu(values, other, alternative="less").pvalue
                    for name, other in lone.items()
                    if name != peer
                )
                print(f"| {peer} | {worst:.3f} |")
            print()


if __name__ == "__main__":
    main()
