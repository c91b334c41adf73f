"""Reference values of the CoCaBO mixed benchmarks (issue 46, item 6) for
crates/tasks/tests/mixed_benchmarks.rs: Func2C and Func3C transcribed from
the authors' code (rubinxin/CoCaBO_code, testFunctions/syntheticFunctions.py,
vectorised NumPy, without its 1e-6 noise) and Ackley-5C from FM-kernel BO's
benchmark_functions.py, evaluated at seeded random points of each domain.
Writes crates/tasks/tests/data/mixed_benchmarks.json."""

import json
import os

import numpy as np


def myrosenbrock(X):
    X = np.asarray(X).reshape((-1, 2))
    x1, x2 = X[:, 0], X[:, 1]
    return (100 * (x2 - x1**2) ** 2 + (x1 - 1) ** 2) / 300


def mysixhumpcamp(X):
    X = np.reshape(np.asarray(X), (-1, 2))
    x1, x2 = X[:, 0], X[:, 1]
    term1 = (4 - 2.1 * x1**2 + (x1**4) / 3) * x1**2
    term2 = x1 * x2
    term3 = (-4 + 4 * x2**2) * x2**2
    return (term1 + term2 + term3) / 10


def mybeale(X):
    X = np.asarray(X) / 2
    X = X.reshape((-1, 2))
    x1, x2 = X[:, 0] * 2, X[:, 1] * 2
    return ((1.5 - x1 + x1 * x2) ** 2 + (2.25 - x1 + x1 * x2**2) ** 2 + (2.625 - x1 + x1 * x2**3) ** 2) / 50


def func2C(ht, X):
    X = np.asarray(X) * 2
    f = [myrosenbrock, mysixhumpcamp, mybeale][ht[0]](X)
    f = f + (myrosenbrock(X) if ht[1] == 0 else mysixhumpcamp(X) if ht[1] == 1 else mybeale(X))
    return float(f[0])


def func3C(ht, X):
    Xs = np.asarray(X) * 2
    f = func2C(ht[:2], X)
    if ht[2] == 0:
        f = f + 5 * mysixhumpcamp(Xs)
    elif ht[2] == 1:
        f = f + 2 * myrosenbrock(Xs)
    else:
        f = f + ht[2] * mybeale(Xs)
    return float(np.asarray(f).ravel()[0])


def ackley5C(ht, X):
    z = np.concatenate([X, np.array(ht) * 0.125 - 1])
    a, b, c = 20, 0.2, 2 * np.pi
    return float(-a * np.exp(-b * np.mean(z**2) ** 0.5) - np.exp(np.mean(np.cos(c * z))) + a + np.exp(1))


def main():
    rng = np.random.default_rng(46)
    cases = []
    for _ in range(200):
        x = rng.uniform(-1, 1, 2)
        h = [int(rng.integers(3)), int(rng.integers(5)), int(rng.integers(4))]
        cases.append({"name": "func2c", "x": x.tolist(), "h": h[:2], "value": func2C(h[:2], x)})
        cases.append({"name": "func3c", "x": x.tolist(), "h": h, "value": func3C(h, x)})
        x1 = rng.uniform(-1, 1, 1)
        h5 = [int(v) for v in rng.integers(17, size=5)]
        cases.append({"name": "ackley5c", "x": x1.tolist(), "h": h5, "value": ackley5C(h5, x1)})
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "crates", "tasks", "tests", "data", "mixed_benchmarks.json")
    with open(path, "w") as f:
        json.dump({"source": "scripts/mixed_fixtures.py", "cases": cases}, f)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
