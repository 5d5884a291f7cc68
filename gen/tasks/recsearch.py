"""The search-then-recommend oracle shared by discovery and substitution.

The oracle may read the hidden goal to *decide* (which shown products are feasible and best)
but recommends only products a tool showed it. It searches with what the customer said; when
the best list among shown products does not reach the nDCG threshold it searches more
specifically (one query per brand of the best feasible products not yet seen). When the turn
budget runs out first the draw is unusable and it raises :class:`Redraw`, so every accepted
task's ideal-by-findability list is correct by construction (issue #7).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shopgen.gen.tasks.base import Call, Oracle, Redraw, call, shown_ids
from shopgen.gen.tasks.constraints import ndcg
from shopgen.schemas.task import TaskRow

#: What the oracle asks for each omitted slot (words the simulated customer understands).
ASK_WORDS = {
    "price_max": "budget",
    "rating_min": "minimum rating",
    "ship_days_max": "delivery time",
    "brand": "brand",
    "k_rec": "how many options",
}


def ask_question(omitted: list[dict[str, Any]]) -> str:
    """One question naming every omitted slot by a word the customer answers to."""
    words = [ASK_WORDS.get(s["name"], s["label"]) for s in omitted]
    body = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return f"Before I search, could you tell me your preferred {body}?"


def query(*parts: Any) -> str:
    """A search query from words, skipping empty parts and repeats."""
    return " ".join(dict.fromkeys(str(p) for p in parts if p not in (None, "")))


def best_list(seen: Iterable[str], feasible: dict[str, float], k: int) -> list[str]:
    """The k best feasible products among those seen, by utility (ties by id)."""
    return sorted((p for p in set(seen) if p in feasible), key=lambda p: (-feasible[p], p))[:k]


def play(
    task: TaskRow,
    *,
    first: list[Call],
    queries: list[str],
    brand_query: Any,
    final: str,
) -> Oracle:
    """Play: ``first`` calls, then search turns until the best seen list is good enough.

    Args:
        task: the task row (goal from :func:`shopgen.gen.tasks.constraints.goal_fields`).
        first: calls of the first turn (ask_user, searches with what was said), may be empty.
        queries: searches with every constraint known, in order.
        brand_query: ``brand -> query`` for the more specific searches.
        final: the closing message.
    """
    goal = task.decoded("goal")
    k, tau = int(goal["k_rec"]), float(goal["ndcg_threshold"])
    budget, t_max = task.axis("B_tool"), task.axis("T_max")
    feasible = {pid: u for pid, u, _ in goal["feasible"]}
    brands = [(pid, b) for pid, _, b in goal["feasible"]]
    ideal = [u for _, u, _ in goal["feasible"][:k]]
    seen: set[str] = set()
    turns, pending, asked = 0, list(queries), set()
    if first:
        seen.update(shown_ids((yield first)))
        turns += 1
    while True:
        best = best_list(seen, feasible, k)
        if len(best) == k and ndcg([feasible[p] for p in best], ideal) >= tau:
            break
        if not pending:
            for pid, brand in brands:
                if pid not in seen and brand not in asked:
                    asked.add(brand)
                    pending.append(brand_query(brand))
        if t_max - turns <= 2 or not pending:
            raise Redraw("the searches do not surface a good enough list in T_max turns")
        calls = [call("catalog_search", query=q) for q in pending[:budget]]
        pending = pending[budget:]
        seen.update(shown_ids((yield calls)))
        turns += 1
    yield [call("recommend_products", product_ids=best)]
    yield final
