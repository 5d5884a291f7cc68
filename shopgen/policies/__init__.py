"""Reference policies: the stored oracle, a rule-based heuristic per environment, random play.

:func:`play` runs any of them (or a degenerate policy of :mod:`shopgen.testing`) on one task
row and returns the verifier's score. The heuristic and random policies see only
:class:`~shopgen.policies.base.PublicTask` and what tools and the customer tell them.
"""

from __future__ import annotations

import json

from shopgen.env.episode import ShopEnv
from shopgen.env.verifier import Score
from shopgen.policies.base import Agent, PublicTask, play_agent
from shopgen.policies.heuristic import heuristic_for
from shopgen.policies.random import random_policy
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import TaskRow
from shopgen.testing import DEGENERATE, run_policy
from shopgen.verifiers.replay import play as replay

#: Reference policies first, then the degenerate cheats of shopgen.testing.
POLICIES: tuple[str, ...] = ("oracle", "heuristic", "random", *DEGENERATE)
REFERENCE: tuple[str, ...] = ("oracle", "heuristic", "random")

__all__ = ["POLICIES", "REFERENCE", "Agent", "PublicTask", "play", "play_agent"]


def play(env: ShopEnv, row: TaskRow, policy: str) -> Score | None:
    """Play the named policy on ``row`` through ``env``; the verifier's score.

    Raises:
        ConfigError: ``policy`` is not one of :data:`POLICIES`.
    """
    if policy == "oracle":
        return replay(env, row, json.loads(row.oracle))[0]
    if policy == "heuristic":
        return play_agent(env, row, heuristic_for(row.env))
    if policy == "random":
        return play_agent(env, row, random_policy)
    if policy in DEGENERATE:
        return run_policy(env, row, DEGENERATE[policy])
    raise ConfigError(f"policy={policy!r} is not one of {', '.join(POLICIES)}")
