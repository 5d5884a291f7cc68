"""Grading a recommendation list: hard constraints, episode stock, nDCG against the ideal list.

Shared by discovery and substitution (their goals come from
``shopgen.gen.tasks.constraints.goal_fields``). Each recommended product is judged on the
facts the runtime recorded when ``recommend_products`` ran (``state.extra
["recommended_facts"]``: category, price, rating, shipping days, brand, attributes, stock in the
episode), so no catalog is needed here and a transcript cannot fake them.

r_task = clip(2·(½·q + ½·min(1, nDCG/τ)) − 1 − ½·oos/k, −1, 1), where

- q = (feasible in-stock products among the first k − products beyond k) / k, at least −1:
  dumping every search hit drives it to −1;
- nDCG@k uses shifted utilities as gains, ``gain(u, gain_floor)`` (the goal's floor: its
  in-stock feasible set's lowest utility less a small margin; 0 for an infeasible or
  out-of-stock product) against the stored ideal list, whose DCG is positive by construction.
  Raw utilities bunch so closely that any order of feasible products passed (worst first: 40%
  of tasks); goals from before the floor (no ``gain_floor``) are graded on raw utilities;
- oos counts recommended products out of stock in the episode (an extra penalty).

It equals 1 exactly when the list is correct: k products, all feasible and in stock, nDCG ≥ τ.
Removing a product or breaking one of its constraints lowers q, so it strictly lowers r_task.

:func:`asked_verdict` adds what the customer must have been asked: a list recommended
without hearing their preference, or a fact their first message left out, is a guess.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from shopgen.env.state import EpisodeState
from shopgen.gen.difficulty import MAX_TOP_K
from shopgen.gen.store import BoundedCache
from shopgen.gen.tasks.constraints import Constraints, Preference, dcg, discounts, gain
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, as_asked
from shopgen.verifiers.rows import PerObject, decoded, graded_by_records


class _Goal(NamedTuple):
    """What grading reads of a ranking goal, parsed once per goal object."""

    cons: Constraints
    pref: Preference
    judged: dict[tuple, tuple[tuple[str, ...], bool, float]]  # memo of _judged, filled as graded
    graded: BoundedCache  # memo of whole lists (see grade), filled as graded
    attr_names: tuple[str, ...]  # the constrained attributes, in the constraints' order
    k: int
    floor: float  # gains are utilities above it (the goal's gain_floor; 0 for older goals)
    tau: float
    discount: tuple[float, ...]  # constraints.discounts(k): log2(i + 2) of the first k positions
    idcg: float  # the DCG of the ideal list's first k gains (positive)


def _parse(goal: dict[str, Any]) -> _Goal:
    """The goal's constraints, preference, empty memos, k, τ and the ideal DCG.

    Raises:
        ValueError: k_rec is not between 1 and θ's largest, or the ideal DCG is not positive
            (as :func:`~shopgen.gen.tasks.constraints.ndcg` raises).
    """
    k = int(goal["k_rec"])
    if not 1 <= k <= MAX_TOP_K:  # a corrupt k (10**30) sized the discounts: out of memory
        raise ValueError(f"k_rec={k} must be between 1 and {MAX_TOP_K}")
    by = discounts(k)
    floor = float(goal.get("gain_floor", 0.0))
    idcg = dcg([gain(u, floor) for _, u, *_ in goal["feasible"][:k]], by)
    if idcg <= 0:
        raise ValueError("ideal DCG must be positive")
    cons = Constraints.from_dict(goal["constraints"])
    return _Goal(
        cons,
        Preference.from_dict(goal["preference"]),
        {},
        BoundedCache(GRADED_LIMIT),
        tuple(cons.attrs),
        k,
        floor,
        float(goal["ndcg_threshold"]),
        by,
        idcg,
    )


#: Per goal object: verifiers get goals from :func:`shopgen.verifiers.rows.decoded` (one
#: shared, never-changed object per row text), so a replayed row is parsed once.
_parsed = PerObject(_parse)


#: Products judged per goal before its memo starts over (bounded like the other memos).
JUDGED_LIMIT = 4096
#: Distinct recommendation lists (with their recorded facts) one goal remembers grading.
GRADED_LIMIT = 64

#: How a recommended product without recorded facts is judged: unknown, out of stock, no gain.
_UNKNOWN: tuple[tuple[str, ...], bool, float] = (("unknown",), False, 0.0)


def _judged(g: _Goal, pid: str, fact: dict[str, Any]) -> tuple[tuple[str, ...], bool, float]:
    """(broken constraints, in stock, gain) of one product with recorded facts, remembered.

    Keyed per goal on everything they read of the product: its id, category, price, rating,
    shipping days, brand and stock, its title when a kind is required, and its constrained
    attributes as
    :meth:`~shopgen.gen.tasks.constraints.Constraints.broken` compares them (``str``). A
    replay grades the same products again, and judging them was most of grading a list.
    """
    key = (
        pid,
        fact.get("category_id"),
        fact.get("price"),
        fact.get("rating"),
        fact.get("ship_days"),
        fact.get("brand"),
        fact.get("stock_qty"),
    )
    if g.attr_names:
        attrs = fact.get("attributes") or {}
        key += tuple(str(attrs.get(name)) for name in g.attr_names)
    if g.cons.kind:  # the kind is read from the title (a substitute of the original's kind)
        key += (fact.get("title"),)
    hit = g.judged.get(key)
    if hit is None:
        if len(g.judged) >= JUDGED_LIMIT:  # a rollout's agents may name any products
            g.judged.clear()
        broken = g.cons.broken(pid, fact)
        in_stock = fact["stock_qty"] > 0
        value = gain(g.pref.utility(fact), g.floor) if not broken and in_stock else 0.0
        hit = g.judged[key] = (tuple(broken), in_stock, value)
    return hit


def grade(goal: dict[str, Any], state: EpisodeState) -> tuple[float, bool, dict[str, Any]]:
    """(r_task, correct, details) of the latest recommendation list.

    Remembered per goal object, list and recorded facts
    (:func:`~shopgen.verifiers.rows.graded_by_records`): the details are shared by every
    grading of the list, read them, never change them.
    """
    recs = state.recommendations
    if not recs:
        return -1.0, False, {"reason": "no recommendation"}
    g = _parsed(goal)
    return graded_by_records(g.graded, recs, state, lambda records: _grade(g, recs, records))


def _grade(
    g: _Goal, recs: list[str], records: tuple[dict[str, Any] | None, ...]
) -> tuple[float, bool, dict[str, Any]]:
    """:func:`grade` of the list ``recs`` whose recorded facts are ``records`` (None: none)."""
    k = g.k
    items = []
    head_gains = []  # of the first k products
    n_ok = oos = 0  # feasible in-stock products among the first k; out-of-stock ones in all
    for pid, fact in zip(recs, records, strict=True):
        broken, in_stock, gain = _judged(g, pid, fact) if fact else _UNKNOWN
        ok = not broken and in_stock
        items.append(
            {"product_id": pid, "broken": list(broken), "in_stock": in_stock, "gain": gain}
        )
        oos += not in_stock
        if len(head_gains) < k:
            head_gains.append(gain)
            n_ok += ok
    extra = max(0, len(recs) - k)
    q = max(-1.0, (n_ok - extra) / k)
    nd = dcg(head_gains, g.discount) / g.idcg
    r = 2 * (0.5 * q + 0.5 * min(1.0, nd / g.tau)) - 1 - 0.5 * oos / k
    correct = len(recs) == k and n_ok == k and nd >= g.tau
    r_task = 1.0 if correct else max(-1.0, min(r, 0.999))
    details = {"ndcg": round(nd, 6), "feasible_in_head": n_ok, "n": len(recs), "items": items}
    return r_task, correct, details


def asked_verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """:func:`grade` of the task's goal, at most 0 and not correct unless it was asked for.

    The customer states their preference only when asked, and the facts their first message
    left out (a budget, a brand, how many) likewise (:func:`facts_to_ask`). A list made
    without hearing them is a guess: ranked by rating alone, without asking, it was correct
    on 7 of 13 discovery and substitution tasks whose first message left out nothing but the
    preference, and the first k in-stock search hits earned +0.22 on average (5k products),
    while cart, bundle and returns capped such guesses at 0.
    """
    verdict = grade(decoded(task, "goal"), state)
    return as_asked(verdict, _to_ask(task), state, before=state.extra.get("recommended_turn"))


def facts_to_ask(task: TaskRow) -> frozenset[str]:
    """The slots the customer states only when asked: the preference and the left-out facts.

    What a change of mind states is said unasked.
    """
    script = decoded(task, "user_script")
    changed = {name for name, _ in (script.get("switch") or {}).get("changes", ())}
    return frozenset(
        s["name"]
        for s in script["slots"]
        if (s["kind"] == "preference" or s["omitted"])
        and s["kind"] != "id"
        and s["name"] not in changed
    )


#: Per (frozen) task row: the slots its list needs asked (:func:`facts_to_ask`).
_to_ask = PerObject(facts_to_ask)
