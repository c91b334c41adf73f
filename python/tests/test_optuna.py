"""Issue 46, item 5: three institutions, each a Python process running an
unchanged Optuna objective with `fedhe.optuna.FedheSampler`, optimise a
typed space (a log float, an int, a categorical and a float conditional
on the categorical) together over a real
`fedhe serve`; and the refusals a user meets."""

from __future__ import annotations

import json
import pathlib

import optuna
import pytest

import fedhe
import fedhe.optuna
from conftest import MEMBERS, python_member

ROUNDS = 3
EVALUATIONS = 3 + ROUNDS  # three initial points, then one a round
CHOICES = ["rbf", "poly", "linear"]


def in_space(params: dict) -> bool:
    # gamma is conditional: present, in its range, exactly when the kernel
    # is not the linear one.
    conditional = (
        "gamma" not in params
        if params.get("kernel") == "linear"
        else isinstance(params.get("gamma"), float) and 1e-3 <= params["gamma"] <= 1.0
    )
    return (
        conditional
        and set(params) - {"gamma"} == {"lr", "depth", "kernel"}
        and isinstance(params["lr"], float)
        and 1e-5 <= params["lr"] <= 0.1
        and isinstance(params["depth"], int)
        and 2 <= params["depth"] <= 12
        and params["kernel"] in CHOICES
    )


def test_three_optuna_members_run_a_typed_study_over_the_network(federation):
    federation.create_study("s1", ROUNDS)
    fail_at = {"west": 4}
    procs = {
        name: python_member(
            "optuna_member.py",
            federation.url,
            federation.keys(name),
            "s1",
            str(i),
            "50",
            str(fail_at.get(name, -1)),
        )
        for i, name in enumerate(MEMBERS)
    }
    outs = {}
    for name, p in procs.items():
        stdout, stderr = p.communicate(timeout=900)
        assert p.returncode == 0, f"{name}: {stderr}"
        outs[name] = json.loads(stdout.strip().splitlines()[-1])
    for name, out in outs.items():
        trials = out["trials"]
        # The federation's study ended the Optuna study: n_trials was 50.
        assert len(trials) == EVALUATIONS, (name, trials)
        journal = federation.journal(name, "s1")
        assert len(journal) == EVALUATIONS, (name, journal)
        for t, entry in zip(trials, journal):
            assert in_space(t["params"]), t
            # The journal holds what the objective was evaluated at and what
            # it returned, in order.
            assert entry["params"] == t["params"], (name, entry, t)
            if t["number"] == fail_at.get(name):
                assert t["state"] == "FAIL"
                # Told as failed: the worst value so far stands for it.
                worst = max(e["y"] for e in journal[: t["number"]])
                assert entry.get("failed") is True and entry["y"] == worst, entry
            else:
                assert t["state"] == "COMPLETE", t
                assert entry["y"] == t["value"] and not entry.get("failed"), (entry, t)
        status = out["status"]
        assert status["evaluations"] == EVALUATIONS, status
        assert status["progress"]["finished"] is True, status
        assert status["progress"]["round"] == ROUNDS, status
        # The status names the member's best evaluation: the journal's
        # smallest value that was not a failure, with its values by name.
        best = status["best_evaluation"]
        told = [e for e in journal if not e.get("failed")]
        assert best["value"] == min(e["y"] for e in told), (best, told)
        assert best["params"] in [e["params"] for e in told if e["y"] == best["value"]]
    # The members' points are their own: no two members evaluated the same
    # sequence.
    seqs = {json.dumps([t["params"] for t in o["trials"]]) for o in outs.values()}
    assert len(seqs) == len(MEMBERS)

    # Optimising again once the study is over: the sampler stops at once,
    # with one pruned trial and nothing evaluated or told.
    sampler = fedhe.optuna.FedheSampler(
        server=federation.url, keys=federation.keys("north"), study="s1", allow_insecure=True
    )
    study = optuna.create_study(direction="minimize", sampler=sampler)
    calls = []

    def objective(trial):
        calls.append(trial.suggest_float("lr", 1e-5, 1e-1, log=True))
        return 0.0

    study.optimize(objective, n_trials=10)
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.PRUNED]
    assert calls == []
    assert len(federation.journal("north", "s1")) == EVALUATIONS


def test_an_objective_outside_the_signed_space_is_refused_naming_the_parameter(federation):
    federation.create_study("s2", 1, seed=9)
    keys = federation.keys("north")

    def sampler():
        # A short round timeout: were a mismatch missed, the value would be
        # told and the next ask would wait for members that never come.
        return fedhe.optuna.FedheSampler(
            server=federation.url,
            keys=keys,
            study="s2",
            allow_insecure=True,
            round_timeout_secs=20,
        )

    def objective(lr_low=1e-5, extra=False, depth_as_float=False):
        def f(trial):
            x = trial.suggest_float("lr", lr_low, 1e-1, log=True)
            if depth_as_float:
                x += trial.suggest_float("depth", 2, 12)
            else:
                x += trial.suggest_int("depth", 2, 12)
            if extra:
                x += trial.suggest_float("momentum", 0.0, 1.0)
            return x

        return f

    # An Optuna study that maximises a study the federation minimises.
    study = optuna.create_study(direction="maximize", sampler=sampler())
    with pytest.raises(fedhe.UsageError) as e:
        study.optimize(objective(), n_trials=3)
    assert "s2 minimises" in str(e.value) and "direction='minimize'" in str(e.value), str(e.value)

    for kwargs, name, signed in [
        ({"lr_low": 1e-4}, "'lr'", "float [1e-05, 0.1], log"),
        ({"depth_as_float": True}, "'depth'", "int [2, 12]"),
        ({"extra": True}, "'momentum'", "not in study s2"),
    ]:
        study = optuna.create_study(direction="minimize", sampler=sampler())
        with pytest.raises(fedhe.SpaceMismatch) as e:
            study.optimize(objective(**kwargs), n_trials=3)
        assert name in str(e.value) and signed in str(e.value), str(e.value)
        assert isinstance(e.value, ValueError) and isinstance(e.value, fedhe.FedheError)
        # Nothing was told: the point still waits, and the journal is empty.
        assert not (pathlib.Path(keys) / "studies" / "s2" / "evaluations.jsonl").exists() or (
            federation.journal("north", "s2") == []
        )

    # The conditional gamma on the other branch than the signed space's: an
    # objective that suggests it only for the linear kernel suggests it where
    # the point leaves it inactive, or returns without it where the point
    # has it; refused either way, naming it, and nothing told. Studies whose
    # first point has each kind of kernel (the first of these seeds that
    # give one; a point comes from the member's private seed):
    def wrong_branch(trial):
        x = trial.suggest_float("lr", 1e-5, 1e-1, log=True) + trial.suggest_int("depth", 2, 12)
        if trial.suggest_categorical("kernel", CHOICES) == "linear":
            x += trial.suggest_float("gamma", 1e-3, 1.0, log=True)
        return x

    starts = {}
    for seed in range(10, 70):
        branch = f"g{seed}"
        federation.create_study(branch, 1, seed=seed)
        first = fedhe.Agent(federation.url, keys, branch, allow_insecure=True).ask()
        starts.setdefault(first.params["kernel"] == "linear", branch)
        if len(starts) == 2:
            break
    else:
        pytest.fail(f"seeds 10-69 gave studies starting north only at {starts}")
    for linear, why in [
        (True, "'gamma' is not active at this point"),
        (False, "did not suggest 'gamma'"),
    ]:
        branch = starts[linear]
        study = optuna.create_study(
            direction="minimize",
            # A short round timeout, as sampler()'s: were a value told, the
            # next ask would wait for members that never come.
            sampler=fedhe.optuna.FedheSampler(
                server=federation.url,
                keys=keys,
                study=branch,
                allow_insecure=True,
                round_timeout_secs=20,
            ),
        )
        with pytest.raises(fedhe.SpaceMismatch) as e:
            study.optimize(wrong_branch, n_trials=3)
        assert why in str(e.value), str(e.value)
        assert not (pathlib.Path(keys) / "studies" / branch / "evaluations.jsonl").exists() or (
            federation.journal("north", branch) == []
        )

    agent = fedhe.Agent(federation.url, keys, "s2", allow_insecure=True)
    point = agent.ask()
    assert isinstance(point, fedhe.Point) and point.evaluation == 1 and in_space(point.params)
    # The same for a told point: gamma named where the kernel leaves it
    # inactive, or left out where it is active.
    if point.params["kernel"] == "linear":
        bad, why = {**point.params, "gamma": 0.1}, "is not active here"
    else:
        bad, why = {k: v for k, v in point.params.items() if k != "gamma"}, "is missing"
    with pytest.raises(fedhe.Refused) as e:
        agent.tell(1.0, params=bad)
    assert "gamma" in str(e.value) and why in str(e.value), str(e.value)
    # Asking again hands out the same point.
    assert agent.ask() == point
    # A told point that is not in the space, or not the waiting one: refused,
    # naming the parameter, and nothing journaled.
    for bad, name in [
        ({**point.params, "lr": 0.5}, "lr"),
        ({**point.params, "kernel": "sigmoid"}, "kernel"),
        ({**point.params, "depth": 13}, "depth"),
    ]:
        with pytest.raises(fedhe.Refused) as e:
            agent.tell(1.0, params=bad)
        assert name in str(e.value), str(e.value)
        assert e.value.kind == "told_point" and e.value.setting is None
    other = next(c for c in CHOICES if c != point.params["kernel"])
    # Inside the space (gamma with every kernel but the linear), not the
    # waiting point.
    moved = {k: v for k, v in point.params.items() if k != "gamma"}
    moved["kernel"] = other
    if other != "linear":
        moved["gamma"] = point.params.get("gamma", 0.1)
    with pytest.raises(fedhe.Refused) as e:
        agent.tell(1.0, params=moved)
    assert "`kernel` differs" in str(e.value)
    # The first evaluation has no value that could stand for a failure.
    with pytest.raises(fedhe.UsageError) as e:
        agent.tell(failed=True)
    assert "cannot be told as failed" in str(e.value)
    with pytest.raises(fedhe.UsageError):
        agent.tell(float("nan"))
    assert agent.status()["evaluations"] == 0
    receipt = agent.tell(2.5, params=point.params)
    assert receipt.recorded and receipt.evaluation == 1 and receipt.value == 2.5
    assert receipt.params == point.params
    assert agent.status()["evaluations"] == 1
    assert federation.journal("north", "s2")[0]["params"] == point.params


def test_a_bad_key_folder_or_a_box_study_is_refused_by_name(federation, tmp_path):
    with pytest.raises(fedhe.UsageError) as e:
        fedhe.Agent(federation.url, tmp_path / "nowhere", "s1")
    assert "nowhere" in str(e.value)
    with pytest.raises(fedhe.UsageError):
        fedhe.Agent(federation.url, federation.keys("north"), "s1", round_timeout_secs=0)
    with pytest.raises(fedhe.UsageError) as e:
        fedhe.optuna.FedheSampler(server=federation.url, keys=federation.keys("north"))
    assert "study" in str(e.value)
    # A study of a box of unnamed floats has no names for Optuna's suggestions.
    from conftest import run

    config = {
        "sense": "minimise",
        "lower": [0.0, 0.0],
        "upper": [1.0, 1.0],
        "settings": {"rounds": 1, "initial_points": 3, "support_size": 6, "acq_candidates": 200},
    }
    run(
        "study", "create", "--server", federation.url, "--admin-keys", federation.admin,
        "--id", "box", "--ceremony", "c", "--min-contributors", "3",
        "--config", json.dumps(config),
    )
    study = optuna.create_study(
        sampler=fedhe.optuna.FedheSampler(
            server=federation.url, keys=federation.keys("south"), study="box", allow_insecure=True
        )
    )
    with pytest.raises(fedhe.UsageError) as e:
        study.optimize(lambda t: t.suggest_float("x0", 0, 1), n_trials=1)
    assert "box of unnamed floats" in str(e.value) and "--space" in str(e.value)


def test_a_refusal_says_its_kind_and_the_policy_setting_that_refused(federation):
    federation.create_study("s4", 1, seed=11)
    keys = federation.keys("west")
    # The study has a quorum of 3: a member whose floor is 4 refuses it by
    # its policy, before anything is opened, and says which setting refused.
    strict = fedhe.Agent(federation.url, keys, "s4", allow_insecure=True, min_contributors=4)
    with pytest.raises(fedhe.Refused) as e:
        strict.ask()
    assert e.value.kind == "policy" and e.value.setting == "min_contributors", str(e.value)
    assert "at least 4" in str(e.value)
    # So does an ε ceiling below the study's.
    capped = fedhe.Agent(federation.url, keys, "s4", allow_insecure=True, max_epsilon=1e-3)
    with pytest.raises(fedhe.Refused) as e:
        capped.ask()
    assert e.value.kind == "policy" and e.value.setting == "max_epsilon", str(e.value)
    # The same member without the policy asks, and its point waits.
    point = fedhe.Agent(federation.url, keys, "s4", allow_insecure=True).ask()
    assert point.evaluation == 1


def test_a_refusal_inside_a_round_reaches_python_typed(federation):
    # West's own policy decrypts rounds 1..=1 only: in round 2 of a 2-round
    # study it refuses to make a decryption share. The refusal happens inside
    # the network channel, under the algorithm, and must still reach Python
    # as a Refused naming the policy setting, not as the channel's text.
    federation.create_study("s5", 2, seed=13)
    policy = pathlib.Path(federation.keys("west")) / "policy.toml"
    policy.write_text("max_rounds = 1\n")
    policy.chmod(0o600)
    others = [
        python_member("optuna_member.py", federation.url, federation.keys(name), "s5", "0", "50")
        for name in ("north", "south")
    ]
    try:
        agent = fedhe.Agent(federation.url, federation.keys("west"), "s5", allow_insecure=True)
        with pytest.raises(fedhe.Refused) as e:
            for _ in range(20):
                point = agent.ask()
                assert isinstance(point, fedhe.Point), point
                agent.tell(1.0 + point.evaluation)
        assert e.value.kind == "policy" and e.value.setting == "max_rounds", str(e.value)
        assert "round 2" in str(e.value), str(e.value)
        # Its initial points were told before the refusal (the sums before
        # round 1 are server rounds too: the refusal may come at the first).
        assert agent.status()["evaluations"] >= 3
    finally:
        policy.unlink()
        for p in others:
            p.kill()
            p.communicate()
