#!/usr/bin/env python3
"""Compares two sets of `fedhe simulate` results, ignoring `seconds` (issue 17).

    python3 scripts/compare_results.py BEFORE_DIR AFTER_DIR

Each directory holds one sub-directory per config with its results.json (as
`fedhe simulate --out DIR/NAME` writes it). Every run is keyed by (task,
method, seed); every other field must be equal, floats bit for bit (JSON
text, as serde_json's float_roundtrip writes them). Exit status 1 on any
difference, listing the first few.
"""
import json
import sys
from pathlib import Path


def load(path: Path):
    runs = json.loads(path.read_text(), parse_float=str)["runs"]
    out = {}
    for r in runs:
        r = {k: v for k, v in r.items() if k != "seconds"}
        out[(r["task"], r["method"], r["seed"])] = r
    return out


def diff(a, b, where=""):
    """The paths at which a and b differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff(a.get(k), b.get(k), f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, f"{where}[{i}]")
        return out
    return [] if a == b else [f"{where}: {str(a)[:60]} != {str(b)[:60]}"]


def main():
    before, after = Path(sys.argv[1]), Path(sys.argv[2])
    bad = 0
    for f in sorted(before.glob("*/results.json")):
        g = after / f.parent.name / "results.json"
        if not g.exists():
            print(f"{f.parent.name}: no results after")
            bad += 1
            continue
        a, b = load(f), load(g)
        problems = diff(a and {str(k): v for k, v in a.items()},
                        b and {str(k): v for k, v in b.items()})
        print(f"{f.parent.name}: {len(a)} runs, "
              f"{'identical apart from seconds' if not problems else f'{len(problems)} differences'}")
        for p in problems[:10]:
            print(f"  {p}")
        bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
