#!/usr/bin/env python3
"""Writes reference fixtures for the fedhe GP and acquisition tests.

Not run by CI; run it by hand and commit what it writes:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install scikit-learn numpy scipy mpmath
    /tmp/venv/bin/python scripts/gp_fixtures.py

Outputs (in tests/data/):
- sklearn_gp.json: posterior mean and latent variance of scikit-learn's
  GaussianProcessRegressor with a fixed kernel (optimizer=None,
  normalize_y=False, noise variance in `alpha`, so `return_std` is the
  standard deviation of the latent f), for SE (ConstantKernel * RBF) and
  Matern(nu=2.5), isotropic and ARD.
- acquisition.json: expected improvement and its logarithm computed with
  mpmath at 50 significant digits, including far in the lower tail.
"""
import json
import os

import mpmath
import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def gp_case(name, kind, dim, lengthscale, variance, noise, n_train, n_test, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(n_train, dim))
    y = np.sin(6.0 * x[:, 0]) + 0.5 * np.cos(3.0 * x.sum(axis=1)) + 0.1 * rng.standard_normal(n_train)
    xs = rng.uniform(-0.1, 1.1, size=(n_test, dim))
    ls = np.asarray(lengthscale, dtype=float)
    base = RBF(length_scale=ls) if kind == "se" else Matern(length_scale=ls, nu=2.5)
    kernel = ConstantKernel(variance, constant_value_bounds="fixed") * base
    gpr = GaussianProcessRegressor(kernel=kernel, alpha=noise, optimizer=None, normalize_y=False)
    gpr.fit(x, y)
    mean, std = gpr.predict(xs, return_std=True)
    return {
        "name": name,
        "kernel": kind,
        "lengthscale": ls.tolist() if ls.ndim else [float(ls)] * dim,
        "isotropic": ls.ndim == 0,
        "variance": variance,
        "noise": noise,
        "x_train": x.tolist(),
        "y_train": y.tolist(),
        "x_test": xs.tolist(),
        "mean": mean.tolist(),
        "variance_latent": (std**2).tolist(),
    }


def acquisition_cases():
    mpmath.mp.dps = 50
    out = []
    # EI = E[max(f - best, 0)] for f ~ N(mu, sigma^2) (maximisation):
    # sigma * (z Phi(z) + phi(z)), z = (mu - best) / sigma.
    for mu, sigma, best in [
        (-0.5, 1.0, 0.0),
        (0.3, 0.7, 0.1),
        (1.0, 2.0, -1.0),
        (-5.0, 1.0, 0.0),
        (-12.0, 1.0, 0.0),
        (-40.0, 1.0, 0.0),
        (-1000.0, 10.0, 0.0),
        (-3.0, 0.5, 0.25),
    ]:
        z = (mpmath.mpf(mu) - best) / sigma
        ei = sigma * (z * mpmath.ncdf(z) + mpmath.npdf(z))
        pi = mpmath.ncdf(z)
        out.append(
            {
                "mean": mu,
                "sigma": sigma,
                "best": best,
                "ei": float(ei),
                "log_ei": float(mpmath.log(ei)),
                "pi": float(pi),
                "log_pi": float(mpmath.log(pi)),
            }
        )
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [
        gp_case("se_1d", "se", 1, 0.3, 1.0, 1e-2, 12, 9, 1),
        gp_case("se_3d_iso", "se", 3, 0.5, 2.0, 1e-3, 25, 10, 2),
        gp_case("matern52_3d_iso", "matern52", 3, 0.7, 1.5, 1e-2, 25, 10, 3),
        gp_case("se_4d_ard", "se", 4, [0.3, 0.8, 1.5, 0.5], 0.8, 1e-4, 30, 10, 4),
        gp_case("matern52_2d_ard", "matern52", 2, [0.2, 0.6], 1.2, 1e-3, 20, 10, 5),
    ]
    with open(os.path.join(OUT, "sklearn_gp.json"), "w") as f:
        json.dump({"generator": "scripts/gp_fixtures.py (scikit-learn GaussianProcessRegressor)", "cases": cases}, f, indent=1)
    with open(os.path.join(OUT, "acquisition.json"), "w") as f:
        json.dump({"generator": "scripts/gp_fixtures.py (mpmath, 50 digits)", "cases": acquisition_cases()}, f, indent=1)
    # One case as separate train/test files for the `fedhe gp predict` CLI test.
    c = cases[2]
    with open(os.path.join(OUT, "cli_gp_train.json"), "w") as f:
        json.dump({"x": c["x_train"], "y": c["y_train"]}, f)
    with open(os.path.join(OUT, "cli_gp_test.json"), "w") as f:
        json.dump({"x": c["x_test"]}, f)


if __name__ == "__main__":
    main()
