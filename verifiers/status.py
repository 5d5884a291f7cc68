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
from shopgen.verifiers.text import (
    carrier_stated,
    date_listed,
    date_stated_alone,
    only_code_stated,
    status_stated,
)

#: Tools that show an order's status: the listing shows every order's, the details one's.
_LOOKUPS = ("orders_list", "order_get_details")


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the final message: status (and nothing contradicting it), date, tracking, carrier.

    Each part is stated alone: the true status and no other, the date and no date that is
    not the order's (``order_dates``) or today's, and not in a bare list of dates that does
    not say which is which, the tracking number and no other, the carrier and no other; and
    the order must have been looked up.
    """
    goal = decoded(task, "goal")
    text = state.final_text or ""
    today = decoded(task, "episode").get("today") or goal["date"] or "2026-01-01"
    dates = goal.get("order_dates")  # absent from goals before 2.2
    parts = dict(
        _parts(
            text,
            goal["status"],
            goal["date"],
            goal["tracking_number"],
            goal.get("carrier"),
            today,
            None if dates is None else tuple(dates),
        )
    )
    right = sum(parts.values())
    r_task = 2 * right / len(parts) - 1 if text.strip() else -1.0
    # An answer given without looking the order up is a guess (a blind "it was cancelled" is
    # right for every cancelled order): it earns nothing even when it happens to be right.
    looked = looked_up(state, goal["order_id"])
    return (
        r_task if looked else min(r_task, 0.0),
        looked and right == len(parts),
        {"parts": parts, "looked_up": looked},
    )


def looked_up(state: EpisodeState, order_id: str) -> bool:
    """The agent called a tool that shows the order's status (the listing, or its details)."""
    return any(
        name == "orders_list" or (name == "order_get_details" and args.get("order_id") == order_id)
        for _, name, args in state.tool_calls
        if name in _LOOKUPS
    )


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
    order_dates: tuple[str, ...] | None = None,
) -> tuple[tuple[str, bool], ...]:
    """Which of the goal's facts the text states, as (part, right) pairs.

    A pure function of the text and the facts, remembered: scoring replays the same final
    messages, and reading dates and statuses out of them is most of the grading.
    """
    now = date.fromisoformat(today)
    parts = {"status": status_stated(text, status)}
    if day:
        allowed = (
            None
            if order_dates is None
            else frozenset(map(date.fromisoformat, (*order_dates, today)))
        )
        asked = date.fromisoformat(day)
        parts["date"] = date_stated_alone(
            text, asked, year=now.year, allowed=allowed, today=now
        ) and not date_listed(text, asked, year=now.year, today=now)
    if tracking:
        parts["tracking"] = only_code_stated(text, tracking)
    if carrier:  # absent from 1.0 goals
        parts["carrier"] = carrier_stated(text, carrier)
    return tuple(parts.items())
