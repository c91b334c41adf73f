"""An Optuna sampler whose suggestions come from the member's fedhe agent,
so an objective written for Optuna runs unchanged in a federated study::

    study = optuna.create_study(
        direction="minimize",
        sampler=fedhe.optuna.FedheSampler(server=url, keys="keys/north", study="s1"),
    )
    study.optimize(objective, n_trials=100)  # stops when the federation's study ends

Every trial takes the point the federation asks this member for; the
objective's ``trial.suggest_*`` calls must match the study's signed space
(name, type and range), or :class:`fedhe.SpaceMismatch` names the parameter
and the trial fails without anything told. A failed or pruned trial is told
as failed. When the federation's study ends, the sampler stops the Optuna
study (``study.stop()``).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from . import Agent, Finished, Point, SpaceMismatch, UsageError

__all__ = ["FedheSampler"]



def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) or a == b


def _describe(spec: Dict[str, Any]) -> str:
    kind = spec["type"]
    if kind in ("float", "int"):
        log = ", log" if spec.get("log") else ""
        low, high = spec["low"], spec["high"]
        if kind == "int":
            low, high = int(low), int(high)
        return f"{kind} [{low}, {high}]{log}"
    if kind == "categorical":
        return f"categorical {spec['choices']!r}"
    return f"fixed {spec['value']!r}"


def _fits(spec: Dict[str, Any], dist: BaseDistribution) -> bool:
    """Whether the objective's distribution is the signed parameter."""
    kind = spec["type"]
    if kind == "float":
        return (
            isinstance(dist, FloatDistribution)
            and dist.step is None
            and _same(dist.low, spec["low"])
            and _same(dist.high, spec["high"])
            and bool(dist.log) == bool(spec.get("log", False))
        )
    if kind == "int":
        return (
            isinstance(dist, IntDistribution)
            and dist.step == 1
            and dist.low == spec["low"]
            and dist.high == spec["high"]
            and bool(dist.log) == bool(spec.get("log", False))
        )
    if kind == "categorical":
        if not isinstance(dist, CategoricalDistribution):
            return False
        signed = spec["choices"]
        return len(dist.choices) == len(signed) and all(
            any(type(c) is type(s) and c == s for s in signed) for c in dist.choices
        )
    # fixed: a one-choice categorical, or a range holding only the value.
    value = spec["value"]
    if isinstance(dist, CategoricalDistribution):
        return len(dist.choices) == 1 and dist.choices[0] == value
    if isinstance(dist, (FloatDistribution, IntDistribution)):
        return dist.low == dist.high == value
    return False


class FedheSampler(BaseSampler):
    """An Optuna sampler that takes every trial's parameters from a member's
    fedhe agent (:class:`fedhe.Agent`) in a study with a typed space.

    Args:
        server, keys, study, passphrase_file: as :class:`fedhe.Agent`; or
        agent: an :class:`fedhe.Agent` already made (then the others are not
            given).
        **agent_options: the other :class:`fedhe.Agent` keyword arguments
            (``allow_insecure``, ``max_epsilon``, ...).
    """

    def __init__(
        self,
        server: Optional[str] = None,
        keys: Optional[str] = None,
        study: Optional[str] = None,
        passphrase_file: Optional[str] = None,
        *,
        agent: Optional[Agent] = None,
        **agent_options: Any,
    ) -> None:
        if agent is None:
            if server is None or keys is None or study is None:
                raise UsageError("FedheSampler: give server, keys and study, or agent")
            agent = Agent(server, keys, study, passphrase_file, **agent_options)
        elif server is not None or keys is not None or study is not None or agent_options:
            raise UsageError("FedheSampler: give agent alone, or server, keys and study")
        self._agent = agent
        # The point the agent handed out and has not been told yet (asked
        # ahead, in after_trial, so the loop stops before a trial that the
        # federation has no point for).
        self._asked: Optional[Point | Finished] = None
        # trial number -> the point it evaluates.
        self._points: Dict[int, Point] = {}
        # Trials whose objective suggested outside the space: never told.
        self._mismatched: set[int] = set()

    @property
    def agent(self) -> Agent:
        """The member's agent."""
        return self._agent

    def _next(self) -> Point | Finished:
        if self._asked is None:
            self._asked = self._agent.ask()
        return self._asked

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        asked = self._next()
        if isinstance(asked, Finished):
            # The federation's study is over: this trial gets no point and is
            # pruned at its first suggestion, and the loop stops after it.
            study.stop()
            return
        if asked.params is None:
            raise UsageError(
                f"study {asked.study} searches a box of unnamed floats: FedheSampler needs a "
                "typed space (fedhe study create --space FILE)"
            )
        want = {"minimise": StudyDirection.MINIMIZE, "maximise": StudyDirection.MAXIMIZE}.get(
            asked.sense or ""
        )
        if want is not None and study.directions != [want]:
            raise UsageError(
                f"study {asked.study} {asked.sense}s its objective, but the Optuna study's "
                f"direction is {', '.join(d.name.lower() for d in study.directions)}: create it "
                f"with direction={want.name.lower()!r}"
            )
        self._points[trial.number] = asked

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> Dict[str, BaseDistribution]:
        return {}

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: Dict[str, BaseDistribution]
    ) -> Dict[str, Any]:
        return {}

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        point = self._points.get(trial.number)
        if point is None:
            raise optuna.TrialPruned("the federation's study has ended: no point to evaluate")
        specs = {p["name"]: p for p in (point.space or {}).get("params", [])}
        spec = specs.get(param_name)
        if spec is None:
            self._mismatched.add(trial.number)
            raise SpaceMismatch(
                f"parameter {param_name!r} is not in study {point.study}'s signed space "
                f"(it has {', '.join(repr(n) for n in specs)})"
            )
        if not _fits(spec, param_distribution):
            self._mismatched.add(trial.number)
            raise SpaceMismatch(
                f"parameter {param_name!r}: the objective suggests {param_distribution!r}, but "
                f"study {point.study}'s signed space has {_describe(spec)}"
            )
        if param_name not in point.params:
            # A conditional parameter the point leaves inactive: the
            # objective took another branch than the signed space's.
            self._mismatched.add(trial.number)
            when = spec.get("when") or {}
            parent = when.get("param")
            raise SpaceMismatch(
                f"parameter {param_name!r} is not active at this point: study "
                f"{point.study}'s signed space makes it active only when {parent!r} is one "
                f"of {when.get('values')!r}, and here {parent!r} is "
                f"{point.params.get(parent, 'inactive')!r}"
            )
        value = point.params[param_name]
        if isinstance(param_distribution, IntDistribution):
            return int(value)
        if isinstance(param_distribution, FloatDistribution):
            return float(value)
        return value

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Optional[Sequence[float]],
    ) -> None:
        point = self._points.pop(trial.number, None)
        if point is None:
            return
        if trial.number in self._mismatched:
            # The objective is not the study's: nothing is told, and the same
            # point waits for the next trial.
            self._mismatched.discard(trial.number)
            return
        unsuggested = sorted(set(point.params) - set(trial.params))
        if state == TrialState.COMPLETE and unsuggested:
            # The objective returned a value without some parameter the
            # point has (a conditional one on the other branch): it is not
            # the value at the point, so nothing is told, and the point waits.
            raise SpaceMismatch(
                f"the objective did not suggest {', '.join(repr(n) for n in unsuggested)}, "
                f"which study {point.study}'s signed space makes active at this point; "
                "nothing was told"
            )
        if state == TrialState.COMPLETE and values is not None:
            self._agent.tell(float(values[0]))
        else:
            self._agent.tell(failed=True)
        self._asked = None
        if isinstance(self._next(), Finished):
            study.stop()
