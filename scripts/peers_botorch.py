#!/usr/bin/env python3
"""Peer of fedhe's lone agent (issue 14): BoTorch with its documented defaults.

Protocol (the lone agent's): 4 uniform random points, then 50 steps of
`SingleTaskGP` (BoTorch's defaults: dimension-scaled length-scale prior,
`Standardize` outcome transform) fitted with `fit_gpytorch_mll`, and
`qLogExpectedImprovement` (q = 1) maximised by `optimize_acqf` with
`num_restarts=10, raw_samples=512` (the values BoTorch's tutorials use). Inputs
live in the unit cube; every value comes from `fedhe objective eval`, so the
functions are fedhe's own CEC-2005 implementations.

With `--batch 10` it is the pooled batch agent (issue 14, item 4b): the
federation's 10 x (4 + 50) evaluations with every point in one place, 40
random points and then 50 batches of q = 10 by joint qLogEI.

Runs are resumable per (function, seed): the fixture is rewritten after each
one and finished pairs are skipped. Never a product dependency: run it from a
venv outside the repository, e.g.

    python3 -m venv /work/venv-peers && /work/venv-peers/bin/pip install botorch
    nice -n 10 /work/venv-peers/bin/python scripts/peers_botorch.py \
        --fedhe target/release/fedhe --functions 1,2,6,9 --seeds 5 \
        --out docs/results/optimiser-2026-11-23/peers_botorch_lone.json
"""

import argparse
import json
import os
import platform
import sys
import time
import warnings

import fedhe_objective

import torch
import botorch
import gpytorch
from botorch.acquisition.logei import qLogExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from gpytorch.mlls import ExactMarginalLogLikelihood

warnings.filterwarnings("ignore")
torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)


def evaluate(fedhe, function, dim, lower, upper, unit, noise_seed=None):
    """fedhe's values at unit-cube points (rows of `unit`); with
    `noise_seed`, `(values, observed)` (see `fedhe_objective.evaluate`)."""
    points = [[lo + (hi - lo) * float(u) for u, lo, hi in zip(row, lower, upper)]
              for row in unit.tolist()]
    return fedhe_objective.evaluate(fedhe, function, dim, points, noise_seed)


def lone(fedhe, function, dim, seed, initial, steps, q=1, observed_noise=False):
    """One agent; returns the best-so-far trace (minimisation), one entry per
    evaluation. With q > 1 it is the pooled batch agent: q * initial random
    points (every member's initial design in one place), then `steps` batches
    of q points, each batch maximising the joint qLogEI (BoTorch's default
    for a batch)."""
    lo, hi = fedhe_objective.box(fedhe, function)
    lower, upper = [lo] * dim, [hi] * dim
    torch.manual_seed(seed)
    calls = iter(range(10**6))

    def observe(unit):
        """(scored, seen): noise-free values and what the model is fitted to
        (noisy for F4 and F17 with `observed_noise`, a fresh noise seed per
        call)."""
        if not observed_noise:
            v = evaluate(fedhe, function, dim, lower, upper, unit)
            return v, list(v)  # two lists: each grows on its own
        return evaluate(fedhe, function, dim, lower, upper, unit,
                        noise_seed=seed * 10**6 + next(calls))

    x = torch.rand(q * initial, dim)
    y, seen = observe(x)
    bounds = torch.stack([torch.zeros(dim), torch.ones(dim)])
    for step in range(steps):
        started = time.time()
        train_y = -torch.tensor(seen).unsqueeze(-1)  # BoTorch maximises
        model = SingleTaskGP(x, train_y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = qLogExpectedImprovement(model, best_f=train_y.max())
        cand, _ = optimize_acqf(acq, bounds=bounds, q=q, num_restarts=10, raw_samples=512)
        scored, observed = observe(cand)
        y += scored
        seen += observed
        x = torch.cat([x, cand])
        if q > 1:
            print(f"  batch {step + 1}/{steps}: {len(y)} points, best {min(y):.6g}, "
                  f"{time.time() - started:.1f} s", flush=True)
    best, trace = float("inf"), []
    for v in y:
        best = min(best, v)
        trace.append(best)
    return trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fedhe", default="target/release/fedhe")
    ap.add_argument("--functions", default="1,2,6,9")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--initial", type=int, default=4)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=1,
                    help="q: the pooled batch agent of a q-member federation when > 1")
    ap.add_argument("--observed-noise", action="store_true",
                    help="fit the model to the values with the function's own noise "
                         "(CEC-2005 F4, F17; `fedhe objective eval --noise-seed`), as "
                         "fedhe's agents observe them, and score the noise-free ones; "
                         "without it a peer sees F4 and F17 noise-free (F2 and F16)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    fixture = {"runs": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            fixture = json.load(f)
    if a.batch > 1:
        fixture["label"] = f"botorch-pooled-q{a.batch}"
        fixture["protocol"] = (f"pooled batch agent: {a.batch} x {a.initial} uniform random + "
                               f"{a.steps} batches of q = {a.batch}, CEC-2005 D = {a.dim}, "
                               "unit-cube inputs (a federation's evaluations, no privacy)")
    else:
        fixture["label"] = "botorch"
        fixture["protocol"] = (f"lone agent: {a.initial} uniform random + {a.steps} steps, "
                               f"CEC-2005 D = {a.dim}, unit-cube inputs")
    fixture["method"] = ("BoTorch SingleTaskGP (defaults) + qLogExpectedImprovement, "
                         f"optimize_acqf(q={a.batch}, num_restarts=10, raw_samples=512)")
    fixture["noise"] = ("observed: the model sees F4's and F17's own noise, the trace "
                        "scores the noise-free values" if a.observed_noise else
                        "none: F4 and F17 evaluated noise-free")
    fixture["command"] = " ".join(["python3"] + sys.argv)
    fixture["versions"] = {"python": platform.python_version(), "torch": torch.__version__,
                           "botorch": botorch.__version__, "gpytorch": gpytorch.__version__}
    for seed, fn, key in fedhe_objective.pending_runs(fixture, a.seeds, a.functions):
        start = time.time()
        trace = lone(a.fedhe, f"cec2005-f{fn}", a.dim, seed, a.initial, a.steps, a.batch,
                     a.observed_noise)
        fedhe_objective.record_run(fixture, a.out, key, f"f{fn}", seed, trace, start)


if __name__ == "__main__":
    main()
