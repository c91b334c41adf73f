#!/usr/bin/env python3
"""Lone peers on the mixed benchmarks (issue 46, item 6), under the
federation's per-member budget: each peer is one institution alone,
optimising CoCaBO's Func2C / Func3C (scripts/mixed_fixtures.py's
definitions, the authors' code) over the same typed space fedhe signs
(x1, x2 floats in [-1, 1]; h1, h2 (, h3) categoricals of 3, 5 (, 4) integer
choices), with the same number of evaluations.

- `optuna-tpe`: Optuna's TPESampler with its defaults (10 random start-up
  trials), `seed` = the run's seed;
- `optuna-random`: Optuna's RandomSampler;
- `optuna-gp`: Optuna's GPSampler with its defaults (needs torch; skipped,
  and said so, when torch is not installed);
- `botorch-mixed`: BoTorch's MixedSingleTaskGP (a categorical kernel on the
  categoricals, Matérn-5/2 on the floats) and LogEI, optimised by
  `optimize_acqf_mixed` over every combination of the categoricals
  (enumeration: 15 and 60 of them), after the protocol's 5 random initial
  points (skipped, and said so, when botorch is not installed);
- `hebo`: HEBO with its defaults, the categoricals as its `cat` parameters,
  after 5 random initial points (skipped, and said so, when HEBO is not
  installed).

The mixed SVM tasks (`pima-svm-mixed`, `breast-cancer-svm-mixed`; the kernel
a categorical, C and gamma log floats, the degree an int) have an objective
per clinic: each peer runs once per clinic and seed, on that clinic's
objective alone, evaluated by fedhe itself (`fedhe objective eval --client`,
the same linfa SVM the members train). The studies advance in lockstep
(Optuna's ask and tell), so that one `fedhe` call evaluates a step of every
study of a clinic.

Usage: peers_mixed.py --budget B --seeds S --out FILE.json
           [--tasks func2c,func3c,pima-svm-mixed,...] [--peers optuna-tpe,...]
           [--fedhe PATH]
Prints and writes, per task and peer, every seed's best value (for an SVM
task every seed's and clinic's, seed-major)."""

import argparse
import importlib.util
import itertools
import json
import statistics
import os
import subprocess
import sys
import tempfile

import optuna

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mixed_fixtures import func2C, func3C  # noqa: E402

TASKS = {
    "func2c": (func2C, [3, 5]),
    "func3c": (func3C, [3, 5, 4]),
}


# The mixed SVM tasks and their number of clinics.
SVM_TASKS = {"pima-svm-mixed": 5, "breast-cancer-svm-mixed": 5}


def svm_suggest(trial):
    """The `*-svm-mixed` space (crates/tasks/src/svm/mod.rs, `mixed_space`)."""
    return {
        "kernel": trial.suggest_categorical("kernel", ["rbf", "poly", "linear"]),
        "C": trial.suggest_float("C", 1e-2, 1e3, log=True),
        "gamma": trial.suggest_float("gamma", 1e-4, 10.0, log=True),
        "degree": trial.suggest_int("degree", 2, 5),
    }


def svm_values(fedhe, task, client, params):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"params": params}, f)
        path = f.name
    try:
        out = subprocess.run([fedhe, "objective", "eval", "--function", task, "--dim", "6",
                              "--client", str(client), "--points", path],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)["values"]


def svm_peer(fedhe, task, peer, budget, seeds):
    """Every (seed, clinic)'s best value of `peer` on `task`, in lockstep."""
    clients = SVM_TASKS[task]
    studies = {(seed, c): optuna.create_study(direction="minimize",
                                              sampler=sampler(peer, seed * 1000 + c))
               for seed in range(seeds) for c in range(clients)}
    for _ in range(budget):
        trials = {key: s.ask() for key, s in studies.items()}
        for c in range(clients):
            keys = [k for k in studies if k[1] == c]
            params = [svm_suggest(trials[k]) for k in keys]
            for k, v in zip(keys, svm_values(fedhe, task, c, params)):
                studies[k].tell(trials[k], v)
    return [studies[(seed, c)].best_value for seed in range(seeds) for c in range(clients)]


def objective_for(name):
    f, sizes = TASKS[name]

    def objective(trial):
        x = [trial.suggest_float("x1", -1.0, 1.0), trial.suggest_float("x2", -1.0, 1.0)]
        h = [trial.suggest_categorical(f"h{k + 1}", list(range(n))) for k, n in enumerate(sizes)]
        return f(h, x)

    return objective


def botorch_mixed(task, budget, seed, n_init=5):
    import numpy as np
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import MixedSingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.optim import optimize_acqf_mixed
    from gpytorch.mlls import ExactMarginalLogLikelihood

    f, sizes = TASKS[task]
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    d = 2 + len(sizes)

    def evaluate(x):
        return f([int(round(v)) for v in x[2:]], np.array(x[:2]))

    xs, ys = [], []
    for _ in range(n_init):
        x = list(rng.uniform(-1, 1, 2)) + [int(rng.integers(k)) for k in sizes]
        xs.append(x)
        ys.append(evaluate(x))
    bounds = torch.tensor(
        [[-1.0, -1.0] + [0.0] * len(sizes), [1.0, 1.0] + [k - 1.0 for k in sizes]],
        dtype=torch.double,
    )
    fixed = [
        {2 + j: float(c[j]) for j in range(len(sizes))}
        for c in itertools.product(*[range(k) for k in sizes])
    ]
    while len(ys) < budget:
        tx = torch.tensor(xs, dtype=torch.double)
        ty = -torch.tensor(ys, dtype=torch.double).unsqueeze(-1)
        model = MixedSingleTaskGP(tx, ty, cat_dims=list(range(2, d)), outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = LogExpectedImprovement(model, best_f=ty.max())
        cand, _ = optimize_acqf_mixed(
            acq, bounds=bounds, q=1, num_restarts=2, raw_samples=32, fixed_features_list=fixed
        )
        x = cand[0].tolist()
        x[2:] = [int(round(v)) for v in x[2:]]
        xs.append(x)
        ys.append(evaluate(x))
    return min(ys)


def hebo_mixed(task, budget, seed, n_init=5):
    """HEBO (Cowen-Rivers et al. 2022) with its defaults (MACE on a GP with
    input and output warping, NSGA-II over the acquisitions), the
    categoricals as HEBO's own `cat` parameters, `n_init` random points
    first; seeded through numpy, torch and HEBO's scramble seed."""
    import numpy as np
    import torch
    from hebo.design_space.design_space import DesignSpace
    from hebo.optimizers.hebo import HEBO

    f, sizes = TASKS[task]
    np.random.seed(seed)
    torch.manual_seed(seed)
    space = DesignSpace().parse(
        [{"name": f"x{k + 1}", "type": "num", "lb": -1.0, "ub": 1.0} for k in range(2)]
        + [{"name": f"h{k + 1}", "type": "cat", "categories": [str(c) for c in range(n)]}
           for k, n in enumerate(sizes)]
    )
    opt = HEBO(space, rand_sample=n_init, scramble_seed=seed)
    best = float("inf")
    for _ in range(budget):
        rec = opt.suggest(n_suggestions=1)
        row = rec.iloc[0]
        y = f([int(row[f"h{k + 1}"]) for k in range(len(sizes))],
              np.array([float(row["x1"]), float(row["x2"])]))
        opt.observe(rec, np.array([[y]]))
        best = min(best, y)
    return best


def sampler(peer, seed):
    if peer == "optuna-tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if peer == "optuna-random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.GPSampler(seed=seed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tasks", default=",".join(list(TASKS) + list(SVM_TASKS)))
    ap.add_argument("--fedhe", default="target/release/fedhe")
    ap.add_argument("--peers", default=None,
                    help="a comma-separated subset of the peers (default: every one installed)")
    args = ap.parse_args()
    tasks = args.tasks.split(",")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    peers = ["optuna-tpe", "optuna-random"]
    if importlib.util.find_spec("torch") is not None:
        peers.append("optuna-gp")
    else:
        print("optuna-gp not run: torch is not installed", file=sys.stderr)
    if importlib.util.find_spec("botorch") is not None:
        peers.append("botorch-mixed")
    else:
        print("botorch-mixed not run: botorch is not installed", file=sys.stderr)
    if importlib.util.find_spec("hebo") is not None:
        peers.append("hebo")
    else:
        print("hebo not run: HEBO is not installed", file=sys.stderr)
    if args.peers:
        peers = [p for p in peers if p in args.peers.split(",")]
    out = {"budget": args.budget, "seeds": args.seeds, "optuna": optuna.__version__, "best": {}}
    for task in tasks:
        for peer in peers:
            if task in SVM_TASKS:
                if peer in ("botorch-mixed", "hebo"):
                    print(task, peer, "not run: written for the benchmarks' integer categoricals",
                          file=sys.stderr)
                    continue
                bests = svm_peer(args.fedhe, task, peer, args.budget, args.seeds)
                out["best"].setdefault(task, {})[peer] = bests
                print(task, peer, "median best", statistics.median(bests), flush=True)
                continue
            bests = []
            for seed in range(args.seeds):
                if peer == "botorch-mixed":
                    bests.append(botorch_mixed(task, args.budget, seed))
                    print(task, peer, "seed", seed, bests[-1], flush=True)
                    continue
                if peer == "hebo":
                    bests.append(hebo_mixed(task, args.budget, seed))
                    print(task, peer, "seed", seed, bests[-1], flush=True)
                    continue
                study = optuna.create_study(direction="minimize", sampler=sampler(peer, seed))
                study.optimize(objective_for(task), n_trials=args.budget)
                bests.append(study.best_value)
            out["best"].setdefault(task, {})[peer] = bests
            print(task, peer, "median best", statistics.median(bests))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
