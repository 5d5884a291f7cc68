"""The rewritten graders (issue #7's journey scoring) equal the plain forms they replaced.

``ranking.grade`` counts in one pass with k, τ, the discounts and the ideal DCG read once per
goal and each product judged once per goal and facts,
``bundle.grade`` counts covered kinds without a Counter, ``task_terms`` skips ``round`` for a
whole r_task: each is compared with the previous code, kept here as the reference, on states
Hypothesis draws (unknown, out-of-stock, infeasible, repeated and over-long lists included).
"""

from __future__ import annotations

import copy
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.state import EpisodeState
from shopgen.gen.tasks.constraints import Constraints, Preference, dcg, ndcg
from shopgen.verifiers import bundle, ranking
from shopgen.verifiers.reward import _round6

CATEGORIES = ["c1", "c2", "c3"]
PIDS = [f"P{i}" for i in range(8)]

facts_st = st.fixed_dictionaries(
    {
        "category_id": st.sampled_from(CATEGORIES),
        "price": st.sampled_from([4.99, 19.5, 20.0, 75.25, 120.0]),
        "rating": st.sampled_from([2.5, 3.9, 4.2, 4.8]),
        "ship_days": st.integers(1, 9),
        "brand": st.sampled_from(["Acme", "Zeta"]),
        "attributes": st.fixed_dictionaries({"color": st.sampled_from(["red", "blue"])}),
        "stock_qty": st.sampled_from([0, 1, 7]),
    }
)
states = st.builds(
    lambda recs, facts: (recs, {pid: f for pid, f in facts.items()}),
    st.lists(st.sampled_from(PIDS), max_size=7),
    st.dictionaries(st.sampled_from(PIDS), facts_st, max_size=8),
)


def _state(recs: list[str], facts: dict) -> EpisodeState:
    state = EpisodeState(recommendations=list(recs))
    state.extra["recommended_facts"] = facts
    return state


def _ranking_reference(goal, state):
    """ranking.grade before the one-pass rewrite."""
    recs = list(state.recommendations)
    if not recs:
        return -1.0, False, {"reason": "no recommendation"}
    cons = Constraints.from_dict(goal["constraints"])
    pref = Preference.from_dict(goal["preference"])
    k, tau = int(goal["k_rec"]), float(goal["ndcg_threshold"])
    facts = state.extra.get("recommended_facts") or {}
    items = []
    for pid in recs:
        fact = facts.get(pid)
        broken = cons.broken(pid, fact) if fact else ["unknown"]
        in_stock = bool(fact) and fact["stock_qty"] > 0
        ok = not broken and in_stock
        floor = goal.get("gain_floor", 0.0)  # goals from before the floor: raw utilities
        gain = max(0.0, round(pref.utility(fact) - floor, 6)) if ok else 0.0
        items.append({"product_id": pid, "broken": broken, "in_stock": in_stock, "gain": gain})
    head = items[:k]
    n_ok = sum(1 for it in head if not it["broken"] and it["in_stock"])
    extra = max(0, len(recs) - k)
    q = max(-1.0, (n_ok - extra) / k)
    ideal = [
        max(0.0, round(u - goal.get("gain_floor", 0.0), 6)) for _, u, *_ in goal["feasible"][:k]
    ]
    nd = ndcg([it["gain"] for it in head], ideal)
    oos = sum(1 for it in items if not it["in_stock"])
    r = 2 * (0.5 * q + 0.5 * min(1.0, nd / tau)) - 1 - 0.5 * oos / k
    correct = len(recs) == k and n_ok == k and nd >= tau
    r_task = 1.0 if correct else max(-1.0, min(r, 0.999))
    details = {"ndcg": round(nd, 6), "feasible_in_head": n_ok, "n": len(recs), "items": items}
    return r_task, correct, details


def _ranking_goal(
    k: int, price_max: float | None, exclude: list[str], floor: float | None = None
) -> dict:
    return {
        **({} if floor is None else {"gain_floor": floor}),
        "constraints": Constraints(
            category="c1", price_max=price_max, attrs={"color": "red"}, exclude=tuple(exclude)
        ).to_dict(),
        "preference": {
            "weights": {"price": 0.5, "rating": 0.3, "ship_speed": 0.2, "brand_loyalty": 0.1},
            "brands": ["Acme"],
            "price_lo": 1.0,
            "price_hi": 200.0,
            "ship_lo": 1,
            "ship_hi": 9,
        },
        "feasible": [["X1", 0.9, "Acme"], ["X2", 0.7, "Zeta"], ["X3", 0.4, "Acme"]],
        "k_rec": k,
        "ndcg_threshold": 0.8,
    }


@settings(max_examples=150)
@given(
    lists=st.lists(states, min_size=1, max_size=4),
    k=st.integers(1, 3),
    price_max=st.none() | st.sampled_from([20.0, 100.0]),
    exclude=st.lists(st.sampled_from(PIDS), max_size=2),
    floor=st.none() | st.sampled_from([0.39, 0.5]),
)
def test_ranking_grade_equals_the_plain_grade(lists, k, price_max, exclude, floor):
    """One goal object grades several states: its memos never answer for other facts."""
    goal = _ranking_goal(k, price_max, exclude, floor)
    for state in lists:
        episode = _state(*state)
        assert ranking.grade(goal, episode) == _ranking_reference(goal, episode)
        assert ranking.grade(goal, episode) == _ranking_reference(goal, episode)  # remembered
        # The same products recorded anew (other objects, equal facts): judged as remembered.
        again = _state(state[0], copy.deepcopy(state[1]))
        assert ranking.grade(goal, again) == _ranking_reference(goal, again)


#: One recorded product's facts (in stock, within every constraint the goals here set).
_FACT = {
    "category_id": "c1",
    "price": 19.5,
    "rating": 4.2,
    "ship_days": 2,
    "brand": "Acme",
    "attributes": {"color": "red"},
    "stock_qty": 7,
}


def test_ranking_judges_each_product_on_its_own_id_and_facts():
    """Equal facts under an excluded id, or one fact changed, are judged anew."""
    goal = _ranking_goal(2, 20.0, ["P1"])
    fact = _FACT
    for recs, facts in (
        (["P0", "P1"], {"P0": fact, "P1": dict(fact)}),  # P1 is excluded, same facts
        (["P0", "P2"], {"P0": {**fact, "price": 75.25}, "P2": fact}),  # P0 over the price
        (["P0", "P2"], {"P0": {**fact, "attributes": {"color": "blue"}}, "P2": fact}),
        (["P0", "P2"], {"P0": {**fact, "rating": 2.5}, "P2": {**fact, "brand": "Zeta"}}),
    ):
        episode = _state(recs, facts)
        assert ranking.grade(goal, episode) == _ranking_reference(goal, episode)


@settings(max_examples=200)
@given(
    gains=st.lists(st.floats(0, 1).map(lambda u: round(u, 4)), max_size=10),
    ideal=st.lists(st.floats(0, 1).map(lambda u: round(u, 4)), min_size=1, max_size=10),
    k=st.integers(1, 10),
)
def test_ranking_ndcg_from_the_goal_equals_ndcg(gains, ideal, k):
    goal = {**_ranking_goal(k, None, []), "feasible": [["X", u] for u in ideal]}
    head, best = gains[:k], ideal[:k]
    if not any(best):  # no positive ideal DCG: both refuse the goal
        with pytest.raises(ValueError, match="ideal DCG"):
            ranking._parse(goal)
        with pytest.raises(ValueError, match="ideal DCG"):
            ndcg(head, best)
        return
    parsed = ranking._parse(goal)
    plain = sum(g / math.log2(i + 2) for i, g in enumerate(head)) / sum(
        g / math.log2(i + 2) for i, g in enumerate(best)
    )
    assert dcg(head, parsed.discount) / parsed.idcg == ndcg(head, best) == plain


def test_ranking_memo_starts_over_at_its_bound(monkeypatch):
    """Past JUDGED_LIMIT products a goal's memo starts over, and grades stay the plain ones."""
    monkeypatch.setattr(ranking, "JUDGED_LIMIT", 1)
    goal = _ranking_goal(2, None, [])
    for recs in (["P0", "P2"], ["P2", "P0"], ["P0", "P3"]):
        episode = _state(recs, {pid: _FACT for pid in recs})
        assert ranking.grade(goal, episode) == _ranking_reference(goal, episode)
        assert len(ranking._parsed(goal).judged) <= 1


def _bundle_reference(goal, state):
    """bundle.grade before the Counter-free rewrite."""
    recs = list(state.recommendations)
    facts = state.extra.get("recommended_facts", {})
    required = [c["category"] for c in goal["categories"]]
    if not recs:
        return -1.0, False, {"recommended": 0, "required": len(required)}
    covering = Counter(
        facts[pid]["category_id"] for pid in recs if pid in facts and facts[pid]["stock_qty"] > 0
    )
    hit = sum(1 for cat in set(required) if covering[cat] > 0)
    f1 = 2 * hit / (len(recs) + len(required))
    cents = sum(round(float(facts[pid]["price"]) * 100) for pid in recs if pid in facts)
    budget = goal.get("budget")
    within = budget is None or cents <= int(budget) * 100
    r_task = 2 * f1 * (1.0 if within else bundle.OVER_BUDGET_FACTOR) - 1
    correct = (
        hit == len(required)
        and len(recs) == len(required)
        and all(covering[cat] == 1 for cat in required)
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


@settings(max_examples=150)
@given(
    state=states,
    required=st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=4),
    budget=st.none() | st.sampled_from([30, 150, 400]),
)
def test_bundle_grade_equals_the_counter_grade(state, required, budget):
    goal = {"categories": [{"category": c} for c in required], "budget": budget}
    episode = _state(*state)
    assert bundle.grade(goal, episode) == _bundle_reference(goal, episode)


@given(
    st.floats(-1.0, 1.0) | st.sampled_from([-1.0, -0.0, 0.0, 1.0, 0.9999995, -0.4999995, 0.0000005])
)
def test_round6_is_round_to_six_digits_sign_included(value):
    assert repr(_round6(value)) == repr(round(value, 6))


@settings(max_examples=100)
@given(facts=st.lists(st.dictionaries(st.sampled_from(PIDS[:3]), facts_st), min_size=2, max_size=4))
def test_a_remembered_list_answers_only_for_its_own_fact_records(facts):
    """The same ids recorded again with other facts (other records) are graded anew."""
    goal = _ranking_goal(2, 100.0, [])
    kit = {"categories": [{"category": c} for c in CATEGORIES[:2]], "budget": 150}
    for recorded in facts:
        episode = _state(PIDS[:3], recorded)
        assert ranking.grade(goal, episode) == _ranking_reference(goal, episode)
        assert bundle.grade(kit, episode) == _bundle_reference(kit, episode)


def test_a_remembered_list_changes_with_a_product_sold_out():
    sold_out = {**_FACT, "stock_qty": 0}
    goal = _ranking_goal(2, None, [])
    kit = {"categories": [{"category": "c1"}, {"category": "c2"}], "budget": None}
    graded = []
    for facts in ({"P0": _FACT, "P2": _FACT}, {"P0": sold_out, "P2": _FACT}):
        episode = _state(["P0", "P2"], facts)
        graded.append((ranking.grade(goal, episode), bundle.grade(kit, episode)))
        assert graded[-1] == (_ranking_reference(goal, episode), _bundle_reference(kit, episode))
    assert graded[0] != graded[1]
