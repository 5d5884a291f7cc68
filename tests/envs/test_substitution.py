"""substitution: compatibility recomputed with DuckDB, axes, oracle, degenerate policies."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from shopgen.env.episode import ShopEnv
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.testing import check_env, check_recommend_switch

ENV = "substitution"


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="module")
def rows(shop: ShopEnv) -> list:
    f = TaskFactory(shop, seed=0)
    return [f.make(ENV, d, 0).row for d in range(0, 13, 2)]


def test_oracle_correct_and_degenerates_fail(shop: ShopEnv) -> None:
    report = check_env(ENV, shop, ds=(0, 6, 12), n=2)
    assert all(v <= 0 for v in report.degenerate_mean_reward.values())


def test_original_out_of_stock_in_history_and_excluded(rows: list) -> None:
    for r in rows:
        goal, episode = r.decoded("goal"), r.decoded("episode")
        original = goal["original_id"]
        assert original in episode["out_of_stock"]
        assert original in {v["product_id"] for v in episode["visit_history"]}
        assert original not in {p for p, *_ in goal["feasible"]}
        assert len(goal["product_ids"]) == goal["k_rec"] == r.axis("k_rec")


def test_compatibility_recomputed_with_duckdb(rows: list, indexed_catalog_dir: Path) -> None:
    con = duckdb.connect()
    table = f"read_parquet('{indexed_catalog_dir}/products/*.parquet')"
    tax = {c.id: c for _, c in load_taxonomy(None).leaves()}
    for r in rows:
        goal = r.decoded("goal")
        (cat, price, attrs_json) = con.execute(
            f"select category_id, price, attributes from {table} where product_id = ?",
            [goal["original_id"]],
        ).fetchone()
        assert goal["constraints"]["category"] == cat
        assert goal["constraints"]["price_max"] >= price
        for name in tax[cat].compat:
            value = con.execute("select json_extract_string(?, ?)", [attrs_json, f"$.{name}"])
            assert goal["compat"].get(name) == value.fetchone()[0]
        ids = [p for p, *_ in goal["feasible"]]
        got = con.execute(
            f"select product_id, attributes, price from {table} where product_id in "
            f"({', '.join('?' * len(ids))})",
            ids,
        ).fetchall()
        for _, attrs, p in got:
            assert p <= goal["constraints"]["price_max"]
            for name, value in goal["compat"].items():
                assert (
                    con.execute(
                        "select json_extract_string(?, ?)", [attrs, f"$.{name}"]
                    ).fetchone()[0]
                    == value
                )


def test_same_key_same_task(shop: ShopEnv, rows: list) -> None:
    again = TaskFactory(shop.spawn(), seed=0).make(ENV, 4, 0).row
    assert again.task_id == rows[2].task_id


def test_k_rec_and_p_oos_have_effect(shop: ShopEnv) -> None:
    small = TaskFactory(shop, seed=2, overrides={"k_rec": 3}).make(ENV, 3, 0).row
    big = TaskFactory(shop, seed=2, overrides={"k_rec": 5}).make(ENV, 3, 0).row
    assert len(small.decoded("goal")["product_ids"]) == 3
    assert len(big.decoded("goal")["product_ids"]) == 5
    half = TaskFactory(shop, seed=2, overrides={"p_oos": 0.5})
    extra = [len(half.make(ENV, 3, k).row.decoded("episode")["out_of_stock"]) for k in range(4)]
    assert max(extra) > 1  # the original plus marked substitutes


def test_p_switch_changes_the_final_intent(shop: ShopEnv, indexed_catalog_dir: Path) -> None:
    plain = TaskFactory(shop, seed=2, overrides={"p_switch": 0.0})
    assert all(
        plain.make(ENV, d, 0).row.decoded("user_script")["switch"] is None for d in range(0, 13, 4)
    )
    f = TaskFactory(shop, seed=2, overrides={"p_switch": 1.0})
    rows = [f.make(ENV, d, k).row for d in range(0, 13, 4) for k in range(2)]
    changed = [r for r in rows if r.decoded("user_script")["switch"]]
    assert len(changed) >= len(rows) // 2
    con = duckdb.connect()
    for r in changed:
        name, value, goal = check_recommend_switch(shop, r)
        # Every stored feasible substitute meets the final value (checked on the catalog).
        ids = ", ".join(repr(p) for p, *_ in goal["feasible"])
        q = (
            f"select price, attributes from read_parquet('{indexed_catalog_dir}/products/"
            f"*.parquet') where product_id in ({ids})"
        )
        for price, attrs in con.execute(q).fetchall():
            if name == "price_max":
                assert price <= value
            else:
                assert json.loads(attrs)[name[6:]] == value


def test_constraints_are_visible_on_cards(rows: list, indexed_catalog_dir: Path) -> None:
    from test_discovery import check_constraints_on_cards

    check_constraints_on_cards(rows, indexed_catalog_dir)


def test_preference_answer_names_four_factors_in_order(shop: ShopEnv) -> None:
    from test_discovery import check_preference_answer

    factory = TaskFactory(shop, seed=3)
    check_preference_answer(shop, [factory.make(ENV, 0, k).row for k in range(6)])


@pytest.fixture(scope="module")
def spread(shop: ShopEnv) -> list:
    f = TaskFactory(shop, seed=0)
    return [f.make(ENV, d, i).row for d in (0, 3, 6, 9, 12) for i in range(4)]


def test_statement_gives_every_stored_utility(rows: list, indexed_catalog_dir: Path) -> None:
    from test_discovery import check_statement_gives_utilities

    check_statement_gives_utilities(rows, indexed_catalog_dir)


def test_ranking_blind_lists_are_not_correct(shop: ShopEnv, spread: list) -> None:
    from test_discovery import BLIND_SHARE, check_ranking_bites

    got = check_ranking_bites(shop, spread)
    for label, share in BLIND_SHARE.items():
        assert got[label] <= share * len(spread), got


def test_oracle_correct_at_every_d(shop: ShopEnv, rows: list) -> None:
    from test_discovery import oracle_correct_at_every_d

    oracle_correct_at_every_d(shop, rows)


def test_the_oracle_asks_for_the_preference(shop: ShopEnv, rows: list) -> None:
    from test_discovery import oracle_asks_for_the_preference

    oracle_asks_for_the_preference(shop, rows)


def test_asked_what_must_match_the_customer_names_the_compat_values(shop):
    """The system prompt asks for "the features that must match"; nothing answered which."""
    factory = TaskFactory(shop, seed=0)
    rows = [factory.make(ENV, d, k).row for d in (2, 4, 8) for k in range(12)]
    rows = [r for r in rows if r.decoded("goal")["compat"]]
    assert rows, "no task of the fixture has a compatibility attribute"
    question = "Which features must the substitute share with the original?"
    for row in rows:
        shop.reset(row)
        obs, *_ = shop.step(assistant_message(1, [("ask_user", {"question": question})]))
        reply = json.loads(obs["messages"][-1]["content"])["reply"]
        for value in row.decoded("goal")["compat"].values():
            assert value in reply


def test_an_order_by_one_factor_or_all_alike_is_rarely_correct(shop: ShopEnv) -> None:
    """Cheapest, best-rated, fastest first, or the three weighed alike: each rarely correct."""
    from test_discovery import EVEN_SHARE, FIXED_ORDERS, FIXED_SHARE, check_fixed_orders_fail

    factory = TaskFactory(shop, seed=0)
    rows = [factory.make(ENV, d, i).row for d in (4, 8, 12) for i in range(12)]
    got = check_fixed_orders_fail(factory, rows)
    assert got["stated"] == len(rows), got
    for name in FIXED_ORDERS:
        assert got[name] <= FIXED_SHARE * len(rows), (name, got)
    assert got["even"] <= EVEN_SHARE * len(rows), got
