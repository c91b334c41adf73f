#!/usr/bin/env python3
"""Standard optimisers on the Table 1 protocol (issue 14): CMA-ES, COBYQA and
random search, each with the federation's 540 evaluations in one place.

Issue 14 says "standard methods with the same 540 evaluations reach 14-15"
of 20 at or below the best published baseline of paper 004's Table 1; none
had been run. This script runs them beside fedhe, on fedhe's own
CEC-2005 implementations (`fedhe objective eval`), D = 10, the official
boxes, inputs mapped to the unit cube:

- `cma-es`: pycma's `CMAEvolutionStrategy` with its defaults (population
  4 + 3 ln D = 10) from a uniform random start, `sigma0 = 0.25` (pycma's
  advice: about a quarter of the domain's width), the cube's bounds by its
  default boundary handling, 54 generations of 10 = 540 evaluations;
- `cobyqa`: `cobyqa.minimize` (Ragonneau and Zhang's derivative-free trust
  region method, SciPy's `COBYQA`) with its defaults from a uniform random
  start, `maxfev = 540`, restarted from a fresh random start when it stops
  early, until 540 evaluations are spent;
- `random-search`: 540 uniform points;
- `skopt-gp` (for the lone-agent protocol, `--budget 54`): scikit-optimize's
  `gp_minimize`, the off-the-shelf GP-EI agent issue 14 starts from, with
  its defaults (Matérn GP, `gp_hedge` acquisition, `lbfgs` acquisition
  optimiser) except `n_initial_points = 4`, the protocol's 4 random points;
- `hebo` (lone protocol, `--budget 54`): HEBO (Cowen-Rivers et al. 2022,
  the NeurIPS 2020 black-box optimisation challenge's winner), its `HEBO`
  optimiser with its defaults (its `gp` model: Matérn-3/2 ARD on inputs
  scaled to [-1, 1], fitted by pSGLD; outputs Box-Cox / Yeo-Johnson
  transformed; the MACE ensemble of EI, PI and UCB optimised by NSGA-II, a
  random point of its Pareto front taken) except `rand_sample = 4`, one
  suggestion at a time. HEBO 0.3.6 pins
  `numpy < 1.25`; it runs here beside the peers' NumPy 2 in a venv that sees
  the peers' packages (`/work/venv-hebo`, below), so the fixture records
  the versions it ran with;
- `egobox` (lone protocol, `--budget 54`): egobox's `Egor` (Lafage 2022;
  EGO on a Kriging model, a Rust port of SMT's EGO, through its
  Python binding: `pip install egobox`) with its defaults, the protocol's 4
  random points given as its initial design, then `max_iters` = the budget
  left (issue 14, item 4's Rust BO library, run as the other peers are).

CEC-2005 F4 and F17 carry noise in their values: with `--observed-noise`
(the default) the optimiser sees the noisy values (`fedhe objective eval
--noise-seed`) and a run is scored on the noise-free values of the points it
evaluated, as fedhe's agents are. The fixture is the format of
`peers_botorch.py` (`fedhe report --peers FILE`), resumable per
(function, seed). `--summary` prints, per method, the mean best per function
and how many functions are at or below the best published baseline of
`experiments/papers/paper004_table1.csv`. Never a product dependency:

    /work/venv-peers/bin/pip install cma cobyqa
    nice -n 10 /work/venv-peers/bin/python scripts/peers_standard.py --method cma-es \
        --fedhe target/release/fedhe --seeds 10 --out peers_cma_es_table1.json

HEBO's venv (its NumPy pin would downgrade the peers' venv): a venv whose
`.pth` file adds the peers' site-packages, HEBO and pymoo without their
dependencies, then what they import that the peers' venv lacks:

    python3 -m venv /work/venv-hebo
    echo /work/venv-peers/lib/python3.11/site-packages \
        > /work/venv-hebo/lib/python3.11/site-packages/peers.pth
    /work/venv-hebo/bin/pip install --no-deps HEBO==0.3.6 pymoo==0.6.0 disjoint-set \
        autograd alive-progress about-time grapheme dill Deprecated wrapt
    /work/venv-hebo/bin/pip install pandas matplotlib
    nice -n 10 /work/venv-hebo/bin/python scripts/peers_standard.py --method hebo \
        --budget 54 --seeds 5 --out peers_hebo_lone.json
"""

import argparse
import csv
import itertools
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

import fedhe_objective

warnings.filterwarnings("ignore")


class Budget(Exception):
    """The 540 evaluations are spent."""


class Problem:
    """One run's objective on the unit cube: counts evaluations, keeps the
    noise-free best, and stops the optimiser at the budget."""

    def __init__(self, fedhe, function, dim, seed, budget, observed_noise):
        self.fedhe, self.function, self.dim = fedhe, function, dim
        self.lo, self.hi = fedhe_objective.box(fedhe, function)
        self.budget, self.seed, self.observed_noise = budget, seed, observed_noise
        self.calls = itertools.count()
        self.trace = []

    def left(self):
        return self.budget - len(self.trace)

    def evaluate(self, unit_points):
        """What the optimiser sees at `unit_points` (rows in [0, 1]^D)."""
        if self.left() <= 0:
            raise Budget()
        unit_points = unit_points[: self.left()]
        points = [[self.lo + (self.hi - self.lo) * float(np.clip(u, 0.0, 1.0)) for u in row]
                  for row in unit_points]
        if self.observed_noise:
            values, seen = fedhe_objective.evaluate(
                self.fedhe, self.function, self.dim, points,
                noise_seed=self.seed * 10**6 + next(self.calls))
        else:
            values = fedhe_objective.evaluate(self.fedhe, self.function, self.dim, points)
            seen = values
        best = self.trace[-1] if self.trace else float("inf")
        for v in values:
            best = min(best, v)
            self.trace.append(best)
        return seen


def run_cma_es(problem, rng):
    import cma
    x0 = rng.uniform(size=problem.dim)
    es = cma.CMAEvolutionStrategy(x0, 0.25, {
        "bounds": [0.0, 1.0], "seed": int(rng.integers(1, 2**31)), "verbose": -9,
        "maxfevals": problem.budget})
    try:
        while problem.left() > 0:
            xs = es.ask()
            seen = problem.evaluate([list(x) for x in xs])
            if len(seen) < len(xs):
                break
            es.tell(xs, seen)
    except Budget:
        pass


def run_cobyqa(problem, rng):
    import cobyqa
    from scipy.optimize import Bounds
    while problem.left() > 0:
        x0 = rng.uniform(size=problem.dim)
        try:
            cobyqa.minimize(lambda x: problem.evaluate([list(x)])[0], x0,
                            bounds=Bounds(np.zeros(problem.dim), np.ones(problem.dim)),
                            options={"maxfev": problem.left()})
        except Budget:
            break


def run_skopt_gp(problem, rng):
    import skopt
    try:
        skopt.gp_minimize(lambda x: problem.evaluate([list(x)])[0],
                          [(0.0, 1.0)] * problem.dim, n_calls=problem.budget,
                          n_initial_points=4, random_state=int(rng.integers(1, 2**31)))
    except Budget:
        pass


def run_hebo(problem, rng):
    import torch
    from hebo.design_space.design_space import DesignSpace
    from hebo.optimizers.hebo import HEBO
    seed = int(rng.integers(1, 2**31))
    np.random.seed(seed)
    torch.manual_seed(seed)
    space = DesignSpace().parse([{"name": f"x{i}", "type": "num", "lb": 0.0, "ub": 1.0}
                                 for i in range(problem.dim)])
    opt = HEBO(space, rand_sample=4, scramble_seed=seed)
    names = [f"x{i}" for i in range(problem.dim)]
    try:
        while problem.left() > 0:
            suggestion = opt.suggest(n_suggestions=1)
            seen = problem.evaluate(suggestion[names].values.tolist())
            opt.observe(suggestion, np.array(seen, dtype=float).reshape(-1, 1))
    except Budget:
        pass


def run_egobox(problem, rng):
    import egobox as egx
    seed = int(rng.integers(1, 2**31))

    def fun(x):
        return np.array(problem.evaluate(np.asarray(x).tolist()), dtype=float).reshape(-1, 1)

    # The protocol's random points as its initial design; when it stops before
    # the budget (its "no more point to add": every infill point too close to
    # its data), it starts again from every point so far, with another seed.
    x = rng.uniform(size=(4, problem.dim))
    y = fun(x)
    restart = 0
    while problem.left() > 0:
        out = egx.Egor([[0.0, 1.0]] * problem.dim, x_doe=x, y_doe=y,
                       seed=seed + restart).minimize(fun, max_iters=problem.left())
        if len(out.x_doe) == len(x):
            sys.exit(f"{problem.function}: egobox added no point")
        x, y, restart = out.x_doe, out.y_doe, restart + 1


def run_random_search(problem, rng):
    problem.evaluate(rng.uniform(size=(problem.budget, problem.dim)).tolist())


METHODS = {"cma-es": run_cma_es, "cobyqa": run_cobyqa, "random-search": run_random_search,
           "skopt-gp": run_skopt_gp, "hebo": run_hebo, "egobox": run_egobox}


def best_published(table):
    """Task -> the lowest mean among Table 1's baselines (not FBO-FedGP)."""
    best = {}
    with open(table) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["method"] == "FBO-FedGP":
                continue
            task = row["task"].split("-")[-1]
            best[task] = min(best.get(task, float("inf")), float(row["mean"]))
    return best


def summary(paths, table):
    baseline = best_published(table)
    for path in paths:
        with open(path) as f:
            fixture = json.load(f)
        by = {}
        for run in fixture["runs"].values():
            by.setdefault(run["function"], []).append(run["best"])
        met = []
        print(f"{fixture['label']} ({path}):")
        for fn in sorted(by, key=lambda s: int(s[1:])):
            mean = statistics.fmean(by[fn])
            ok = mean <= baseline[fn]
            met += [fn] if ok else []
            print(f"  {fn:>4}: n {len(by[fn]):2}  mean {mean:12.6g}  median "
                  f"{statistics.median(by[fn]):12.6g}  best published {baseline[fn]:10.6g}"
                  f"  {'<=' if ok else '> '}")
        print(f"  mean <= best published baseline on {len(met)} of {len(by)}: {', '.join(met)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", choices=sorted(METHODS))
    ap.add_argument("--fedhe", default="target/release/fedhe")
    ap.add_argument("--functions", default=",".join(str(i) for i in range(1, 21)))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--budget", type=int, default=540,
                    help="evaluations per run (Table 1: 10 members x (4 + 50))")
    ap.add_argument("--noise-free", action="store_true",
                    help="let the optimiser see F4 and F17 without their noise")
    ap.add_argument("--out")
    ap.add_argument("--summary", nargs="+", metavar="FIXTURE",
                    help="print the fixtures' means against Table 1's best baseline")
    ap.add_argument("--table", default="experiments/papers/paper004_table1.csv")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary, a.table)
        return
    if not a.method or not a.out:
        sys.exit("--method and --out are required (or --summary FIXTURE ...)")
    import cobyqa
    import cma
    import scipy
    fixture = {"runs": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            fixture = json.load(f)
    fixture["label"] = a.method
    # Table 1's 540 evaluations are traced per round of 10; any other budget
    # (the lone protocol's 54) per evaluation.
    table1 = a.budget == 540
    fixture["protocol"] = (
        f"{a.budget} evaluations in one place (Table 1: 10 members x (4 + 50), no privacy), "
        f"CEC-2005 D = {a.dim}, unit-cube inputs" if table1 else
        f"{a.budget} evaluations of one agent (lone protocol: 4 random + 50 steps), "
        f"CEC-2005 D = {a.dim}, unit-cube inputs")
    fixture["method"] = {
        "cma-es": "pycma CMAEvolutionStrategy, defaults (popsize 10), sigma0 = 0.25, "
                  "x0 uniform, bounds [0, 1]",
        "cobyqa": "cobyqa.minimize, defaults, x0 uniform, bounds [0, 1], restarted "
                  "from a uniform point until the budget is spent",
        "random-search": "uniform points",
        "skopt-gp": "skopt.gp_minimize, defaults but n_initial_points = 4",
        "hebo": "hebo.optimizers.hebo.HEBO, defaults but rand_sample = 4, one suggestion "
                "at a time",
        "egobox": "egobox.Egor (EGO), defaults, the 4 random points as x_doe/y_doe, "
                  "max_iters = the budget left; restarted from every point so far if it "
                  "stops early",
    }[a.method]
    fixture["noise"] = ("none: F4 and F17 evaluated noise-free" if a.noise_free else
                        "observed: the optimiser sees F4's and F17's own noise, the trace "
                        "scores the noise-free values")
    fixture["command"] = " ".join(["python3"] + sys.argv)
    fixture["versions"] = {"python": platform.python_version(), "numpy": np.__version__,
                           "scipy": scipy.__version__, "cma": cma.__version__,
                           "cobyqa": cobyqa.__version__}
    if a.method == "skopt-gp":
        import sklearn
        import skopt
        fixture["versions"] |= {"scikit-optimize": skopt.__version__,
                                "scikit-learn": sklearn.__version__}
    if a.method == "hebo":
        from importlib.metadata import version
        import torch
        torch.set_num_threads(1)
        fixture["versions"] |= {"HEBO": version("HEBO"), "pymoo": version("pymoo"),
                                "torch": torch.__version__, "pandas": version("pandas")}
    if a.method == "egobox":
        from importlib.metadata import version
        fixture["versions"] |= {"egobox": version("egobox")}
    for seed, fn, key in fedhe_objective.pending_runs(fixture, a.seeds, a.functions):
        start = time.time()
        problem = Problem(a.fedhe, f"cec2005-f{fn}", a.dim, seed, a.budget,
                          not a.noise_free)
        METHODS[a.method](problem, np.random.default_rng([seed, fn]))
        if len(problem.trace) != a.budget:
            sys.exit(f"{key}: {len(problem.trace)} evaluations, not {a.budget}")
        stride = 10 if table1 else 1
        fedhe_objective.record_run(fixture, a.out, key, f"f{fn}", seed,
                                   problem.trace[stride - 1::stride], start)


if __name__ == "__main__":
    main()
