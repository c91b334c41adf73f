#!/usr/bin/env python3
"""Turns the `independent-bo` runs of a `fedhe simulate` results.json into a
peer fixture for `fedhe report --peers`: one "run" per lone agent (each member
of each seed's run), so that the federation's seeds are compared with single
lone agents, not with the best of ten (issue 14's "lone fedhe agent").

    python3 scripts/lone_agents_peer.py RESULTS.json OUT.json

The agent of member m in the run of seed s becomes seed 100 * s + m.
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        results = json.load(f)
    runs = {}
    for run in results["runs"]:
        if run["method"] != "independent-bo":
            continue
        function = run["task"].replace("cec2005-", "")
        for member, best in enumerate(run["best_per_member"]):
            seed = 100 * run["seed"] + member
            runs[f"{function}/{seed}"] = {"function": function, "seed": seed, "best": best}
    if not runs:
        sys.exit(f"no independent-bo runs in {sys.argv[1]}")
    fixture = {
        "label": "fedhe-lone-agent",
        "method": "fedhe independent-bo, one lone agent per member and seed "
                  "(seed = 100 * run seed + member)",
        "source": sys.argv[1],
        "runs": runs,
    }
    with open(sys.argv[2], "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {len(runs)} lone agents to {sys.argv[2]}")


if __name__ == "__main__":
    main()
