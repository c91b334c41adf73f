#!/usr/bin/env python3
"""Writes tests/data/wilcoxon.json and tests/data/mann_whitney.json: scipy's
Wilcoxon signed-rank and Mann-Whitney U results for the statistics of
`fedhe report` (crates/stats/src/lib.rs).

Not run by CI; run it by hand and commit what it writes:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scipy
    /tmp/venv/bin/python scripts/report_fixtures.py

Every case is scipy.stats.wilcoxon(a, b, zero_method="wilcox", correction=True,
alternative="two-sided", method="auto"): the exact null distribution without
ties or zeros (n <= 50), an exact sign-flip permutation test with ties or zeros
(n <= 13), the normal approximation with tie and continuity corrections
otherwise. Every rank-sum case is scipy.stats.mannwhitneyu(a, b,
use_continuity=True, alternative="two-sided", method="auto"). The values are
multiples of 1/64 so that every number has a short
decimal form that both Python and Rust parse to the same double, and the
differences a - b are computed exactly on both sides.
"""
import json
import os

import numpy as np
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def dyadic(x, step):
    """Rounds to a multiple of `step` (a power of two, so the result is exact)."""
    return np.round(np.asarray(x) / step) * step


def case(name, a, b, expect_method):
    a = [float(v) for v in a]
    b = [float(v) for v in b]
    res = stats.wilcoxon(a, b, zero_method="wilcox", correction=True,
                         alternative="two-sided", method="auto")
    d = np.asarray(a) - np.asarray(b)
    d = d[d != 0]
    r = stats.rankdata(np.abs(d))
    r_plus = float(r[d > 0].sum())
    r_minus = float(r[d < 0].sum())
    return {
        "name": name,
        "a": a,
        "b": b,
        "method": expect_method,
        "statistic": float(res.statistic),
        "p_value": float(res.pvalue),
        "rank_sum_positive": r_plus,
        "rank_sum_negative": r_minus,
        "rank_biserial": (r_plus - r_minus) / (r_plus + r_minus),
    }


def main():
    rng = np.random.default_rng(20240604)
    cases = []

    def pair(n, shift, step, scale=1.0):
        a = dyadic(rng.normal(0.0, scale, n), step)
        b = dyadic(a - shift + rng.normal(0.0, scale, n), step)
        return a, b

    # Exact: continuous values, no ties (checked below), n up to scipy's 50.
    for n, shift in [(5, 0.5), (6, -1.0), (10, 0.0), (10, 0.8), (20, 0.3), (25, -0.6), (40, 0.2), (50, 0.4)]:
        while True:
            a, b = pair(n, shift, 1 / 4096)
            d = a - b
            if np.all(d != 0) and len(np.unique(np.abs(d))) == n:
                break
        cases.append(case(f"exact-n{n}-shift{shift}", a, b, "exact"))
    # All differences of one sign: the smallest two-sided p at n = 10.
    a = np.arange(1, 11) / 8.0
    cases.append(case("exact-one-sided-n10", a + 100.0, np.full(10, 100.0) - 0.0, "exact"))
    # Ties (coarse grid), at most 13 pairs: sign-flip permutation.
    for n, shift in [(8, 0.5), (10, 0.0), (13, 1.0)]:
        while True:
            a, b = pair(n, shift, 1 / 2)
            d = a - b
            if np.all(d != 0) and len(np.unique(np.abs(d))) < n:
                break
        cases.append(case(f"signflip-ties-n{n}", a, b, "sign-flip"))
    # Zeros, at most 13 pairs.
    a, b = pair(12, 0.4, 1 / 64)
    b[[2, 7]] = a[[2, 7]]
    cases.append(case("signflip-zeros-n12", a, b, "sign-flip"))
    # Ties, more than 13 pairs: normal approximation with tie correction.
    for n, shift in [(14, 0.5), (20, -0.3), (30, 0.0), (60, 0.4)]:
        a, b = pair(n, shift, 1 / 2)
        cases.append(case(f"normal-ties-n{n}", a, b, "normal"))
    # Zeros with more than 13 pairs.
    a, b = pair(25, 0.5, 1 / 64)
    b[[0, 5, 9]] = a[[0, 5, 9]]
    cases.append(case("normal-zeros-n25", a, b, "normal"))
    # No ties but more than 50 pairs.
    for n, shift in [(51, 0.2), (120, 0.3)]:
        a, b = pair(n, shift, 1 / 4096)
        cases.append(case(f"normal-n{n}", a, b, "normal"))

    out = {
        "generator": "scripts/report_fixtures.py",
        "scipy_version": scipy.__version__,
        "call": "scipy.stats.wilcoxon(a, b, zero_method='wilcox', correction=True, "
                "alternative='two-sided', method='auto')",
        "cases": cases,
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "wilcoxon.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases")
    write_mann_whitney(rng)


def write_mann_whitney(rng):
    """scipy.stats.mannwhitneyu on independent samples (fedhe's seeds against
    a peer's): exact without ties when one sample has at most 8 values,
    the normal approximation otherwise."""
    cases = []

    def mw(name, a, b, expect_method):
        a = [float(v) for v in a]
        b = [float(v) for v in b]
        res = stats.mannwhitneyu(a, b, use_continuity=True,
                                 alternative="two-sided", method="auto")
        cases.append({"name": name, "a": a, "b": b, "method": expect_method,
                      "statistic": float(res.statistic),
                      "p_value": float(res.pvalue)})

    def untied(n, shift):
        while True:
            a = dyadic(rng.normal(0.0, 1.0, n[0]), 1 / 4096)
            b = dyadic(rng.normal(shift, 1.0, n[1]), 1 / 4096)
            if len(np.unique(np.concatenate([a, b]))) == n[0] + n[1]:
                return a, b

    # The report's shape: 10 seeds of fedhe against 5 (or 3) of a peer.
    for n, shift in [((10, 5), 0.0), ((10, 5), 1.5), ((10, 3), -2.0), ((5, 5), 0.8),
                     ((8, 12), 0.5)]:
        a, b = untied(n, shift)
        mw(f"exact-{n[0]}x{n[1]}-shift{shift}", a, b, "exact")
    # Completely separated: the smallest exact p for 10 and 5.
    mw("exact-separated-10x5", np.arange(10) / 8.0, 10.0 + np.arange(5) / 8.0, "exact")
    # Ties: the normal approximation with the tie correction.
    for n, shift in [((10, 5), 0.5), ((10, 10), 0.0)]:
        a = dyadic(rng.normal(0.0, 1.0, n[0]), 1 / 2)
        b = dyadic(rng.normal(shift, 1.0, n[1]), 1 / 2)
        mw(f"normal-ties-{n[0]}x{n[1]}", a, b, "normal")
    # Both samples above 8, untied.
    for n, shift in [((10, 10), 0.7), ((30, 20), -0.4)]:
        a, b = untied(n, shift)
        mw(f"normal-{n[0]}x{n[1]}", a, b, "normal")
    out = {
        "generator": "scripts/report_fixtures.py",
        "scipy_version": scipy.__version__,
        "call": "scipy.stats.mannwhitneyu(a, b, use_continuity=True, "
                "alternative='two-sided', method='auto')",
        "cases": cases,
    }
    with open(os.path.join(OUT, "mann_whitney.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} rank-sum cases")


if __name__ == "__main__":
    main()
