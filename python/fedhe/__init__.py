"""fedhe for Python: an institution's agent in a federated Bayesian
optimisation study, and (in :mod:`fedhe.optuna`) an Optuna sampler that takes
its points from it.

The agent is the same as ``fedhe agent ask|tell|status`` (the native module
runs the same Rust code in-process, on the same key folder and journal), so a
member may switch between the command line and Python at any point::

    agent = fedhe.Agent("https://fedhe.example.org", "keys/north", "s1")
    while isinstance(asked := agent.ask(), fedhe.Point):
        agent.tell(my_objective(**asked.params))
    print(asked.best)

Nothing but the encrypted, noised sums of the study's method leaves the
member: the values told here stay in its journal.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._native import FedheError, Refused, ServerError, TransportError, UsageError

__all__ = [
    "Agent",
    "Point",
    "Finished",
    "Receipt",
    "FedheError",
    "Refused",
    "ServerError",
    "TransportError",
    "UsageError",
    "SpaceMismatch",
]


class SpaceMismatch(FedheError, ValueError):
    """An objective suggested a parameter that the study's signed space does
    not hold, or with another type or range; the message names it."""


@dataclass(frozen=True)
class Point:
    """A point the federation asks this member to evaluate."""

    study: str
    evaluation: int
    """Which evaluation of this member it is (1-based)."""
    params: Optional[Dict[str, Any]]
    """The named values (a study with a typed space), else ``None``."""
    point: List[float]
    """The point: the unit-cube point of a typed space, or the point in the
    study's box."""
    space: Optional[Dict[str, Any]] = field(default=None, repr=False)
    """The study's typed space as signed (``{"params": [...]}``), if any."""
    sense: Optional[str] = None
    """``"minimise"`` or ``"maximise"``: what the study does with the values."""


@dataclass(frozen=True)
class Finished:
    """The study is over for this member."""

    study: str
    rounds: int
    best: float
    """This member's best value."""


@dataclass(frozen=True)
class Receipt:
    """What ``tell`` journaled."""

    evaluation: int
    value: float
    failed: bool
    recorded: bool
    """False when the same answer had been told before (a no-op)."""
    params: Optional[Dict[str, Any]] = None


class Agent:
    """A member's agent in one study.

    Args:
        server: the server's URL.
        keys: the member's key folder (from ``fedhe ceremony join``).
        study: the study's id.
        passphrase_file: a file holding the key folder's passphrase (default:
            ``FEDHE_PASSPHRASE`` if set, else none).
        ca_cert: trust only this PEM CA certificate for an ``https://`` server.
        allow_plain_http: allow ``http://`` to a host other than loopback.
        allow_insecure: accept a toy (test-only) parameter set.
        round_timeout_secs: how long one round may take.
        max_epsilon, max_delta, min_contributors: the member's policy (as the
            ``fedhe agent`` flags of the same names); a study beyond it is
            refused with :class:`Refused` before anything is evaluated.

    Raises:
        UsageError: the key folder cannot be opened.
    """

    def __init__(
        self,
        server: str,
        keys: Union[str, "os.PathLike[str]"],
        study: str,
        passphrase_file: Union[str, "os.PathLike[str]", None] = None,
        *,
        ca_cert: Union[str, "os.PathLike[str]", None] = None,
        allow_plain_http: bool = False,
        allow_insecure: bool = False,
        round_timeout_secs: int = 600,
        max_epsilon: Optional[float] = None,
        max_delta: Optional[float] = None,
        min_contributors: Optional[int] = None,
    ) -> None:
        self._native = _native.Agent(
            server,
            os.fspath(keys),
            study,
            passphrase_file=None if passphrase_file is None else os.fspath(passphrase_file),
            ca_cert=None if ca_cert is None else os.fspath(ca_cert),
            allow_plain_http=allow_plain_http,
            allow_insecure=allow_insecure,
            round_timeout_secs=round_timeout_secs,
            max_epsilon=max_epsilon,
            max_delta=max_delta,
            min_contributors=min_contributors,
        )

    @property
    def study(self) -> str:
        """The study's id."""
        return self._native.study

    def ask(self) -> Union[Point, Finished]:
        """The next point to evaluate; the same point again until it is told;
        :class:`Finished` once the study is over. It runs (or resumes) the
        study's rounds until the federation needs a point, which can take as
        long as the other members take."""
        a = json.loads(self._native.ask())
        if a.get("finished"):
            return Finished(study=a["study"], rounds=a["rounds"], best=a["best"])
        return Point(
            study=a["study"],
            evaluation=a["evaluation"],
            params=a.get("params"),
            point=a["point"],
            space=a.get("space"),
            sense=a.get("sense"),
        )

    def tell(
        self,
        value: Optional[float] = None,
        *,
        failed: bool = False,
        params: Optional[Dict[str, Any]] = None,
    ) -> Receipt:
        """Records the value of the waiting point, or ``failed=True`` (the
        worst value so far stands for it). ``params``, when given, must be the
        waiting point's values: anything else is refused (:class:`Refused`)
        and nothing is journaled. Telling the same answer again is a no-op."""
        r = json.loads(
            self._native.tell(
                value, failed=failed, params=None if params is None else json.dumps(params)
            )
        )
        return Receipt(
            evaluation=r["evaluation"],
            value=r["value"],
            failed=r["failed"],
            recorded=r["recorded"],
            params=r.get("params"),
        )

    def status(self) -> Dict[str, Any]:
        """What the agent recorded for the study: ``evaluations``,
        ``rounds_with_result``, the last ``progress`` record and, once a
        round has finished, ``best_evaluation`` (this member's best point,
        its ``params`` by name in a typed space, and its ``value``)."""
        return json.loads(self._native.status())
