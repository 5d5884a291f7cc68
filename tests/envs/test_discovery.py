"""discovery: feasible set recomputed with DuckDB, axes, oracle, degenerate policies, grading."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.env.episode import ShopEnv
from shopgen.env.state import EpisodeState
from shopgen.gen.difficulty import theta
from shopgen.gen.tasks.constraints import (
    UTILITY_DIGITS,
    Constraints,
    Preference,
    ndcg,
    pool_min,
    tables,
)
from shopgen.schemas.errors import ConfigError
from shopgen.taskgen import TaskFactory, assistant_message, decode_result
from shopgen.testing import (
    check_env,
    check_recommend_switch,
    run_policy,
    scored_with_final,
    search_order,
    stated_utility,
    worst_first,
)
from shopgen.verifiers.ranking import grade
from shopgen.verifiers.reward import MAX_REWARD

ENV = "discovery"


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="module")
def factory(shop: ShopEnv) -> TaskFactory:
    return TaskFactory(shop, seed=0)


@pytest.fixture(scope="module")
def rows(factory: TaskFactory) -> list:
    return [factory.make(ENV, d, 0).row for d in range(13)]


def _facts(catalog: Path, ids: list[str]) -> dict[str, dict]:
    con = duckdb.connect()
    q = (
        "select product_id, category_id, price, rating, ship_days, brand, attributes, stock_qty "
        f"from read_parquet('{catalog}/products/*.parquet') where product_id in "
        f"({', '.join(repr(i) for i in ids)})"
    )
    out = {}
    for pid, cat, price, rating, ship, brand, attrs, stock in con.execute(q).fetchall():
        out[pid] = {
            "category_id": cat,
            "price": price,
            "rating": rating,
            "ship_days": ship,
            "brand": brand,
            "attributes": json.loads(attrs),
            "stock_qty": stock,
        }
    return out


def _state(goal: dict, recs: list[str], catalog: Path) -> EpisodeState:
    facts = _facts(catalog, recs)
    for pid in goal["out_of_stock"]:
        if pid in facts:
            facts[pid]["stock_qty"] = 0
    state = EpisodeState(recommendations=list(recs))
    state.extra["recommended_facts"] = facts
    return state


def test_oracle_correct_and_degenerates_fail(shop: ShopEnv) -> None:
    report = check_env(ENV, shop, ds=(0, 6, 12), n=2)
    assert all(v <= 0 for v in report.degenerate_mean_reward.values())


def test_every_level_generates(rows: list) -> None:
    assert [r.d for r in rows] == list(range(13))
    for r in rows:
        goal = r.decoded("goal")
        assert len(goal["product_ids"]) == goal["k_rec"] == r.axis("k_rec")
        assert not any(pid in r.messages[1].content for pid in goal["product_ids"])


def test_same_key_same_task(shop: ShopEnv, rows: list) -> None:
    again = TaskFactory(shop.spawn(), seed=0).make(ENV, 5, 0).row
    assert again.task_id == rows[5].task_id


def test_feasible_set_recomputed_with_duckdb(rows: list, indexed_catalog_dir: Path) -> None:
    _check_feasible_with_duckdb(rows[::3], indexed_catalog_dir)


def _check_feasible_with_duckdb(rows: list, indexed_catalog_dir: Path) -> None:
    con = duckdb.connect()
    for r in rows:
        goal = r.decoded("goal")
        c = goal["constraints"]
        where = [f"category_id = '{c['category']}'"]
        if c["price_max"] is not None:
            where.append(f"price <= {c['price_max']}")
        if c["rating_min"] is not None:
            where.append(f"rating >= {c['rating_min']}")
        if c["ship_days_max"] is not None:
            where.append(f"ship_days <= {c['ship_days_max']}")
        if c["brand"] is not None:
            where.append("brand = " + repr(c["brand"]).replace('"', "'"))
        for name, value in c["attrs"].items():
            where.append(f"json_extract_string(attributes, '$.{name}') = '{value}'")
        q = (
            f"select product_id, stock_qty from read_parquet('{indexed_catalog_dir}/products/"
            f"*.parquet') where {' and '.join(where)}"
        )
        found = con.execute(q).fetchall()
        assert len(found) == goal["feasible_size"]
        in_stock = {p for p, s in found if s > 0} - set(goal["out_of_stock"])
        assert goal["feasible_in_stock"] == len(in_stock)
        assert {p for p, *_ in goal["feasible"]} <= in_stock
        if len(in_stock) <= 50:
            assert {p for p, *_ in goal["feasible"]} == in_stock


@pytest.fixture(scope="module")
def switched(shop: ShopEnv) -> list:
    f = TaskFactory(shop, seed=2, overrides={"p_switch": 1.0})
    return [f.make(ENV, d, k).row for d in range(0, 13, 3) for k in range(2)]


def test_p_switch_changes_the_final_intent(
    shop: ShopEnv, switched: list, indexed_catalog_dir: Path
) -> None:
    plain = TaskFactory(shop, seed=2, overrides={"p_switch": 0.0})
    assert all(
        plain.make(ENV, d, 0).row.decoded("user_script")["switch"] is None for d in range(0, 13, 3)
    )
    # Draws whose constraints have no price ceiling and no attribute with an alternative
    # value cannot change; the others do (p_switch = 1).
    changed = [r for r in switched if r.decoded("user_script")["switch"]]
    assert len(changed) >= 3
    for r in changed:
        check_recommend_switch(shop, r)
    # The hidden goal is the final intent, recomputed exactly from the catalog.
    _check_feasible_with_duckdb(changed, indexed_catalog_dir)


def test_breaking_or_removing_lowers_r_task(rows: list, indexed_catalog_dir: Path) -> None:
    for r in rows[::4]:
        goal = r.decoded("goal")
        ideal = goal["product_ids"]
        best, ok, _ = grade(goal, _state(goal, ideal, indexed_catalog_dir))
        assert ok
        assert best == 1.0
        shorter, ok, _ = grade(goal, _state(goal, ideal[:-1], indexed_catalog_dir))
        assert not ok
        assert shorter < best
        cons = Constraints.from_dict(goal["constraints"])
        state = _state(goal, ideal, indexed_catalog_dir)
        fact = state.extra["recommended_facts"][ideal[0]]
        fact["category_id"] = "another_category"
        broken, ok, _ = grade(goal, state)
        assert not ok
        assert broken < shorter
        assert cons.broken(ideal[0], fact) == ["category"]


def test_made_up_constant_id_scores_at_most_zero(rows: list) -> None:
    goal = rows[3].decoded("goal")
    state = EpisodeState(recommendations=["B0FAKE0001"])
    r_task, ok, _ = grade(goal, state)  # no recorded facts: unknown product
    assert not ok
    assert r_task <= 0


def test_axes_have_effect(shop: ShopEnv) -> None:
    def mean_constraints(m: int) -> float:
        f = TaskFactory(shop, seed=1, overrides={"m": m})
        goals = [f.make(ENV, 4, k).row.decoded("goal")["constraints"] for k in range(6)]
        return sum(
            sum(g[x] is not None for x in ("price_max", "rating_min", "ship_days_max", "brand"))
            + len(g["attrs"])
            for g in goals
        ) / len(goals)

    assert mean_constraints(5) > mean_constraints(2)
    none = TaskFactory(shop, seed=1, overrides={"p_oos": 0.0})
    half = TaskFactory(shop, seed=1, overrides={"p_oos": 0.5})
    oos = [len(half.make(ENV, 4, k).row.decoded("goal")["out_of_stock"]) for k in range(4)]
    assert sum(oos) > 0
    assert all(not none.make(ENV, 4, k).row.decoded("goal")["out_of_stock"] for k in range(4))
    missing = TaskFactory(shop, seed=1, overrides={"p_missing": 0.8})
    kept = TaskFactory(shop, seed=1, overrides={"p_missing": 0.0})

    def omitted(f: TaskFactory) -> int:
        return sum(
            s["omitted"]
            for k in range(4)
            for s in f.make(ENV, 4, k).row.decoded("user_script")["slots"]
        )

    assert omitted(missing) > omitted(kept) == 0


def test_bad_input_rejected(shop: ShopEnv) -> None:
    with pytest.raises(ConfigError):
        TaskFactory(shop, seed=0).make("discovry", 1, 0)


@given(st.lists(st.floats(0.05, 1.0), min_size=1, max_size=10))
def test_ndcg_bounded_and_ideal_is_one(gains: list[float]) -> None:
    ideal = sorted(gains, reverse=True)
    assert ndcg(ideal, ideal) == pytest.approx(1.0)
    assert 0.0 < ndcg(gains, ideal) <= 1.0 + 1e-12


def _categories(catalog: Path, cats: set[str]) -> dict[str, list[tuple[dict, list[str], str]]]:
    """Each category's products as (attributes, card key_attrs, title), read with DuckDB."""
    con = duckdb.connect()
    q = (
        "select category_id, attributes, key_attrs, title "
        f"from read_parquet('{catalog}/products/*.parquet') where category_id in "
        f"({', '.join(repr(c) for c in sorted(cats))})"
    )
    out: dict[str, list] = {}
    for cat, attrs, keys, title in con.execute(q).fetchall():
        out.setdefault(cat, []).append((json.loads(attrs), list(keys), title))
    return out


def check_constraints_on_cards(rows: list, catalog: Path) -> None:
    """Every attribute constraint is decidable from a card: the value is listed iff it holds.

    A substitution's audience (``goal["audience"]``, boys' or girls') that is no key attribute
    is read from the card's title instead, as a whole word ("Men's" is not in "Women's").
    """
    goals = [r.decoded("goal") for r in rows]
    products = _categories(catalog, {g["constraints"]["category"] for g in goals})
    checked = 0
    for goal in goals:
        for name, value in goal["constraints"]["attrs"].items():
            titled = name in goal.get("audience", {})
            word = re.compile(r"(?<![\w'])" + re.escape(value) + r"(?![\w'])")
            for attrs, keys, title in products[goal["constraints"]["category"]]:
                shown = value in keys or (titled and bool(word.search(title)))
                assert shown == (attrs.get(name) == value), (name, value, keys, title)
                checked += 1
    assert checked


def test_constraints_are_visible_on_cards(
    rows: list, factory: TaskFactory, indexed_catalog_dir: Path
) -> None:
    more = [factory.make(ENV, d, 1).row for d in range(6, 13)]  # attribute constraints at last
    check_constraints_on_cards(rows + more, indexed_catalog_dir)


FACTOR_WORDS = {
    "price": "a low price",
    "rating": "a high rating",
    "ship_speed": "fast delivery",
    "brand_loyalty": ("my favourite brands", "the brand"),
}


def check_preference_answer(shop: ShopEnv, rows: list) -> None:
    """Asked what matters, the customer names all four factors, in weight order."""
    for row in rows:
        weights = row.decoded("goal")["preference"]["weights"]
        shop.reset(row)
        ask = [("ask_user", {"question": "What matters to you, and how much?"})]
        obs, *_ = shop.step(assistant_message(1, ask))
        reply = json.loads(obs["messages"][0]["content"])["reply"]
        at = {}
        for key, words in FACTOR_WORDS.items():
            found = [reply.find(w) for w in ((words,) if isinstance(words, str) else words)]
            at[key] = max(found)
            assert at[key] >= 0, (key, reply)
        order = sorted(at, key=at.get)
        assert [weights[k] for k in order] == sorted(weights.values(), reverse=True), reply
        assert len(set(weights.values()) - {4.0, 2.0, 1.0, 0.0}) == 0


def test_preference_answer_names_four_factors_in_order(shop: ShopEnv) -> None:
    factory = TaskFactory(shop, seed=3)
    check_preference_answer(shop, [factory.make(ENV, 0, k).row for k in range(6)])


def test_the_kind_of_product_the_customer_names_is_one_category(factory: TaskFactory) -> None:
    """Men's and women's jeans are both "Jeans" on a card: "jeans" alone named either one.

    The verifier counts the other one as the wrong category, so an honest agent that picked
    Women's Jeans for "I need jeans" was graded wrong (both leaves hold ~1% of a catalog).
    """
    t = tables(factory.ctx)
    leaves = [c for _, c in factory.ctx.store_taxonomy.leaves()]
    said: dict[str, list[str]] = {}
    for leaf in leaves:
        said.setdefault(t.said_name(leaf.id), []).append(leaf.id)
    assert all(len(ids) == 1 for ids in said.values()), [i for i in said.values() if len(i) > 1]
    assert t.said_name("womens_jeans") == "jeans from women's clothing"
    shared = {leaf.name.lower() for leaf in leaves if t.said_name(leaf.id) != leaf.name.lower()}
    assert shared == {"jeans"}  # a unique leaf name is said as it is


# --- ranking: decidable from the statement, and biting --------------------------------------


def _statement(row) -> str:
    """The customer's ``priority`` fact: what they answer when asked what matters."""
    slots = row.decoded("user_script")["slots"]
    return next(s["value"] for s in slots if s["name"].endswith("priority"))


def check_statement_gives_utilities(rows: list, catalog: Path) -> None:
    """From the statement and the cards' facts alone, every stored utility, exactly.

    The anchors said are the preference's own (whole dollars around the feasible products'
    prices, their ratings and delivery days), so an agent that reads them computes what the
    verifier grades (before discovery 1.4 the price and delivery range were unsaid and could
    only be estimated from cards).
    """
    checked = 0
    for row in rows:
        goal = row.decoded("goal")
        pref = Preference.from_dict(goal["preference"])
        said = _statement(row)
        assert said == pref.statement()
        for key in ("price", "rating", "ship_speed"):
            assert (pref.anchors(key) in said) == (pref.weights[key] > 0), (key, said)
        assert pref.price_lo.is_integer()
        assert pref.price_hi.is_integer()
        facts = _facts(catalog, [pid for pid, *_ in goal["feasible"]])
        prices = [f["price"] for f in facts.values()]
        assert pref.price_lo <= min(prices)
        assert max(prices) <= pref.price_hi
        for pid, u, *_ in goal["feasible"]:
            # One unit in the last stored digit at most: summed in another order, a value on a
            # half unit may round to the neighbouring digit (as in tests/gen/test_constraints).
            last_digit = 10.0**-UTILITY_DIGITS * (1 + 1e-6)
            assert stated_utility(said, facts[pid]) == pytest.approx(u, abs=last_digit), (pid, said)
            checked += 1
    assert checked


def test_statement_gives_every_stored_utility(rows: list, indexed_catalog_dir: Path) -> None:
    check_statement_gives_utilities(rows, indexed_catalog_dir)


def check_ranking_bites(shop: ShopEnv, rows: list) -> dict[str, int]:
    """Feasible in-stock lists that ignore the preference fail.

    ``worst_first`` and ``search_order`` get every hard constraint right (they read the
    goal's feasible list) and search as the oracle does. Returns how many tasks each got
    correct.
    """
    return {
        label: sum(run_policy(shop, row, policy).is_correct for row in rows)
        for label, policy in (("worst_first", worst_first), ("search_order", search_order))
    }


#: Ranking-blind lists correct on at most this share of tasks. Measured on the fixture (20
#: tasks per env): worst first 0 of 20 in both envs, search order 1 of 20 (discovery) and 0
#: (substitution). Before discovery 1.7 (feasible sets of exactly k, nDCG >= 0.85) search
#: order passed 9 and 5 of 20; before the gain floor (1.4) 17 of 20.
BLIND_SHARE = {"worst_first": 0.05, "search_order": 0.2}


@pytest.fixture(scope="module")
def spread(factory: TaskFactory) -> list:
    return [factory.make(ENV, d, i).row for d in (0, 3, 6, 9, 12) for i in range(4)]


def test_ranking_blind_lists_are_not_correct(shop: ShopEnv, spread: list) -> None:
    got = check_ranking_bites(shop, spread)
    for label, share in BLIND_SHARE.items():
        assert got[label] <= share * len(spread), got


#: Orders by one factor alone, as an agent that never asks what matters might rank.
FIXED_ORDERS = {
    "cheapest": lambda fact: fact["price"],
    "best_rated": lambda fact: -fact["rating"],
    "fastest": lambda fact: fact["ship_days"],
}
#: A fixed single-factor order is correct on at most this share of tasks (given every
#: feasible in-stock product). On the fixture (36 tasks at d = 4/8/12 per env): 8-15 of 36
#: since customers say their factors by rank (5-13 of 36 from discovery 1.7 / substitution
#: 1.6 until then), 19-30 of 36 before (the cheapest first 27 in both envs). On 5k products,
#: 150 tasks at each of d = 4/8/12: 19-35% (13-28% before the rank words; 46-88% before 1.7).
FIXED_SHARE = 0.45


#: Price, rating and delivery weighed alike is correct on at most this share of tasks (given
#: every feasible in-stock product): the guess of an agent that never asks the preference.
#: On the fixture (36 tasks at d = 4/8/12 per env) 9 (discovery) and 12 (substitution) of 36
#: since customers say their factors by rank (discovery 1.7, substitution 1.6: "Also"), 18
#: and 22 of 36 before. On 5k products, 150 tasks at each of d = 4/8/12: 19-36%, 56-69% before.
EVEN_SHARE = 0.4


def even_score(fact: dict, facts: dict[str, dict]) -> float:
    """Price, rating and delivery each normalised over ``facts`` (best 1, worst 0), summed."""
    total = 0.0
    for key, sign in (("price", -1.0), ("rating", 1.0), ("ship_days", -1.0)):
        values = [sign * f[key] for f in facts.values()]
        lo, hi = min(values), max(values)
        total += (sign * fact[key] - lo) / (hi - lo) if hi > lo else 0.0
    return total


def check_fixed_orders_fail(factory: TaskFactory, rows: list) -> dict[str, int]:
    """How many tasks each fixed order (the even weighing, the stated preference) ranks correctly.

    Every list holds k of the task's feasible in-stock products, exactly computed from the
    catalog, so only which k and their order decide; graded by the verifier on their facts.
    """
    got = dict.fromkeys([*FIXED_ORDERS, "even", "stated"], 0)
    for row in rows:
        goal = row.decoded("goal")
        cons = Constraints.from_dict(goal["constraints"])
        pref = Preference.from_dict(goal["preference"])
        cols = tables(factory.ctx).columns(cons.category)
        facts = {}
        for i in np.flatnonzero(cons.mask(cols) & cols.in_stock).tolist():
            product = cols.row(i)
            if product["product_id"] in goal["out_of_stock"]:
                continue
            facts[product["product_id"]] = {
                **{key: product[key] for key in ("category_id", "price", "rating", "brand")},
                "title": product["title"],
                "ship_days": product["ship_days"],
                "stock_qty": product["stock_qty"],
                "attributes": {n[2:]: v for n, v in product.items() if n.startswith("a.")},
            }
        orders = {
            name: sorted(facts, key=lambda p, key=key: (key(facts[p]), p))
            for name, key in FIXED_ORDERS.items()
        }
        orders["even"] = sorted(facts, key=lambda p: (-even_score(facts[p], facts), p))
        orders["stated"] = sorted(facts, key=lambda p: (-pref.utility(facts[p]), p))
        for name, ids in orders.items():
            picked = ids[: goal["k_rec"]]
            state = EpisodeState(recommendations=picked)
            state.extra["recommended_facts"] = {p: facts[p] for p in picked}
            got[name] += grade(goal, state)[1]
    return got


@pytest.fixture(scope="module")
def ranked_rows(factory: TaskFactory) -> list:
    return [factory.make(ENV, d, i).row for d in (4, 8, 12) for i in range(12)]


@pytest.fixture(scope="module")
def fixed_counts(factory: TaskFactory, ranked_rows: list) -> dict[str, int]:
    return check_fixed_orders_fail(factory, ranked_rows)


def test_an_order_by_one_factor_is_rarely_correct(
    fixed_counts: dict[str, int], ranked_rows: list
) -> None:
    assert fixed_counts["stated"] == len(ranked_rows), fixed_counts
    for name in FIXED_ORDERS:
        assert fixed_counts[name] <= FIXED_SHARE * len(ranked_rows), (name, fixed_counts)


def test_weighing_price_rating_and_delivery_alike_is_rarely_correct(
    fixed_counts: dict[str, int], ranked_rows: list
) -> None:
    assert fixed_counts["even"] <= EVEN_SHARE * len(ranked_rows), fixed_counts


def test_the_ranking_picks_k_of_at_least_pool_min(ranked_rows: list) -> None:
    """Every task leaves pool_min(k) feasible products in stock: which k counts, not only order."""
    for row in ranked_rows:
        goal = row.decoded("goal")
        assert goal["feasible_in_stock"] >= pool_min(goal["k_rec"]) == 2 * goal["k_rec"]


def test_the_anchors_span_the_feasible_products(ranked_rows: list, indexed_catalog_dir) -> None:
    """Each anchored factor runs from its worst to its best value among the feasible products."""
    for row in ranked_rows:
        goal = row.decoded("goal")
        pref = Preference.from_dict(goal["preference"])
        facts = _facts(indexed_catalog_dir, [p for p, *_ in goal["feasible"]])
        facts.update(_facts(indexed_catalog_dir, goal["out_of_stock"]))
        prices = [f["price"] for f in facts.values()]
        ratings = [f["rating"] for f in facts.values()]
        days = [f["ship_days"] for f in facts.values()]
        assert pref.price_lo <= min(prices) <= max(prices) <= pref.price_hi
        assert pref.rating_lo <= min(ratings) <= max(ratings) <= pref.rating_hi
        assert pref.ship_lo <= min(days) <= max(days) <= pref.ship_hi
        if goal["feasible_in_stock"] + len(goal["out_of_stock"]) <= 50:  # every product seen
            assert min(prices) < pref.price_lo + 1
            assert pref.price_hi - 1 < max(prices)
            assert (pref.rating_lo, pref.rating_hi) == (min(ratings), max(ratings))
            assert (pref.ship_lo, pref.ship_hi) == (min(days), max(days))


def test_oracle_correct_at_every_d(shop: ShopEnv, rows: list) -> None:
    oracle_correct_at_every_d(shop, rows)


def oracle_correct_at_every_d(shop: ShopEnv, rows: list) -> None:
    """The oracle's replay is correct at the maximum reward (substitution shares it)."""
    for row in rows:
        _, oracle = scored_with_final(shop, row, "Here are my picks.")
        assert oracle.is_correct, row.d
        assert oracle.reward == pytest.approx(MAX_REWARD), row.d


def oracle_asks_for_the_preference(shop: ShopEnv, rows: list) -> None:
    """The oracle's first turn asks what matters, and the reply states the whole preference.

    The ranking is graded by the stated preference, which the customer says only when
    asked: an oracle that ranked by it unasked would set ``min_turns`` below what an honest
    agent needs.
    """
    for row in rows:
        first = json.loads(row.oracle)[0]
        asks = [c for c in first["tool_calls"] if c["function"]["name"] == "ask_user"]
        assert asks, row.d
        assert "priorities" in json.loads(asks[0]["function"]["arguments"])["question"]
        statement = Preference.from_dict(row.decoded("goal")["preference"]).statement()
        live = shop.spawn(score=False)
        live.reset(row)
        observation, *_ = live.step(first)
        replies = [decode_result(m).get("reply", "") for m in observation["messages"]]
        assert any(statement in reply for reply in replies), row.d


def test_the_oracle_asks_for_the_preference(shop: ShopEnv, rows: list) -> None:
    oracle_asks_for_the_preference(shop, rows)


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_the_threshold_is_lower_only_where_one_search_is_allowed(factory: TaskFactory, env):
    """0.85 at d ≤ 1, where T_max = 4 turns of one call leave one search after asking."""
    for d in (0, 1, 2, 5):
        axes = theta(d)
        one_search = axes.B_tool * (axes.T_max - 3) <= 1
        assert one_search == (d <= 1)
        goal = factory.make(env, d, 0).row.decoded("goal")
        assert goal["ndcg_threshold"] == (0.85 if one_search else 0.95)
