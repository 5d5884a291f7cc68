"""Grading a recommendation list: hard constraints, episode stock, nDCG against the ideal list.

Shared by discovery and substitution (their goals come from
``shopgen.gen.tasks.constraints.goal_fields``). Each recommended product is judged on the
facts the runtime recorded when ``recommend_products`` ran (``state.extra
["recommended_facts"]``: category, price, rating, shipping days, brand, attributes, stock in the
episode), so no catalog is needed here and a transcript cannot fake them.

r_task = clip(2·(½·q + ½·min(1, nDCG/τ)) − 1 − ½·oos/k, −1, 1), where

- q = (feasible in-stock products among the first k − products beyond k) / k, at least −1:
  dumping every search hit drives it to −1;
- nDCG@k uses utilities as gains (0 for an infeasible or out-of-stock product) against the
  stored ideal list, whose DCG is positive by construction;
- oos counts recommended products out of stock in the episode (an extra penalty).

It equals 1 exactly when the list is correct: k products, all feasible and in stock, nDCG ≥ τ.
Removing a product or breaking one of its constraints lowers q, so it strictly lowers r_task.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from shopgen.env.state import EpisodeState
from shopgen.gen.tasks.constraints import Constraints, Preference
from shopgen.verifiers.rows import PerObject


class _Goal(NamedTuple):
    """What grading reads of a ranking goal, parsed once per goal object."""

    cons: Constraints
    pref: Preference
    utilities: dict[tuple, float]  # memo of pref.utility (see _utility), filled as graded
    k: int
    tau: float
    discounts: tuple[float, ...]  # log2(i + 2) of the first k positions
    idcg: float  # the DCG of the ideal list's first k gains (positive)


def _parse(goal: dict[str, Any]) -> _Goal:
    """The goal's constraints, preference, an empty memo of its utilities, k, τ and ideal DCG.

    Raises:
        ValueError: the ideal DCG is not positive (as :func:`~shopgen.gen.tasks.constraints.ndcg`
            raises; a goal without feasible products).
    """
    k = int(goal["k_rec"])
    discounts = tuple(math.log2(i + 2) for i in range(k))
    idcg = _dcg([u for _, u, *_ in goal["feasible"][:k]], discounts)
    if idcg <= 0:
        raise ValueError("ideal DCG must be positive")
    return _Goal(
        Constraints.from_dict(goal["constraints"]),
        Preference.from_dict(goal["preference"]),
        {},
        k,
        float(goal["ndcg_threshold"]),
        discounts,
        idcg,
    )


def _dcg(gains: list[float], discounts: tuple[float, ...]) -> float:
    """DCG of at most ``len(discounts)`` gains, summed exactly as ``constraints.ndcg`` sums it.

    With the discounts and the ideal DCG made once per goal, a list's nDCG is
    ``_dcg(gains, discounts) / idcg``: the same floats as ``ndcg(gains, ideal)``, without its
    logarithms on every call.
    """
    return sum(g / d for g, d in zip(gains, discounts, strict=False))


#: Per goal object: verifiers get goals from :func:`shopgen.verifiers.rows.decoded` (one
#: shared, never-changed object per row text), so a replayed row is parsed once.
_parsed = PerObject(_parse)


def _utility(pref: Preference, memo: dict[tuple, float], fact: dict[str, Any]) -> float:
    """``pref.utility(fact)``, remembered on the four facts it reads (NumPy scalars are slow)."""
    key = (fact["price"], fact["rating"], fact["ship_days"], fact["brand"])
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = pref.utility(fact)
    return hit


def grade(goal: dict[str, Any], state: EpisodeState) -> tuple[float, bool, dict[str, Any]]:
    """(r_task, correct, details) of the latest recommendation list."""
    recs = list(state.recommendations)
    if not recs:
        return -1.0, False, {"reason": "no recommendation"}
    cons, pref, utilities, k, tau, discounts, idcg = _parsed(goal)
    facts = state.extra.get("recommended_facts") or {}
    items = []
    head_gains = []  # of the first k products
    n_ok = oos = 0  # feasible in-stock products among the first k; out-of-stock ones in all
    for pid in recs:
        fact = facts.get(pid)
        broken = cons.broken(pid, fact) if fact else ["unknown"]
        in_stock = bool(fact) and fact["stock_qty"] > 0
        ok = not broken and in_stock
        gain = _utility(pref, utilities, fact) if ok else 0.0
        items.append({"product_id": pid, "broken": broken, "in_stock": in_stock, "gain": gain})
        oos += not in_stock
        if len(head_gains) < k:
            head_gains.append(gain)
            n_ok += ok
    extra = max(0, len(recs) - k)
    q = max(-1.0, (n_ok - extra) / k)
    nd = _dcg(head_gains, discounts) / idcg
    r = 2 * (0.5 * q + 0.5 * min(1.0, nd / tau)) - 1 - 0.5 * oos / k
    correct = len(recs) == k and n_ok == k and nd >= tau
    r_task = 1.0 if correct else max(-1.0, min(r, 0.999))
    details = {"ndcg": round(nd, 6), "feasible_in_head": n_ok, "n": len(recs), "items": items}
    return r_task, correct, details
