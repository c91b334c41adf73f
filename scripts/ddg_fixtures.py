#!/usr/bin/env python3
"""Writes tests/data/dp_accounting_ddg.json: reference privacy losses for
studies whose releases carry the distributed discrete Gaussian, which
`fedhe-dp`'s `PrivacyLedger` must match to 1e-6 relative (test
`ddg_fixtures` in crates/dp).

Generated with dp-accounting 0.6.0 (numpy 2.4.6, scipy 1.17.1, Python 3.11).
CI does not run Python: the JSON output is committed. To regenerate:

    python3 -m venv /work/venv-peers
    /work/venv-peers/bin/pip install dp-accounting==0.6.0
    /work/venv-peers/bin/python scripts/ddg_fixtures.py

A case is a study: a list of release kinds, each with the members' integer
noise variance (grid units), the grid, the real L2 sensitivity, the
dimension, the contributors and a count. Two references:

- "gaussian" cases, where every member's variance is wide enough that the
  sum is a discrete Gaussian to double precision (tau underflows): each
  release is dp-accounting's own GaussianDpEvent with noise multiplier
  sqrt(n * var) / l2_grid, composed on an RdpAccountant (default orders,
  ADD_OR_REMOVE_ONE), epsilon from get_epsilon_and_optimal_order;
- "ddg" cases, with narrow shares where tau matters: the RDP of Prop. 14 of
  Kairouz, Liu, Steinke 2021 (written here from the paper, apart from the
  Rust code), composed by summing, epsilon from dp-accounting's
  rdp_privacy_accountant.compute_epsilon.

Rounding to the grid is accounted as in the Rust code: l2_grid = l2/grid +
sqrt(d), l1_grid = sqrt(d) * l2/grid + d.
"""

import json
import math
import os

import dp_accounting
from dp_accounting.rdp import rdp_privacy_accountant as rdp


def grid_sensitivities(l2, grid, dim):
    scaled = l2 / grid
    return scaled + math.sqrt(dim), math.sqrt(dim) * scaled + dim


def prop14(var, n, l2, l1, dim, order):
    """Kairouz et al. 2021, Prop. 14: n independent N_Z(0, var)^dim."""
    tau = 10.0 * sum(math.exp(-2.0 * math.pi**2 * var * k / (k + 1)) for k in range(1, n))
    s = math.sqrt(n * var)
    a, b = l2 / s, l1 / s
    return min(
        order / 2.0 * a * a + tau * dim,
        order / 2.0 * (a * a + 2.0 * b * tau + tau * tau * dim),
        order / 2.0 * (a + math.sqrt(dim) * tau) ** 2,
    )


def gaussian_epsilon(releases, delta):
    acc = rdp.RdpAccountant()
    for r in releases:
        l2g, _ = grid_sensitivities(r["l2_sensitivity"], r["grid"], r["dim"])
        z = math.sqrt(r["contributors"] * r["member_variance"]) / l2g
        acc.compose(dp_accounting.GaussianDpEvent(z), r["count"])
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    return float(eps), float(order)


def ddg_epsilon(releases, delta):
    orders = list(rdp.DEFAULT_RDP_ORDERS)
    total = [0.0] * len(orders)
    for r in releases:
        l2g, l1g = grid_sensitivities(r["l2_sensitivity"], r["grid"], r["dim"])
        for i, a in enumerate(orders):
            total[i] += r["count"] * prop14(
                r["member_variance"], r["contributors"], l2g, l1g, r["dim"], a
            )
    eps, order = rdp.compute_epsilon(orders, total, delta)
    return float(eps), float(order)


def release(var_bits, grid_exp, l2, dim, contributors, count):
    return {
        "member_variance": 2**var_bits,
        "grid": 2.0**grid_exp,
        "l2_sensitivity": l2,
        "dim": dim,
        "contributors": contributors,
        "count": count,
    }


def main():
    cases = []
    # Wide shares: FBO-FedGP-like studies (a summary of 152 values, small
    # statistics) at several noise levels, quorums and lengths.
    for var_bits in [36, 40, 42]:
        for n in [2, 3, 5, 10]:
            for count in [1, 20, 150]:
                for delta in [1e-6, 1e-9, 0.01]:
                    releases = [
                        release(var_bits, -30, 0.2 * 2**-10, 152, n, count),
                        release(var_bits - 4, -24, 1.0 * 2**-12, 3, n + 1, 5),
                    ]
                    eps, order = gaussian_epsilon(releases, delta)
                    cases.append(
                        {"kind": "gaussian", "releases": releases, "delta": delta,
                         "epsilon": eps, "order": order}
                    )
    # Narrow shares: tau matters.
    for var in [1, 2, 3]:
        for n in [2, 5, 10]:
            for delta in [1e-6, 1e-3]:
                releases = [
                    {"member_variance": var, "grid": 1.0, "l2_sensitivity": 4.0,
                     "dim": 8, "contributors": n, "count": 3},
                ]
                eps, order = ddg_epsilon(releases, delta)
                cases.append(
                    {"kind": "ddg", "releases": releases, "delta": delta,
                     "epsilon": eps, "order": order}
                )
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "dp_accounting_ddg.json")
    with open(out, "w") as f:
        json.dump({"dp_accounting": "0.6.0", "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases -> {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
