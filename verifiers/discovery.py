"""Verifier of ``discovery`` (see ``shopgen.gen.tasks.discovery`` for the task)."""

from __future__ import annotations

from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.ranking import grade
from shopgen.verifiers.reward import compose
from shopgen.verifiers.rows import decoded


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """Grade the latest recommendation list against every constraint and the ideal ranking."""
    r_task, correct, details = grade(decoded(task, "goal"), state)
    return compose(task, state, r_task=r_task, correct=correct, details=details)
