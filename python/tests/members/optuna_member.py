"""One member of a federated study as an Optuna user runs it: an unchanged
Optuna objective, `FedheSampler` as the sampler. Usage:

    optuna_member.py SERVER KEYS STUDY OFFSET N_TRIALS [FAIL_AT]

It prints one JSON line: every trial's number, state, params and value, and
the agent's status at the end. The objective raises on trial FAIL_AT (caught
by Optuna: the trial fails and is told as failed)."""

import json
import math
import sys

import optuna

import fedhe.optuna

server, keys, study_id, offset, n_trials = sys.argv[1:6]
offset, n_trials = float(offset), int(n_trials)
fail_at = int(sys.argv[6]) if len(sys.argv) > 6 else -1


def objective(trial: optuna.Trial) -> float:
    # A model's validation loss as a data scientist would write it for Optuna.
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    depth = trial.suggest_int("depth", 2, 12)
    kernel = trial.suggest_categorical("kernel", ["rbf", "poly", "linear"])
    # A conditional parameter: the linear kernel has no gamma.
    gamma = 0.0 if kernel == "linear" else trial.suggest_float("gamma", 1e-3, 1.0, log=True)
    if trial.number == fail_at:
        raise RuntimeError("the training job crashed")
    penalty = {"rbf": 0.0, "poly": 0.5, "linear": 1.0}[kernel]
    shape = 0.0 if kernel == "linear" else 0.1 * (math.log10(gamma) + 1.0) ** 2
    return (math.log10(lr) + 3.0) ** 2 + 0.1 * (depth - 7) ** 2 + penalty + shape + offset


optuna.logging.set_verbosity(optuna.logging.WARNING)
sampler = fedhe.optuna.FedheSampler(server=server, keys=keys, study=study_id, allow_insecure=True)
study = optuna.create_study(direction="minimize", sampler=sampler)
study.optimize(objective, n_trials=n_trials, catch=(RuntimeError,))
print(
    json.dumps(
        {
            "trials": [
                {
                    "number": t.number,
                    "state": t.state.name,
                    "params": t.params,
                    "value": t.value,
                }
                for t in study.trials
            ],
            "status": sampler.agent.status(),
        }
    )
)
