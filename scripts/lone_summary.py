#!/usr/bin/env python3
"""Median best of lone agents per (function, method) from `fedhe simulate`'s
results.json, every member of an `independent-bo` run counted as one lone
agent (random search: every member's own 54 points), optionally beside a
peer fixture of `scripts/peers_botorch.py` (same functions). A peer fixture
given among the results (e.g. `scripts/peers_standard.py --method skopt-gp
--budget 54`) counts each of its seeds as one agent of the method its
`label` names, so one peer can be compared with another.

    python3 scripts/lone_summary.py RESULTS.json [RESULTS.json ...] [--peer FIXTURE] [--seconds] [--ranks]
        [--per-file] [--counts-only]

With --peer, also the win/loss count of every method against the peer, one
function counted per win or loss (the median best of the lone agents against
the median over the peer's seeds). With --peer and --significance (needs
scipy: the peers' venv), also per method the functions on which it is
significantly worse or better than the peer: a two-sided Mann-Whitney U test
per function (the agents and the peer's seeds are not paired), Holm-corrected
over the functions at --alpha (issue 14's acceptance: "significantly worse on
at most 2"). With --peer and --exchangeable N, also the win count two
exchangeable methods would reach: per function the agents and the peer's
seeds pooled and split at random into groups of their sizes, N times; prints
the mean count and how often it reaches 14 (the acceptance's count) and the
method's own. --per-file keeps the runs of each file apart (a method is
named FILE:LABEL), so variants of several runs that share a label are
not pooled; --counts-only prints the counts without the table of medians.
"""

import argparse
import json
import statistics
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+", help="one or more results.json, their runs pooled")
    ap.add_argument("--peer")
    ap.add_argument("--significance", action="store_true",
                    help="with --peer: Holm-corrected Mann-Whitney U tests per function")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--exchangeable", type=int, default=0, metavar="N",
                    help="with --peer: the permutation null of the win count, N splits")
    ap.add_argument("--seconds", action="store_true", help="also the median seconds per agent")
    ap.add_argument("--per-file", action="store_true",
                    help="name each method FILE:LABEL instead of pooling equal labels across files")
    ap.add_argument("--counts-only", action="store_true", help="with --peer: no table of medians")
    ap.add_argument(
        "--ranks",
        action="store_true",
        help="also each method's mean rank of its median over the functions (1 = best) "
        "and on how many functions it beats the first method",
    )
    a = ap.parse_args()
    runs = []
    for path in a.results:
        with open(path) as f:
            data = json.load(f)
        if is_peer_fixture(data):
            # Each seed's run is one agent of the method the label names.
            these = [{"task": f"cec2005-{r['function']}", "method": peer_label(data),
                      "best_per_member": [r["best"]], "members": 1, "seconds": r.get("seconds")}
                     for r in data["runs"].values()]
        else:
            these = data["runs"] if isinstance(data, dict) and "runs" in data else data
        if a.per_file:
            stem = path.rsplit("/", 1)[-1].removesuffix(".json")
            these = [dict(r, method=f"{stem}:{r['method']}") for r in these]
        runs += these
    best = defaultdict(list)
    secs = defaultdict(list)
    methods, tasks = [], []
    for r in runs:
        key = (r["task"], r["method"])
        best[key] += r["best_per_member"]
        if r["seconds"] is not None:  # scripts/lone_agents_peer.py's agents have no time
            secs[key].append(r["seconds"] / max(1, r["members"]))
        if r["method"] not in methods:
            methods.append(r["method"])
        if r["task"] not in tasks:
            tasks.append(r["task"])
    peer = defaultdict(list)
    peer_name = "BoTorch"
    if a.peer:
        with open(a.peer) as f:
            fixture = json.load(f)
        if not is_peer_fixture(fixture):
            raise SystemExit(f"--peer {a.peer}: not a peer fixture (its runs keyed by function/seed)")
        peer_name = peer_label(fixture)
        for run in fixture["runs"].values():
            peer[run["function"]].append(run["best"])
    cols = methods + ([peer_name] if a.peer else [])
    if not (a.counts_only and a.peer):
        print_medians(a, cols, methods, tasks, best, peer)
    if a.peer:
        # A function counts for a method when both have results: a win when
        # the method's median best is below the peer's (minimisation).
        print()
        for m in methods:
            w = l = 0
            for t in tasks:
                p = peer.get(t.replace("cec2005-", ""), [])
                if not p or not best[(t, m)]:
                    continue
                if statistics.median(best[(t, m)]) <= statistics.median(p):
                    w += 1
                else:
                    l += 1
            print(f"{m} against {peer_name} (median vs median per function): {w} at most, {l} above")
            if a.exchangeable:
                mean, p14, p_own = exchangeable_wins(m, tasks, best, peer, a.exchangeable, w)
                print(f"  exchangeable methods: mean {mean:.2f} wins; P(>= 14) = {p14:.3f}, "
                      f"P(>= {w}) = {p_own:.3f} ({a.exchangeable} splits, seed 1)")
            if a.significance:
                worse, better = significant(m, tasks, best, peer, a.alpha)
                print(f"  significantly worse (Holm, alpha {a.alpha}): {', '.join(worse) or 'none'}; "
                      f"significantly better: {', '.join(better) or 'none'}")
    if a.ranks:
        print()
        ranks = defaultdict(list)
        for t in tasks:
            meds = sorted((statistics.median(best[(t, m)]), m) for m in methods if best[(t, m)])
            for i, (_, m) in enumerate(meds):
                ranks[m].append(i + 1)
        for m in methods:
            beats = sum(
                statistics.median(best[(t, m)]) < statistics.median(best[(t, methods[0])])
                for t in tasks
            )
            print(
                f"{m}: mean rank {statistics.mean(ranks[m]):.2f} over {len(ranks[m])} functions, "
                f"better than {methods[0]} on {beats}"
            )
    if a.seconds:
        print()
        timed = {m: sum((secs[(t, m)] for t in tasks), []) for m in methods}
        print("median seconds per agent: " + ", ".join(
            f"{m} {statistics.median(timed[m]):.2f}" if timed[m] else f"{m} (not timed)"
            for m in methods))


def print_medians(a, cols, methods, tasks, best, peer):
    """The table of median bests per function (and the peer's, with --peer)."""
    print("| function | " + " | ".join(cols) + " |")
    print("| --- |" + " ---: |" * len(cols))
    for t in tasks:
        row = [f"{statistics.median(best[(t, m)]):.6g} ({len(best[(t, m)])})" for m in methods]
        if a.peer:
            short = t.replace("cec2005-", "")
            p = peer.get(short, [])
            row.append(f"{statistics.median(p):.6g} ({len(p)})" if p else "–")
        print(f"| {t} | " + " | ".join(row) + " |")


def is_peer_fixture(data):
    """Whether `data` is a peer fixture (`peers_botorch.py`,
    `peers_standard.py`: runs keyed by "function/seed") rather than fedhe's
    results (a list of runs)."""
    return isinstance(data, dict) and isinstance(data.get("runs"), dict)


def peer_label(fixture):
    """The peer's name: `peers_standard.py`'s fixtures carry a label,
    `peers_botorch.py`'s none (they are BoTorch)."""
    return fixture.get("label", "BoTorch")


def exchangeable_wins(method, tasks, best, peer, n, own):
    """The permutation null of the median-against-median win count: per
    function the method's agents and the peer's seeds pooled and split at
    random into groups of their sizes. Returns the mean count, P(count >= 14)
    and P(count >= own)."""
    import random

    rng = random.Random(1)
    pools = []
    for t in tasks:
        p = peer.get(t.replace("cec2005-", ""), [])
        ours = best[(t, method)]
        if p and ours:
            pools.append((list(ours) + list(p), len(ours)))
    counts = []
    for _ in range(n):
        c = 0
        for pool, k in pools:
            rng.shuffle(pool)
            c += statistics.median(pool[:k]) <= statistics.median(pool[k:])
        counts.append(c)
    return (statistics.mean(counts), sum(c >= 14 for c in counts) / n,
            sum(c >= own for c in counts) / n)


def significant(method, tasks, best, peer, alpha):
    """The functions on which `method` is significantly worse and better than
    the peer: two-sided Mann-Whitney U per function, Holm step-down over the
    functions with both sides present."""
    from scipy.stats import mannwhitneyu

    tests = []
    for t in tasks:
        p = peer.get(t.replace("cec2005-", ""), [])
        ours = best[(t, method)]
        if p and ours:
            pv = mannwhitneyu(ours, p, alternative="two-sided").pvalue
            tests.append((pv, t, statistics.median(ours) > statistics.median(p)))
    tests.sort()
    worse, better = [], []
    for i, (pv, t, is_worse) in enumerate(tests):
        if pv * (len(tests) - i) >= alpha:
            break  # Holm: stop at the first hypothesis not rejected
        (worse if is_worse else better).append(t.replace("cec2005-", ""))
    return worse, better


if __name__ == "__main__":
    main()
