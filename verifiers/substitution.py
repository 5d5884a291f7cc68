"""Verifier of ``substitution`` (see ``shopgen.gen.tasks.substitution`` for the task)."""

from __future__ import annotations

from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.ranking import grade
from shopgen.verifiers.reward import Verdict, compose
from shopgen.verifiers.rows import decoded


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the latest recommendation list against compatibility, every constraint and the ideal ranking."""
    return grade(decoded(task, "goal"), state)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))
