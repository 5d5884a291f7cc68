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
    carriers_named,
    date_claims,
    date_listed,
    date_stated_alone,
    only_code_stated,
    other_code_stated,
    status_stated,
    weekday_mismatched,
)

#: Tools that show an order's status: the listing shows every order's, the details one's.
_LOOKUPS = ("orders_list", "order_get_details")


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the final message: status (and nothing contradicting it), date, tracking, carrier.

    Each part is stated alone: the true status and no other, the date and no date that is
    not the order's (``order_dates``) or today's, and not in a bare list of dates that does
    not say which is which, the tracking number and no other, the carrier and no other; and
    the order must have been looked up. A tracking number or carrier the customer did not
    ask for need not be said, but said it must be the order's (goals since 2.14 hold them:
    ``order_tracking``, ``order_carrier``): "shipped via FedEx" of a USPS parcel, or a
    tracking number given for an order not shipped, is a wrong part; so is a date of a
    cancelled order (which has no date to ask about) that is none of its own.
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
            (goal["order_tracking"], goal["order_carrier"]) if "order_tracking" in goal else None,
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
    """The agent called a tool that shows the order's status (the listing, or its details).

    In a turn before the answer's own: a lookup in the message that answers came too late.
    """
    return any(
        name == "orders_list" or (name == "order_get_details" and args.get("order_id") == order_id)
        for _, name, args in state.calls_before(state.turns)
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
    held: tuple[str | None, str | None] | None = None,
) -> tuple[tuple[str, bool], ...]:
    """Which of the goal's facts the text states, as (part, right) pairs.

    ``held``: the order's tracking number and carrier, asked for or not (None for goals
    before 2.14). One not asked for is a part only when the text states another: it is wrong.
    So is a date of an order that has none to tell (a cancelled one), when it is none of the
    order's own.

    A pure function of the text and the facts, remembered: scoring replays the same final
    messages, and reading dates and statuses out of them is most of the grading.
    """
    now = date.fromisoformat(today)
    parts = {"status": status_stated(text, status)}
    allowed = (
        None if order_dates is None else frozenset(map(date.fromisoformat, (*order_dates, today)))
    )
    if day:
        asked = date.fromisoformat(day)
        parts["date"] = date_stated_alone(
            text, asked, year=now.year, allowed=allowed, today=now
        ) and not date_listed(text, asked, year=now.year, today=now)
    elif held is not None and allowed is not None and _dated_otherwise(text, allowed, now):
        parts["date"] = False  # a cancelled order "expected on March 6"
    if tracking:
        parts["tracking"] = only_code_stated(text, tracking)
    elif held is not None and other_code_stated(text, held[0]):
        parts["tracking"] = False
    if carrier:  # absent from 1.0 goals
        parts["carrier"] = carrier_stated(text, carrier)
    elif held is not None and carriers_named(text) - {held[1]}:
        parts["carrier"] = False
    return tuple(parts.items())


def _dated_otherwise(text: str, allowed: frozenset[date], now: date) -> bool:
    """The text writes a date that is none of ``allowed``.

    Or a weekday none of whose days is, or a weekday beside a date it does not fall on.
    """
    return any(
        not claim & allowed for claim in date_claims(text, year=now.year, today=now)
    ) or weekday_mismatched(text, year=now.year, today=now)
