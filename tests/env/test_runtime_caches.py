"""Caches added for speed keep behaviour identical (issue #6 §5), and world lookups are exact."""

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv, TaskError
from shopgen.env.verifier import Score, get_verifier, set_verifier


def test_reset_of_the_same_row_object_is_cached_but_sees_replaced_values(store, env):
    row = make_row(store)
    first = env.reset(row)
    assert env.reset(row) == first
    row["catalog_id"] = "someone-else"
    with pytest.raises(TaskError, match="catalog"):
        env.reset(row)


def test_cached_reset_gives_a_fresh_transcript(store, env, picks):
    row = make_row(store)
    env.reset(row)
    env.step(call("catalog_get_product", product_id=picks["plain"]))
    obs = env.reset(row)
    assert len(env.transcript) == 2
    obs["messages"][0]["content"] = "mutated by the caller"
    assert env.reset(row)["messages"][0]["content"] != "mutated by the caller"


def test_verifier_registered_after_a_miss_is_used(store, env):
    row = {**make_row(store), "env": "zz_unverified"}  # an env no verifier module exists for
    assert get_verifier("zz_unverified") is None  # a cached miss

    def verify(task, state, transcript):
        return Score(reward=0.5, r_task=0.5, r_eff=1.0, r_hall=0.0, is_correct=False)

    set_verifier("zz_unverified", verify)
    try:
        env.reset(row)
        _, done, reward, _ = env.step({"role": "assistant", "content": "bye"})
        assert done
        assert reward == 0.5
    finally:
        set_verifier("zz_unverified", None)
    assert get_verifier("zz_unverified") is None


def test_score_false_plays_without_the_verifier(store):
    set_verifier("zz_unverified", lambda *a: 1 / 0)
    try:
        env = ShopEnv(store, score=False)
        env.reset({**make_row(store), "env": "zz_unverified"})
        _, done, reward, info = env.step({"role": "assistant", "content": "bye"})
    finally:
        set_verifier("zz_unverified", None)
    assert done
    assert reward is None
    assert info["state"]["final_text"] == "bye"


def test_shown_ids_are_collected_from_nested_results(store, env, picks):
    env.reset(make_row(store))
    obs, *_ = env.step(call("catalog_get_variants", product_id=picks["multi"]))
    shown = {v["variant_id"] for v in result(obs)["variants"]}
    assert shown <= env.state.shown_variant_ids
    assert picks["multi"] in env.state.shown_ids


def test_product_records_are_cached_and_equal_to_the_table(store, picks):
    a = store.product(picks["plain"])
    assert store.product(picks["plain"]) is a
    raw = store.products.filter(pl.col("product_id") == picks["plain"]).to_dicts()[0]
    assert a["title"] == raw["title"]
    assert store.variants_of(picks["multi"]) == store.variants_of(picks["multi"])
    assert store.product("NOPE") is None


@settings(max_examples=25)
@given(st.data())
def test_world_lookups_match_a_full_scan(store, data):
    users = store.read("users", columns=["user_id"])["user_id"].to_list()
    uid = data.draw(st.sampled_from(users))
    orders = store.read("orders")
    mine = orders.filter(pl.col("user_id") == uid)
    assert sorted(o["order_id"] for o in store.orders_of(uid)) == sorted(mine["order_id"])
    if mine.height:
        oid = data.draw(st.sampled_from(mine["order_id"].to_list()))
        assert store.order(oid)["user_id"] == uid
        lines = store.read("order_lines").filter(pl.col("order_id") == oid)
        assert [ln["line_no"] for ln in store.lines_of(oid)] == sorted(lines["line_no"])
    visits = store.read("visits").filter(pl.col("user_id") == uid)
    assert len(store.visits_of(uid)) == visits.height
    assert store.user(uid)["user_id"] == uid


def test_world_lookups_of_unknown_ids_are_empty(store):
    assert store.orders_of("UNOPE") == []
    assert store.order("000-0000000-0000000") is None
    assert store.lines_of("x" * 40) == []
    assert store.user("") is None
