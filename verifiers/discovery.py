"""Verifier of ``discovery`` (see ``shopgen.gen.tasks.discovery`` for the task)."""

from __future__ import annotations

from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score, copy_data
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.ranking import asked_verdict
from shopgen.verifiers.reward import Verdict, compose


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the latest recommendation list against every constraint and the ideal ranking, as asked."""
    return asked_verdict(task, state)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms, its details copied out.

    :func:`~shopgen.verifiers.ranking.grade` remembers the details it returns.
    """
    r_task, correct, details = verdict(task, state)
    return compose(task, state, r_task, correct, copy_data(details))
