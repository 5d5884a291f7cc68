"""Verifier of ``status`` (see ``shopgen.gen.tasks.status`` for the task)."""

from __future__ import annotations

from datetime import date
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import compose
from shopgen.verifiers.rows import decoded
from shopgen.verifiers.text import carrier_stated, code_stated, dates_in, status_stated


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """Grade the final message: status (and nothing contradicting it), date, tracking, carrier."""
    goal = decoded(task, "goal")
    text = state.final_text or ""
    today = date.fromisoformat(
        decoded(task, "episode").get("today") or goal["date"] or "2026-01-01"
    )
    parts = {"status": status_stated(text, goal["status"])}
    if goal["date"]:
        parts["date"] = date.fromisoformat(goal["date"]) in dates_in(text, year=today.year)
    if goal["tracking_number"]:
        parts["tracking"] = code_stated(text, goal["tracking_number"])
    if goal.get("carrier"):  # absent from 1.0 goals
        parts["carrier"] = carrier_stated(text, goal["carrier"])
    right = sum(parts.values())
    r_task = 2 * right / len(parts) - 1 if text.strip() else -1.0
    return compose(
        task, state, r_task=r_task, correct=right == len(parts), details={"parts": parts}
    )
