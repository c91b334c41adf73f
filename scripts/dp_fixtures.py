#!/usr/bin/env python3
"""Writes tests/data/dp_accounting_rdp.json: reference privacy losses from
Google's dp-accounting RdpAccountant, which `fedhe-dp`'s `rdp` accountant must
match to 1e-4 relative (test `dp_accounting_fixtures` in crates/dp).

Generated with dp-accounting 0.6.0 (numpy 2.4.6, scipy 1.17.1, Python 3.11).
CI does not run Python: the JSON output is committed. To regenerate:

    python3 -m venv /work/venv-dp
    /work/venv-dp/bin/pip install dp-accounting==0.6.0
    /work/venv-dp/bin/python scripts/dp_fixtures.py

For every (q, z, T, delta) on the grid below it composes T Poisson-subsampled
Gaussian events on an RdpAccountant with its default orders and records
get_epsilon_and_optimal_order(delta). For a few (q, z) it also records the
per-step RDP curve at the default orders, to test the RDP computation alone.
"""

import json
import math
import os
from importlib import metadata

import dp_accounting
from dp_accounting.rdp import rdp_privacy_accountant as rdp

QS = [0.001, 0.01, 0.05, 0.15, 0.25, 0.5, 0.9, 1.0]
ZS = [0.3, 0.5, 0.8, 1.0, 1.2, 1.5, 3.0, 10.0]
TS = [1, 40, 1000, 10000]
DELTAS = [1e-6, 200 ** -1.1, 0.1]
CURVES = [(0.01, 1.0), (0.25, 1.0), (0.5, 0.8), (0.9, 0.5), (0.15, 3.0)]


def epsilon(q, z, steps, delta):
    acc = rdp.RdpAccountant()  # default orders, ADD_OR_REMOVE_ONE
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    acc.compose(event, steps)
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    return float(eps), float(order)


def finite_or_none(x):
    return x if math.isfinite(x) else None


def main():
    cases = []
    for q in QS:
        for z in ZS:
            for steps in TS:
                for delta in DELTAS:
                    eps, order = epsilon(q, z, steps, delta)
                    cases.append(
                        {
                            "q": q,
                            "z": z,
                            "steps": steps,
                            "delta": delta,
                            "epsilon": finite_or_none(eps),
                            "order": order,
                        }
                    )
    curves = []
    for q, z in CURVES:
        values = rdp._compute_rdp_poisson_subsampled_gaussian(q, z, rdp.DEFAULT_RDP_ORDERS)
        curves.append({"q": q, "z": z, "rdp": [finite_or_none(float(v)) for v in values]})
    out = {
        "generator": "scripts/dp_fixtures.py",
        "dp_accounting_version": metadata.version("dp-accounting"),
        "orders": [float(a) for a in rdp.DEFAULT_RDP_ORDERS],
        "cases": cases,
        "rdp_curves": curves,
    }
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "tests", "data", "dp_accounting_rdp.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases and {len(curves)} curves to {path}")


if __name__ == "__main__":
    main()
