"""Order, return, exchange and policy tools: success and failure paths (issue #6)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import call, make_row, result
from world_helpers import check, find_world_picks

from shopgen.env.episode import ShopEnv
from shopgen.env.tools.policy import PolicyIndex


@pytest.fixture(scope="module")
def world(store):
    return find_world_picks(store)


@pytest.fixture
def play(store):
    """Reset a returns episode for ``user_id`` and return a step function."""

    def start(user_id, **episode):
        env = ShopEnv(store)
        env.reset(
            make_row(
                store,
                env="returns",
                d=4,
                episode={"user_id": user_id, **episode},
                T_max=40,
                B_tool=5,
            )
        )
        return env

    return start


def step(env, name, **args):
    obs, _done, _, info = env.step(call(name, **args))
    return result(obs), info


def test_orders_list_shows_only_the_customers_orders(store, world, play):
    uid = world["eligible"][0]
    out, _ = step(play(uid), "orders_list")
    ids = [o["order_id"] for o in out["orders"]]
    assert sorted(ids) == sorted(o["order_id"] for o in store.orders_of(uid))
    assert all(store.order(i)["user_id"] == uid for i in ids)
    placed = [o["placed_on"] for o in out["orders"]]
    assert placed == sorted(placed, reverse=True)


def test_orders_list_respects_the_episode_history(store, world, play):
    uid, oid, _ = world["eligible"]
    out, _ = step(play(uid, order_ids=[oid]), "orders_list")
    assert [o["order_id"] for o in out["orders"]] == [oid]


def test_order_details_status_tracking_and_lines(store, world, play):
    uid, oid, pid = world["eligible"]
    env = play(uid)
    out, _ = step(env, "order_get_details", order_id=oid)
    order = store.order(oid)
    assert out["status"] == order["status"] == "delivered"
    assert out["tracking_number"] == order["tracking_number"]
    assert out["delivered_on"] == order["delivered_at"].date().isoformat()
    assert pid in [ln["product_id"] for ln in out["lines"]]
    assert pid in env.state.shown_ids


def test_another_customers_order_is_not_found_and_leaks_nothing(store, world, play):
    uid, oid, pid = world["eligible"]
    other = next(u for u in world["users"] if u != uid and store.orders_of(u))
    env = play(other)
    for name, args in [
        ("order_get_details", {"order_id": oid}),
        ("return_check_eligibility", {"order_id": oid, "product_id": pid}),
        (
            "return_start",
            {"order_id": oid, "product_id": pid, "reason": "defective", "method": "mail"},
        ),
    ]:
        out, _info = step(env, name, **args)
        assert out["error"] == "not_found"
        assert store.order(oid)["tracking_number"] not in json.dumps(out)
    out, _ = step(env, "orders_list")
    assert oid not in json.dumps(out)
    assert env.state.extra.get("returns") is None


def test_unknown_order_id(world, play):
    out, _ = step(play(world["eligible"][0]), "order_get_details", order_id="000-0000000-0000000")
    assert out["error"] == "not_found"


def test_order_outside_the_episode_history_is_not_found(store, world, play):
    uid, oid, _ = world["eligible"]
    others = [o["order_id"] for o in store.orders_of(uid) if o["order_id"] != oid]
    if not others:
        pytest.skip("customer has one order")
    out, _ = step(play(uid, order_ids=others[:1]), "order_get_details", order_id=oid)
    assert out["error"] == "not_found"


def test_eligible_return_starts_with_policy_fees(store, world, play):
    uid, oid, pid = world["eligible"]
    env = play(uid)
    info = check(env, oid, pid, reason="defective")
    assert info["eligible"] is True
    assert info["days_since_delivery"] <= info["window_days"]
    mail = next(m for m in info["methods"] if m["method"] == "mail")
    out, _ = step(
        env, "return_start", order_id=oid, product_id=pid, reason="defective", method="mail"
    )
    assert out["status"] == "return_started"
    assert out["refund"] == mail["refund"]
    assert env.state.extra["returns"][0]["product_id"] == pid
    # The line now shows the return, and a second return of it is refused.
    details, _ = step(env, "order_get_details", order_id=oid)
    assert (
        next(ln for ln in details["lines"] if ln["product_id"] == pid)["status"] == "return_started"
    )
    again, _ = step(
        env, "return_start", order_id=oid, product_id=pid, reason="defective", method="mail"
    )
    assert again["error"] == "refused"


def test_eligibility_matches_the_policy_engine(store, world, play):
    uid, oid, pid = world["ineligible"]
    env = play(uid)
    info = check(env, oid, pid)
    engine = store.policy_engine
    product = store.product(pid)
    dept, tags = store.category_facts[product["category_id"]]
    window = engine.evaluate(
        "return_window",
        {
            "category": product["category_id"],
            "department": dept,
            "tags": list(tags),
            "tier": store.user(uid)["tier"],
            "item_condition": "unopened",
            "reason": "changed_mind",
        },
    )
    assert info["window_days"] == window.value
    assert info["eligible"] is False
    assert info["days_since_delivery"] > info["window_days"]


def test_out_of_window_return_is_refused_not_crashed(world, play):
    uid, oid, pid = world["ineligible"]
    env = play(uid)
    out, info = step(
        env, "return_start", order_id=oid, product_id=pid, reason="changed_mind", method="drop_off"
    )
    assert out["error"] == "refused"
    assert "outside the window" in out["message"]
    assert info["errors"][0]["kind"] == "refused"
    assert not info["errors"][0]["protocol"]
    assert "returns" not in env.state.extra


def test_undelivered_order_cannot_be_returned(world, play):
    uid, oid, pid = world["undelivered"]
    env = play(uid)
    assert check(env, oid, pid)["eligible"] is False
    out, _ = step(
        env, "return_start", order_id=oid, product_id=pid, reason="defective", method="mail"
    )
    assert out["error"] == "refused"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"reason": "bored", "method": "mail"}, "reason"),
        ({"reason": "defective", "method": "pigeon"}, "method"),
    ],
)
def test_bad_reason_or_method_is_bad_arguments(world, play, args, field):
    uid, oid, pid = world["eligible"]
    out, info = step(play(uid), "return_start", order_id=oid, product_id=pid, **args)
    assert out["error"] == "bad_arguments"
    assert field in out["message"]
    assert not info["errors"][0]["protocol"]  # recoverable: only DESIGN §9's kinds void


def test_product_not_in_order(store, world, play, picks):
    uid, oid, _ = world["eligible"]
    out = check(play(uid), oid, picks["plain"])
    assert out["error"] == "not_found"


def test_exchange_paths(store, world, play):
    uid, oid, pid = world["eligible"]
    env = play(uid)
    line = next(ln for ln in store.lines_of(oid) if ln["product_id"] == pid)
    others = [v for v in store.variants_of(pid) if v["variant_id"] != line["variant_id"]]
    foreign = next(v for v in store.variants.head(50).to_dicts() if v["product_id"] != pid)
    out, _ = step(
        env,
        "exchange_start",
        order_id=oid,
        product_id=pid,
        new_variant_id=foreign["variant_id"],
        reason="defective",
    )
    assert out["error"] == "refused"
    assert "belongs to product" in out["message"]
    out, _ = step(
        env,
        "exchange_start",
        order_id=oid,
        product_id=pid,
        new_variant_id="VNOPE",
        reason="defective",
    )
    assert out["error"] == "not_found"
    if not others:
        pytest.skip("product has a single variant")
    target = max(others, key=lambda v: v["stock_qty"])
    out, _ = step(
        env,
        "exchange_start",
        order_id=oid,
        product_id=pid,
        new_variant_id=target["variant_id"],
        reason="defective",
    )
    if target["stock_qty"] >= line["quantity"]:
        assert out["status"] == "exchange_started"
        assert env.state.extra["exchanges"][0]["new_variant_id"] == target["variant_id"]
    else:
        assert out["error"] == "refused"


def test_exchange_refused_when_new_variant_out_of_stock(store, world, play):
    uid, oid, pid = world["eligible"]
    line = next(ln for ln in store.lines_of(oid) if ln["product_id"] == pid)
    others = [v for v in store.variants_of(pid) if v["variant_id"] != line["variant_id"]]
    if not others:
        pytest.skip("product has a single variant")
    env = play(uid, out_of_stock=[others[0]["variant_id"]])
    out, _ = step(
        env,
        "exchange_start",
        order_id=oid,
        product_id=pid,
        new_variant_id=others[0]["variant_id"],
        reason="defective",
    )
    assert out["error"] == "refused"
    assert "in stock" in out["message"]


def test_order_tools_need_a_customer(store):
    env = ShopEnv(store)
    env.reset(make_row(store, env="status", episode={}))
    out, _ = step(env, "orders_list")
    assert out["error"] == "unavailable"


def test_policy_search_finds_the_engines_numbers(store):
    env = ShopEnv(store)
    env.reset(make_row(store, env="policy"))
    out, _ = step(env, "policy_search", query="how long is the return window")
    assert out["results"][0]["section"] == "How long is the return window?"
    days = store.policy_engine.value("return_window_default")
    assert f"{days:g} days" in out["results"][0]["text"]
    out, _ = step(env, "policy_search", query="membership cost per year")
    assert out["results"][0]["document"] == "membership"
    assert len(out["results"]) <= 3
    out, _ = step(env, "policy_search", query="   ")
    assert out["error"] == "bad_arguments"


def test_policy_index_ranks_and_is_empty_for_unknown_words(store):
    index = PolicyIndex(store.policy_engine.render_text())
    assert index.search("zzzz qqqq") == []
    hits = index.search("restocking fee opened electronics")
    assert hits[0][1].title == "Is there a restocking fee?"
    assert [s for s, _ in hits] == sorted((s for s, _ in hits), reverse=True)


@settings(max_examples=40)
@given(
    tier=st.sampled_from(["none", "basic", "premium"]),
    condition=st.sampled_from(["unopened", "opened", "damaged"]),
    reason=st.sampled_from(["changed_mind", "defective", "wrong_item", "damaged_in_transit"]),
    method=st.sampled_from(["mail", "drop_off", "pickup"]),
    price=st.floats(0, 2000),
    leaf=st.integers(0, 10_000),
)
def test_memoised_decisions_equal_the_engines(store, tier, condition, reason, method, price, leaf):
    engine = store.policy_engine
    cats = sorted(store.category_facts)
    cat = cats[leaf % len(cats)]
    dept, tags = store.category_facts[cat]
    facts = {
        "category": cat,
        "department": dept,
        "tags": list(tags),
        "tier": tier,
        "item_condition": condition,
        "reason": reason,
        "return_method": method,
        "price": price,
        "order_total": price,
    }
    memo = store.policy_engine.memo
    for topic in (
        "return_window",
        "restocking_fee",
        "return_method_available",
        "return_shipping_fee",
        "free_return_threshold",
        "returnable",
    ):
        ours, theirs = memo.evaluate(topic, facts), engine.evaluate(topic, facts)
        assert bool(ours) == bool(theirs)
        if theirs:
            assert (ours.value, ours.rule_ids) == (theirs.value, theirs.rule_ids)
    for days in (0, 14, 29, 30, 31, 90):
        facts["days_since_delivery"] = days
        ours, theirs = memo.return_eligibility(facts), engine.return_eligibility(facts)
        assert bool(ours) == bool(theirs)
        if theirs:
            assert (ours.value, ours.rule_ids, ours.explanation) == (
                theirs.value,
                theirs.rule_ids,
                theirs.explanation,
            )


def test_remembered_order_listings_follow_each_episodes_history(store, world):
    """orders_list is memoised per catalog: a warm env lists what a fresh one does."""
    uid, oid, _ = world["eligible"]
    warm = ShopEnv(store)
    listings = set()
    for episode in ({"user_id": uid}, {"user_id": uid, "order_ids": [oid]}) * 2:
        row = make_row(store, env="returns", d=4, episode=episode, T_max=40, B_tool=5)
        fresh = ShopEnv(store)
        fresh.reset(row)
        warm.reset(row)
        want = fresh.step(call("orders_list"))[0]["messages"][0]["content"]
        assert warm.step(call("orders_list"))[0]["messages"][0]["content"] == want
        assert warm.state.shown_ids == fresh.state.shown_ids
        listings.add(want)
    assert len(listings) == 2


def test_remembered_order_details_and_assessments_follow_each_episodes_state(store, world):
    """order_get_details and the return tools are memoised on the episode state they read
    (started returns, item condition, today): a warm env shows what a fresh one does, step
    by step, before and after a return changes a line's status."""
    uid, oid, pid = world["eligible"]
    check_args = {"order_id": oid, "product_id": pid}
    calls = [
        call("order_get_details", order_id=oid),
        call("return_check_eligibility", **check_args, reason="defective"),
        call("return_start", **check_args, reason="defective", method="mail"),
        call("order_get_details", order_id=oid),
        call("return_check_eligibility", **check_args, reason="defective"),
        call("return_start", **check_args, reason="changed_mind", method="mail"),
    ]
    episodes = [
        {"user_id": uid},
        {"user_id": uid, "item_condition": {pid: "opened"}},
        {"user_id": uid, "today": "2031-01-01"},
    ]
    warm = ShopEnv(store)
    seen = set()
    for episode in episodes * 2:
        row = make_row(store, env="returns", d=4, episode=episode, T_max=40, B_tool=5)
        fresh = ShopEnv(store)
        fresh.reset(row)
        warm.reset(row)
        for message in calls:
            fresh._shared.memo.clear()  # the reference remembers nothing
            want = fresh.step(message)[0]["messages"][0]["content"]
            assert warm.step(message)[0]["messages"][0]["content"] == want
            seen.add(want)
        assert warm.state.extra == fresh.state.extra
        assert warm.state.shown_ids == fresh.state.shown_ids
    assert len(seen) > len(calls)  # the episodes' states did change what was shown
