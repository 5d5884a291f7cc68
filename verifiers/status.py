"""Verifier of ``status`` (see ``shopgen.gen.tasks.status`` for the task)."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, compose
from shopgen.verifiers.rows import decoded
from shopgen.verifiers.text import carrier_stated, code_stated, dates_in, status_stated


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the final message: status (and nothing contradicting it), date, tracking, carrier."""
    goal = decoded(task, "goal")
    text = state.final_text or ""
    today = decoded(task, "episode").get("today") or goal["date"] or "2026-01-01"
    parts = dict(
        _parts(
            text, goal["status"], goal["date"], goal["tracking_number"], goal.get("carrier"), today
        )
    )
    right = sum(parts.values())
    r_task = 2 * right / len(parts) - 1 if text.strip() else -1.0
    return r_task, right == len(parts), {"parts": parts}


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))


@lru_cache(maxsize=4096)
def _parts(
    text: str,
    status: str,
    day: str | None,
    tracking: str | None,
    carrier: str | None,
    today: str,
) -> tuple[tuple[str, bool], ...]:
    """Which of the goal's facts the text states, as (part, right) pairs.

    A pure function of the text and the facts, remembered: scoring replays the same final
    messages, and reading dates and statuses out of them is most of the grading.
    """
    year = date.fromisoformat(today).year
    parts = {"status": status_stated(text, status)}
    if day:
        parts["date"] = date.fromisoformat(day) in dates_in(text, year=year)
    if tracking:
        parts["tracking"] = code_stated(text, tracking)
    if carrier:  # absent from 1.0 goals
        parts["carrier"] = carrier_stated(text, carrier)
    return tuple(parts.items())
