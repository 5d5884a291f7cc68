"""Verifier of ``bundle`` (see ``shopgen.gen.tasks.bundle`` for the task)."""

from __future__ import annotations

from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, compose
from shopgen.verifiers.rows import PerObject, decoded

#: Share of the coverage score kept when the recommended set costs more than the budget.
OVER_BUDGET_FACTOR = 0.5


def grade(goal: dict[str, Any], state: EpisodeState) -> tuple[float, bool, dict[str, Any]]:
    """r_task, is_correct and details of a bundle goal on a final state.

    Public so that ``journey`` grades its bundle sub-goal with exactly this logic.
    """
    recs = list(state.recommendations)
    facts = state.extra.get("recommended_facts", {})
    required, kinds = _required(goal)
    if not recs:
        return -1.0, False, {"recommended": 0, "required": len(required)}
    # Only in-stock products cover a kind; each kind counts once however often it is covered.
    covering: dict[str, int] = {}
    for pid in recs:
        fact = facts.get(pid)
        if fact is not None and fact["stock_qty"] > 0:
            cat = fact["category_id"]
            covering[cat] = covering.get(cat, 0) + 1
    hit = sum(1 for cat in kinds if cat in covering)
    f1 = 2 * hit / (len(recs) + len(required))
    cents = sum(round(float(facts[pid]["price"]) * 100) for pid in recs if pid in facts)
    budget = goal.get("budget")
    within = budget is None or cents <= int(budget) * 100
    r_task = 2 * f1 * (1.0 if within else OVER_BUDGET_FACTOR) - 1
    correct = (
        hit == len(required)
        and len(recs) == len(required)
        and all(covering.get(cat) == 1 for cat in required)
        and within
    )
    details = {
        "covered": hit,
        "required": len(required),
        "recommended": len(recs),
        "f1": round(f1, 6),
        "total": cents / 100,
        "within_budget": within,
    }
    return r_task, correct, details


def _make_required(goal: dict[str, Any]) -> tuple[list[str], frozenset[str]]:
    """The goal's required categories in order, and the set of them."""
    required = [c["category"] for c in goal["categories"]]
    return required, frozenset(required)


#: Per shared goal object (see :func:`shopgen.verifiers.rows.decoded`); read, never changed.
_required = PerObject(_make_required)


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the latest recommendation: category coverage F1, stock, and the budget."""
    return grade(decoded(task, "goal"), state)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))
