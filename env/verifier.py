"""The hook through which verifiers score an episode, without the runtime importing them.

Verifiers sit above the runtime in the import order (DESIGN §3), so the runtime names them by
entry-point strings (``"shopgen.verifiers.cart:verify"``) resolved on first use, or accepts a
callable registered with :func:`set_verifier` (STYLE §3). Until an environment has a verifier,
the final ``step`` returns ``reward=None`` and ``info["state"]`` only: the runtime never
invents a reward.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shopgen.env.state import EpisodeState
    from shopgen.schemas.task import TaskRow


@dataclass(frozen=True, slots=True)
class Score:
    """A verifier's verdict on one episode (DESIGN §9)."""

    reward: float
    r_task: float
    r_eff: float
    r_hall: float
    is_correct: bool
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (what ``info`` carries); ``details`` is a fresh copy."""
        return {
            "reward": self.reward,
            "r_task": self.r_task,
            "r_eff": self.r_eff,
            "r_hall": self.r_hall,
            "is_correct": self.is_correct,
            "details": copy_data(self.details),
        }


#: Leaf types :func:`copy_data` returns as they are, tested first: most values are leaves.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def copy_data(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, tuples, scalars): ~5× faster than deepcopy."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is dict:
        return {k: copy_data(v) for k, v in value.items()}
    if kind is list:
        return [copy_data(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(copy_data(v) for v in value)
    return value


class Verifier(Protocol):
    """A pure function of the task, the final state and the transcript."""

    def __call__(
        self, task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]
    ) -> Score:
        """Score one finished episode."""
        ...


VerifierRef = Verifier | Callable[..., Score] | str

#: Environment → verifier (callable or ``"module:function"``). The verifiers issue adds one
#: line per environment here or calls :func:`set_verifier`.
VERIFIERS: dict[str, VerifierRef] = {}
#: Environments known to have no verifier module yet (a cache of failed entry-point lookups).
_UNVERIFIED: set[str] = set()


def set_verifier(env: str, verifier: VerifierRef | None) -> None:
    """Register (or, with None, remove) the verifier of environment ``env``."""
    _UNVERIFIED.discard(env)
    if verifier is None:
        VERIFIERS.pop(env, None)
    else:
        VERIFIERS[env] = verifier


def resolve(ref: VerifierRef) -> Callable[..., Score]:
    """A callable from a callable or a ``"module:function"`` entry point."""
    if callable(ref):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"verifier entry point {ref!r} must look like 'package.module:function'")
    return getattr(importlib.import_module(module), attr)


def get_verifier(env: str) -> Callable[..., Score] | None:
    """The verifier of ``env``: registered, else the registry's entry point, else None.

    The registry's entry point counts only once its module exists, so an environment whose
    verifier is not written yet plays without a reward instead of failing.
    """
    ref = VERIFIERS.get(env)
    if ref is None:
        if env in _UNVERIFIED:
            return None
        ref = _registry_entry_point(env)
        if ref is None:
            # find_spec on every final step costs ~100 µs; remember the miss until a
            # verifier is registered (set_verifier forgets it).
            _UNVERIFIED.add(env)
            return None
    fn = resolve(ref)
    VERIFIERS[env] = fn  # resolve an entry point once
    return fn


def _registry_entry_point(env: str) -> str | None:
    from shopgen.schemas.envs import ENV_NAMES, env_spec

    if env not in ENV_NAMES:
        return None
    ref = env_spec(env).verifier
    module = ref.partition(":")[0]
    return ref if importlib.util.find_spec(module) is not None else None
