#!/usr/bin/env python3
"""BoTorch's lone agent moved one component at a time toward fedhe's (issue 14).

The protocol and the evaluation are those of `scripts/peers_botorch.py` (4
uniform random points from `torch.manual_seed(seed)`, then 50 steps; values from
`fedhe objective eval`), so with every switch at its default a run repeats the
peer's run of the same seed. Each switch replaces one BoTorch choice by fedhe's
(`crates/algorithms/src/fbo_fedgp/params.rs::fit_config`, `run.rs::independent_bo`):

  --kernel matern   Matérn-5/2 instead of RBF (same length-scale prior)
  --scale fedhe     a ScaleKernel whose output scale is fitted in [0.05, 20]
                    with no prior (BoTorch 0.18 has no ScaleKernel: σ_f² = 1)
  --mean zero       ZeroMean instead of a fitted ConstantMean
  --bounds fedhe    length-scales in [0.01, 100] (BoTorch: > 0.025)
  --noise fedhe     noise in [1e-4, 1] without BoTorch's LogNormal(-4, 1) prior
  --refit-every 5   refit only every 5 steps (the others reuse the last fit)
  --fit fedhe       fedhe's fit: start from the previous fit plus 3 log-uniform
                    random starts in fedhe's box, the best MAP kept
  --acq ucb         UCB with β = 1 (μ + σ) instead of qLogEI
  --optimiser fedhe fedhe's acquisition optimiser (`fedhe_bo::optim::maximize_near`
                    with its defaults): 500 uniform candidates and 500 Gaussian
                    perturbations (σ = 0.01, 0.05, 0.2 of the box) of the 5 best
                    points (the points themselves included), the 2 best polished
                    by L-BFGS-B for at most 30 iterations (BoTorch: 512 Sobol'
                    raw samples, 10 Boltzmann restarts, up to 200 iterations)

    nice -n 19 /work/venv-peers/bin/python scripts/peers_botorch_ablation.py \
        --fedhe /tmp/peers/fedhe --functions 2,5 --seeds 0,1,2,3 --scale fedhe \
        --label scale --out /tmp/diag14/ablation.json
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

import torch
import botorch
from botorch.acquisition import UpperConfidenceBound
from botorch.acquisition.logei import qLogExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean, ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fedhe_objective  # noqa: E402
from peers_botorch import evaluate  # noqa: E402

warnings.filterwarnings("ignore")
torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)

LS_BOX = (1e-2, 1e2)      # fedhe fit_config, dim-scaled prior
SV_BOX = (0.05, 20.0)
NOISE_BOX = (1e-4, 1.0)


def build(x, train_y, a):
    dim = x.shape[-1]
    prior = LogNormalPrior(loc=math.sqrt(2) + 0.5 * math.log(dim), scale=math.sqrt(3))
    if a.bounds == "fedhe":
        ls_c = Interval(*LS_BOX, transform=None, initial_value=prior.mode)
    else:
        ls_c = GreaterThan(2.5e-2, transform=None, initial_value=prior.mode)
    cls = RBFKernel if a.kernel == "rbf" else MaternKernel
    extra = {} if a.kernel == "rbf" else {"nu": 2.5}
    covar = cls(ard_num_dims=dim, lengthscale_prior=prior, lengthscale_constraint=ls_c, **extra)
    if a.scale == "fedhe":
        covar = ScaleKernel(covar, outputscale_constraint=Interval(
            *SV_BOX, transform=None, initial_value=1.0))
    if a.noise == "fedhe":
        lik = GaussianLikelihood(noise_constraint=Interval(
            *NOISE_BOX, transform=None, initial_value=1e-2))
    else:
        lik = None  # BoTorch's LogNormal(-4, 1) prior, > 1e-4
    mean = ZeroMean() if a.mean == "zero" else ConstantMean()
    return SingleTaskGP(x, train_y, likelihood=lik, covar_module=covar, mean_module=mean)


def hyper_state(model):
    """The fitted hyper-parameters (not the outcome transform's statistics)."""
    return {k: v.clone() for k, v in model.state_dict().items()
            if not k.startswith("outcome_transform")}


def log_box(a, dim):
    """fedhe's log-uniform start box, in the model's raw (natural) parameters."""
    ls = LS_BOX if a.bounds == "fedhe" else (2.5e-2, LS_BOX[1])
    return ls, SV_BOX, NOISE_BOX


def fit_fedhe(model, previous, a, gen):
    """fedhe's multi-start fit: the previous fit (or the initial values) and 3
    log-uniform random starts, each L-BFGS-B to convergence, the best MAP kept."""
    dim = model.train_inputs[0].shape[-1]
    starts = [previous] + [None] * 3
    best = None
    ls_b, sv_b, n_b = log_box(a, dim)

    def lu(lo, hi, shape):
        return torch.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * torch.rand(shape, generator=gen))

    for s in starts:
        if s is not None:
            model.load_state_dict(s, strict=False)
        else:
            base = model.covar_module.base_kernel if a.scale == "fedhe" else model.covar_module
            base.lengthscale = lu(*ls_b, (1, dim))
            if a.scale == "fedhe":
                model.covar_module.outputscale = lu(*sv_b, ())
            model.likelihood.noise = lu(*n_b, (1,))
            if a.mean != "zero":
                model.mean_module.constant.data.fill_(0.0)
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        try:
            fit_gpytorch_mll(mll, optimizer_kwargs={"options": {"maxiter": 50}},
                             max_attempts=1)
        except Exception:
            pass
        model.train()
        with torch.no_grad():
            out = model(*model.train_inputs)
            val = float(mll(out, model.train_targets))
        model.eval()
        if math.isfinite(val) and (best is None or val > best[0]):
            best = (val, hyper_state(model))
    if best is not None:
        model.load_state_dict(best[1], strict=False)


def lone(fedhe, function, dim, seed, initial, steps, a):
    lo, hi = fedhe_objective.box(fedhe, function)
    lower, upper = [lo] * dim, [hi] * dim
    torch.manual_seed(seed)
    x = torch.rand(initial, dim)
    y = evaluate(fedhe, function, dim, lower, upper, x)
    bounds = torch.stack([torch.zeros(dim), torch.ones(dim)])
    gen = torch.Generator().manual_seed(1000 + seed)
    state = None
    fits = []
    for step in range(steps):
        train_y = -torch.tensor(y).unsqueeze(-1)
        model = build(x, train_y, a)
        refit = state is None or step % a.refit_every == 0
        if refit:
            if a.fit == "fedhe":
                fit_fedhe(model, state, a, gen)
            else:
                fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            state = hyper_state(model)
        else:
            model.load_state_dict(state, strict=False)
        model.eval()
        if a.acq == "ucb":
            acq = UpperConfidenceBound(model, beta=1.0)
        else:
            acq = qLogExpectedImprovement(model, best_f=train_y.max())
        if a.optimiser == "fedhe":
            cand = fedhe_optimiser(acq, x, train_y, bounds, gen)
        else:
            cand, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
        if refit:
            fits.append(describe(model, a, step))
        y += evaluate(fedhe, function, dim, lower, upper, cand)
        x = torch.cat([x, cand])
    best, trace = float("inf"), []
    for v in y:
        best = min(best, v)
        trace.append(best)
    return trace, fits


def fedhe_optimiser(acq, x, train_y, bounds, gen, n=1000, polish=2, iters=30):
    dim = x.shape[-1]
    anchors = x[torch.argsort(train_y.squeeze(-1), descending=True)[:5]]
    near = [anchors]
    sigmas = [0.01, 0.05, 0.2]
    i = len(anchors)
    while i < n // 2:
        k = i - len(anchors)
        a_ = anchors[k % len(anchors)]
        sd = sigmas[(k // len(anchors)) % len(sigmas)]
        near.append((a_ + sd * torch.randn(dim, generator=gen)).clamp(0, 1).unsqueeze(0))
        i += 1
    raw = torch.cat([torch.rand(n - n // 2, dim, generator=gen)] + near)
    with torch.no_grad():
        vals = torch.cat([acq(c.unsqueeze(1)) for c in raw.split(256)])
    top = raw[torch.argsort(vals, descending=True)[:polish]].unsqueeze(1)
    cands, vals = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=polish,
                                batch_initial_conditions=top, options={"maxiter": iters},
                                return_best_only=False)
    return cands[torch.argmax(vals.view(-1))].view(1, dim)


def describe(model, a, step):
    c = model.covar_module
    base = c.base_kernel if a.scale == "fedhe" else c
    ls = base.lengthscale.detach().flatten()
    return {
        "step": step,
        "ls_median": float(ls.median()), "ls_min": float(ls.min()), "ls_max": float(ls.max()),
        "signal": float(c.outputscale) if a.scale == "fedhe" else 1.0,
        "noise": float(model.likelihood.noise.detach().flatten()[0]),
        "mean": float(model.mean_module.constant) if a.mean != "zero" else 0.0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fedhe", default="target/release/fedhe")
    ap.add_argument("--functions", default="2,5")
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--initial", type=int, default=4)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--kernel", choices=["rbf", "matern"], default="rbf")
    ap.add_argument("--scale", choices=["none", "fedhe"], default="none")
    ap.add_argument("--mean", choices=["constant", "zero"], default="constant")
    ap.add_argument("--bounds", choices=["botorch", "fedhe"], default="botorch")
    ap.add_argument("--noise", choices=["botorch", "fedhe"], default="botorch")
    ap.add_argument("--refit-every", type=int, default=1)
    ap.add_argument("--fit", choices=["botorch", "fedhe"], default="botorch")
    ap.add_argument("--acq", choices=["logei", "ucb"], default="logei")
    ap.add_argument("--optimiser", choices=["botorch", "fedhe"], default="botorch")
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    fixture = {"runs": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            fixture = json.load(f)
    fixture.setdefault("variants", {})[a.label] = {
        k: getattr(a, k) for k in ["kernel", "scale", "mean", "bounds", "noise",
                                   "refit_every", "fit", "acq", "optimiser"]}
    fixture["versions"] = {"torch": torch.__version__, "botorch": botorch.__version__}
    for seed in [int(s) for s in a.seeds.split(",")]:
        for fn in [int(v) for v in a.functions.split(",")]:
            key = f"{a.label}/f{fn}/{seed}"
            if key in fixture["runs"]:
                continue
            start = time.time()
            trace, fits = lone(a.fedhe, f"cec2005-f{fn}", a.dim, seed, a.initial, a.steps, a)
            fedhe_objective.record_run(fixture, a.out, key, f"f{fn}", seed, trace, start,
                                       label=a.label, fits=fits)


if __name__ == "__main__":
    main()
