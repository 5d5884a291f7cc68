"""Tool results remembered across episodes record and show what a cold call does.

recommend_products remembers a list per (ids, stock rules), user_get_visit_history its result
per episode. The references are the plain computations: a list read product by product from
the catalog's records under the episode's stock rules (in an env whose memo is empty), and the
visits built and encoded from the row's episode.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import call, make_row, reference_facts

from shopgen.env.episode import ShopEnv


def _facts_of(shop: ShopEnv, pid: str) -> dict:
    """A recommended product's facts from its record, its stock under the episode's rules."""
    product = shop.store.product(pid)
    return reference_facts(product, shop._ctx.stock(product))


def _played(shop: ShopEnv, row: dict, pids: list[str]) -> tuple:
    shop.reset(row)
    obs, _, _, info = shop.step(call("recommend_products", product_ids=pids))
    extra = shop.state.extra
    return (
        obs["messages"][0]["content"],
        info["errors"],
        shop.state.recommendations,
        json.dumps(extra.get("recommended_facts")),
        json.dumps(extra.get("recommendation_lists")),
        sorted(shop.state.shown_ids),
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_remembered_lists_record_what_a_cold_call_does(store, picks, data):
    unknown = "B000NOSUCH0"
    pool = [picks["plain"], picks["plain2"], picks["multi"], picks["variant"], unknown]
    ids = st.lists(st.sampled_from(pool), min_size=0, max_size=4)
    rows = [
        make_row(store, env="discovery"),
        make_row(store, env="discovery", episode={"stock_overrides": {picks["plain"]: 0}}),
        make_row(store, env="discovery", episode={"out_of_stock": [picks["multi"]]}),
    ]
    warm = ShopEnv(store)  # one memo over every list and rule below
    for _ in range(data.draw(st.integers(1, 6))):
        row, pids = data.draw(st.sampled_from(rows)), data.draw(ids)
        for _ in range(2):  # a list, then its replay (a memo hit)
            got = _played(warm, row, pids)
            assert got == _played(ShopEnv(store), row, pids)
            facts = warm.state.extra.get("recommended_facts")
            if facts is not None:
                assert facts == {pid: _facts_of(warm, pid) for pid in pids}


def test_each_episode_gets_its_own_facts_dict(store, picks):
    """The remembered list's facts are copied per episode: changing one changes no other."""
    shop = ShopEnv(store)
    row = make_row(store, env="discovery")
    pids = [picks["plain"], picks["multi"]]
    shop.reset(row)
    shop.step(call("recommend_products", product_ids=pids))
    first = shop.state.extra["recommended_facts"]
    first.clear()
    shop.reset(row)
    shop.step(call("recommend_products", product_ids=pids))
    again = shop.state.extra["recommended_facts"]
    assert again is not first
    assert list(again) == pids
    assert shop.state.extra["recommendation_lists"][0]["facts"] is again


def test_remembered_visit_history_equals_the_plain_result(store, picks):
    """user_get_visit_history remembers its result per episode object: equal to the plain one."""
    from shopgen.env.tools.registry import encode_json

    visits = [
        {"product_id": picks["plain"], "title": "A", "viewed_at": "2024-01-02"},
        {"product_id": picks["multi"]},
    ]
    rows = [make_row(store, episode={"visit_history": v}) for v in (visits, visits[1:], [])]
    shop = ShopEnv(store)
    for row in rows + rows:  # each episode, then its replay (a hit)
        shop.reset(row)
        obs, _, _, _ = shop.step(call("user_get_visit_history"))
        history = json.loads(row["episode"])["visit_history"]
        plain = {
            "now": f"{store.manifest.config['today']}T12:00",
            "visits": [
                {
                    "product_id": v["product_id"],
                    "title": v.get("title", ""),
                    "viewed_at": v.get("viewed_at", ""),
                }
                for v in history
            ],
        }
        assert obs["messages"][0]["content"] == encode_json(plain)
        assert shop.state.shown_ids == {v["product_id"] for v in history}
