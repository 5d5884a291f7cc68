"""Verifier of ``bundle`` (see ``shopgen.gen.tasks.bundle`` for the task)."""

from __future__ import annotations

from typing import Any, NamedTuple

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score, copy_data
from shopgen.gen.store import BoundedCache
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, as_asked, compose
from shopgen.verifiers.rows import PerObject, decoded, graded_by_records

#: Share of the coverage score kept when the recommended set costs more than the budget.
OVER_BUDGET_FACTOR = 0.5


def grade(goal: dict[str, Any], state: EpisodeState) -> tuple[float, bool, dict[str, Any]]:
    """r_task, is_correct and details of a bundle goal on a final state.

    Public so that ``journey`` grades its bundle sub-goal with exactly this logic. Remembered
    per goal object, list and recorded facts (:func:`~shopgen.verifiers.rows.graded_by_records`):
    the details are shared, read them, never change them.
    """
    recs = state.recommendations
    parsed = _parsed(goal)
    if not recs:
        return -1.0, False, {"recommended": 0, "required": len(parsed.required)}
    return graded_by_records(
        parsed.graded, recs, state, lambda records: _grade(goal, parsed, records)
    )


def _grade(
    goal: dict[str, Any], parsed: _Parsed, records: tuple[dict[str, Any] | None, ...]
) -> tuple[float, bool, dict[str, Any]]:
    """:func:`grade` of a list whose products' recorded facts are ``records`` (None: none)."""
    required, kinds = parsed.required, parsed.kinds
    # Only in-stock products cover a kind; each kind counts once however often it is covered.
    covering: dict[str, int] = {}
    for fact in records:
        if fact is not None and fact["stock_qty"] > 0:
            cat = fact["category_id"]
            covering[cat] = covering.get(cat, 0) + 1
    hit = sum(1 for cat in kinds if cat in covering)
    f1 = 2 * hit / (len(records) + len(required))
    cents = sum(round(float(fact["price"]) * 100) for fact in records if fact is not None)
    budget = goal.get("budget")
    within = budget is None or cents <= int(budget) * 100
    r_task = 2 * f1 * (1.0 if within else OVER_BUDGET_FACTOR) - 1
    correct = (
        hit == len(required)
        and len(records) == len(required)
        and all(covering.get(cat) == 1 for cat in required)
        and within
    )
    details = {
        "covered": hit,
        "required": len(required),
        "recommended": len(records),
        "f1": round(f1, 6),
        "total": cents / 100,
        "within_budget": within,
    }
    return r_task, correct, details


class _Parsed(NamedTuple):
    """What grading reads of a bundle goal, made once per goal object."""

    required: list[str]  # the required categories, in order
    kinds: frozenset[str]  # the set of them
    graded: BoundedCache  # memo of whole lists (see grade), filled as graded


#: Distinct recommendation lists (with their recorded facts) one goal remembers grading.
GRADED_LIMIT = 64


def _parse(goal: dict[str, Any]) -> _Parsed:
    required = [c["category"] for c in goal["categories"]]
    return _Parsed(required, frozenset(required), BoundedCache(GRADED_LIMIT))


#: Per shared goal object (see :func:`shopgen.verifiers.rows.decoded`); read, never changed.
_parsed = PerObject(_parse)


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the latest recommendation: coverage F1, stock, the budget, and that it was asked.

    A customer who named only the project lists the kinds they need when asked. A list
    recommended without hearing them is a guess from the project (the whole project, or the
    kinds a stated budget fits): however well it happens to match, it earns at most 0 and is
    not correct, as a guessed start is in ``returns``.
    """
    verdict = grade(decoded(task, "goal"), state)
    return as_asked(verdict, _to_ask(task), state, before=state.extra.get("recommended_turn"))


def _kinds_to_ask(task: TaskRow) -> frozenset[str]:
    """The must-have slots the customer states only when asked (none when listed up front)."""
    if decoded(task, "goal")["listed"]:
        return frozenset()
    slots = decoded(task, "user_script")["slots"]
    return frozenset(s["name"] for s in slots if s["name"].startswith("must."))


#: Per (frozen) task row: the must-have slots its list needs asked (:func:`_kinds_to_ask`).
_to_ask = PerObject(_kinds_to_ask)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms, its details copied out."""
    r_task, correct, details = verdict(task, state)
    return compose(task, state, r_task, correct, copy_data(details))
