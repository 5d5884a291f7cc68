"""The environment registry: one frozen record per environment, in one list (STYLE §3).

Generators, oracles and verifiers are named by string entry points and resolved on first use,
so this table sits at the bottom of the import order and nothing imports upward. Adding a
ninth environment is one module under ``gen/tasks/`` and ``verifiers/`` plus one row here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from shopgen.schemas.axes import AXES
from shopgen.schemas.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class EnvSpec:
    """What an environment is and where its parts live.

    Attributes:
        name: CLI name = module name = registry key = template folder.
        version: bumped on any behaviour change of the generator or the verifier; recorded
            in every task row as ``verifier_version``.
        summary: one line for listings and dataset cards.
        axes: the θ axes this environment's tasks respond to (each has a measured effect).
        extra_turns: the name of a schedule (``shopgen.gen.schedules``) whose value at d is
            added to θ's ``T_max`` for this environment's tasks; their rows' ``theta`` holds
            the sum, which the runtime enforces. Empty: T_max(d) as it is.
    """

    name: str
    version: str
    summary: str
    axes: tuple[str, ...]
    extra_turns: str = ""

    @property
    def generator(self) -> str:
        """Entry point of ``generate(ctx, d, axes, rng) -> Draft``."""
        return f"shopgen.gen.tasks.{self.name}:generate"

    @property
    def oracle(self) -> str:
        """Entry point of ``oracle(task) -> Oracle`` (a generator of turns)."""
        return f"shopgen.gen.tasks.{self.name}:oracle"

    @property
    def verifier(self) -> str:
        """Entry point of ``verify(task, state, transcript) -> Score``."""
        return f"shopgen.verifiers.{self.name}:verify"


def _spec(name: str, version: str, summary: str, *axes: str, extra_turns: str = "") -> EnvSpec:
    unknown = set(axes) - set(AXES)
    if unknown:
        raise ValueError(f"{name}: unknown axes {sorted(unknown)}")
    return EnvSpec(name=name, version=version, summary=summary, axes=axes, extra_turns=extra_turns)


_COMMON = ("T_max", "B_tool", "p_missing", "p_noise")

ENVS: tuple[EnvSpec, ...] = (
    _spec(
        "discovery",
        "1.15",
        "find products meeting m constraints and recommend k of them",
        *_COMMON,
        "m",
        "k_rec",
        "top_k",
        "eps_rank",
        "p_oos",
        "p_switch",
    ),
    _spec(
        "substitution",
        "1.14",
        "recommend compatible substitutes for an out-of-stock product",
        *_COMMON,
        "m",
        "k_rec",
        "top_k",
        "eps_rank",
        "p_oos",
        "p_switch",
    ),
    _spec(
        "cart",
        "1.12",
        "build the exact cart the customer asks for",
        *_COMMON,
        "top_k",
        "eps_rank",
        "p_oos",
        "p_switch",
    ),
    _spec(
        "returns",
        "2.17",
        "return or exchange the right order line under the store policy",
        *_COMMON,
        "H_orders",
        "p_switch",
    ),
    _spec("status", "2.15", "tell the customer where an order is", *_COMMON, "H_orders"),
    _spec(
        "policy",
        "2.14",
        "answer a store-policy question decided by B_branch clauses",
        *_COMMON,
        "B_branch",
    ),
    _spec(
        "bundle",
        "1.11",
        "recommend one product per category of a project within budget",
        *_COMMON,
        "top_k",
        "eps_rank",
        "p_oos",
        "p_switch",
    ),
    _spec(
        "journey",
        "3.9",
        "several sub-intents from all seven other environments in one conversation",
        *_COMMON,
        "p_switch",
        "H_orders",
        extra_turns="journey_turns",
    ),
)

ENV_NAMES: tuple[str, ...] = tuple(spec.name for spec in ENVS)


def env_spec(name: str) -> EnvSpec:
    """The spec of environment ``name``."""
    for spec in ENVS:
        if spec.name == name:
            return spec
    raise ConfigError(f"env={name!r} is not an environment ({', '.join(ENV_NAMES)})")


def load_entry_point(ref: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)
