#!/usr/bin/env python3
"""Reference values of the mixed SVM tasks' objective (issue 46, item 6) for
crates/tasks/tests/svm_mixed.rs: scikit-learn's SVC (libsvm; tol 1e-3, no
shrinking, as fedhe's linfa-svm fits) with the kernels the `*-svm-mixed`
tasks search, `rbf`, `poly` (gamma, coef0 = 1, degree) and `linear`, trained
on each client's standardised training split and scored on its validation
split. The splits are fedhe's own (printed by the `svm_clients` example), so
only the classifier is independent.

Usage: svm_fixtures.py [--out crates/tasks/tests/data/svm_mixed.json]
Needs scikit-learn and numpy, and cargo to print the clients."""

import argparse
import json
import os
import subprocess

import numpy as np
from sklearn.svm import SVC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = ["pima-svm", "breast-cancer-svm"]
SETTINGS_PER_TASK = 12
SEED = 20261206


def clients(task):
    out = subprocess.run(
        ["cargo", "run", "-q", "--locked", "-p", "fedhe-tasks", "--example", "svm_clients", "--", task],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["clients"]


def settings(rng):
    """Seeded draws from the mixed space: kernel uniform, C in [1e-2, 1e3]
    and gamma in [1e-4, 10] log-uniform, degree in 2..=5."""
    out = []
    for _ in range(SETTINGS_PER_TASK):
        out.append({
            "kernel": ["rbf", "poly", "linear"][int(rng.integers(3))],
            "C": float(10 ** rng.uniform(-2, 3)),
            "gamma": float(10 ** rng.uniform(-4, 1)),
            "degree": int(rng.integers(2, 6)),
        })
    return out


def error(client, s):
    train_y = np.array(client["train_y"])
    validation_y = np.array(client["validation_y"])
    if train_y.all() or not train_y.any():
        return float(np.mean(validation_y != train_y[0]))
    model = SVC(kernel=s["kernel"], C=s["C"], gamma=s["gamma"], degree=s["degree"],
                coef0=1.0, tol=1e-3, shrinking=False, max_iter=-1)
    model.fit(np.array(client["train_x"]), train_y)
    predicted = model.predict(np.array(client["validation_x"]))
    return float(np.mean(predicted != validation_y))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(
        ROOT, "crates/tasks/tests/data/svm_mixed.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    cases = []
    for task in TASKS:
        data = clients(task)
        for s in settings(rng):
            for i, c in enumerate(data):
                cases.append({"task": task + "-mixed", "client": i, "params": s,
                              "validation_rows": len(c["validation_y"]),
                              "error": error(c, s)})
    with open(args.out, "w") as f:
        json.dump({"source": "scikit-learn " + __import__("sklearn").__version__
                   + " SVC(tol=1e-3, shrinking=False, coef0=1)", "cases": cases}, f, indent=1)
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
