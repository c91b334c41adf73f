"""fedhe's objectives for the reference scripts: a function's box from
`fedhe objective list` and its values from `fedhe objective eval`, so that a
peer evaluates fedhe's own verified implementations."""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time


def box(fedhe, function):
    """The function's box `(lo, hi)` (the same in every coordinate), parsed
    from the `[lo, hi]` column of `fedhe objective list`."""
    out = subprocess.run([fedhe, "objective", "list"], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines()[1:]:
        if line.split()[0] == function:
            lo, hi = line[line.index("[") + 1:line.index("]")].split(",")
            return float(lo), float(hi)
    sys.exit(f"{function} not in `fedhe objective list`")


def evaluate(fedhe, function, dim, points, noise_seed=None):
    """fedhe's noise-free values at `points` (a list of points in the box).
    With `noise_seed`, returns `(values, observed)`: `observed` carries the
    function's own noise (CEC-2005 F4, F17) drawn from that seed, what an
    optimiser sees, while `values` are what it is scored on (as in `fedhe
    simulate`)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"x": points}, f)
        path = f.name
    command = [fedhe, "objective", "eval", "--function", function,
               "--dim", str(dim), "--points", path]
    if noise_seed is not None:
        command += ["--noise-seed", str(noise_seed)]
    try:
        out = json.loads(subprocess.run(command, check=True, capture_output=True,
                                        text=True).stdout)
    finally:
        os.unlink(path)
    if noise_seed is None:
        return out["values"]
    return out["values"], out["observed"]


def record_run(fixture, out, key, function, seed, trace, start, **extra):
    """Adds one finished run to a peer fixture under `key` (`"function/seed"`
    in the format `fedhe report --peers` reads), rewrites `out` atomically so
    a stopped script resumes after its last finished run, and prints it."""
    fixture["runs"][key] = {
        "function": function, "seed": seed, "best": trace[-1], "trace": trace, **extra,
        "seconds": round(time.time() - start, 2),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "load": os.getloadavg()[0],
    }
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(fixture, f, indent=1)
    os.replace(tmp, out)
    print(f"{key}: best {trace[-1]:.6g} in {time.time() - start:.1f} s", flush=True)


def pending_runs(fixture, seeds, functions):
    """`(seed, fn, key)` of the runs a peer fixture still lacks, seed-major
    (a script stopped early has covered every function equally);
    `functions` is the comma-separated list of CEC-2005 numbers."""
    for seed in range(seeds):
        for fn in [int(v) for v in functions.split(",")]:
            key = f"f{fn}/{seed}"
            if key not in fixture["runs"]:
                yield seed, fn, key
