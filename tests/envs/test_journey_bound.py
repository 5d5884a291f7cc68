"""The journey oracle's early stop: its per-step turn bounds never exceed what oracles play."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.tasks.journey import _pack, _turns_after, _turns_at_least


def _tool_turns(row) -> list[list[tuple[str, dict]]]:
    """The oracle's tool turns, as (name, arguments) calls, from a proven row."""
    return [
        [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m["tool_calls"]]
        for m in json.loads(row.oracle)
        if m.get("tool_calls")
    ]


@pytest.mark.parametrize("env", ["discovery", "substitution", "cart", "status", "returns"])
def test_turns_after_is_a_lower_bound_of_the_oracles_play(factory, env):
    checked = claimed = 0
    for d in (0, 3, 5, 8, 12):
        for k in range(4):
            row = factory.make(env, d, k).row
            step = {"env": env, "goal": row.decoded("goal")}
            turns = _tool_turns(row)
            issued: list = []
            for j, turn in enumerate(turns):
                issued += turn
                bound = _turns_after(step, turn, issued)
                assert len(turns) - j - 1 >= bound, (d, k, j)
                checked += 1
                claimed += bound > 0
    assert checked > 30
    assert claimed > 5  # the bound says something, not only 0


def test_turns_after_claims_nothing_for_other_environments():
    turn = [("catalog_search", {"query": "lamp"})]
    for env in ("bundle", "policy"):
        assert _turns_after({"env": env, "goal": {}}, turn, turn) == 0


def test_cart_bound_counts_adds_and_variant_listings():
    items = [
        {"product_id": "A", "n_variants": 3},
        {"product_id": "B", "n_variants": 0},
    ]
    step = {"env": "cart", "goal": {"items": items}}
    search = [("catalog_search", {"query": "a"}), ("catalog_search", {"query": "b"})]
    assert _turns_after(step, search, search) == 2  # A's variants, then its add
    listed = [("catalog_get_variants", {"product_id": "A"}), ("cart_add", {"product_id": "B"})]
    assert _turns_after(step, listed, search + listed) == 1  # A's add
    add = [("cart_add", {"product_id": "A"})]
    assert _turns_after(step, add, search + listed + add) == 0


def test_status_bound_counts_the_order_it_opens():
    step = {"env": "status", "goal": {"holder_ids": ["O1", "O2"]}}
    listed = [("orders_list", {})]
    assert _turns_after(step, listed, listed) == 1  # an order is opened after the list
    ask = [("ask_user", {"question": "which one?"})]
    assert _turns_after(step, ask, listed + ask) == 1
    opened = [("order_get_details", {"order_id": "O1"})]
    assert _turns_after(step, opened, listed + ask + opened) == 0
    assert _turns_after(step, opened, opened) == 0  # the order number was said
    none = {"env": "status", "goal": {"holder_ids": []}}
    assert _turns_after(none, listed, listed) == 0  # no holder to open: no claim


def test_returns_bound_counts_the_action_and_an_exchange_listing():
    refund = {"env": "returns", "goal": {"eligible": True, "action": "return"}}
    exchange = {"env": "returns", "goal": {"eligible": True, "action": "exchange"}}
    refused = {"env": "returns", "goal": {"eligible": False, "action": "exchange"}}
    look = [("orders_list", {})]
    assert _turns_after(refund, look, look) == 1  # the action
    assert _turns_after(refused, look, look) == 1  # the eligibility check
    assert _turns_after(exchange, look, look) == 2  # the variants, then the exchange
    listed = [("ask_user", {"question": "?"}), ("catalog_get_variants", {"product_id": "A"})]
    assert _turns_after(exchange, listed, look + listed) == 1
    for action in ("return_check_eligibility", "return_start", "exchange_start"):
        act = [(action, {})]
        assert _turns_after(exchange, act, look + listed + act) == 0


def test_turns_at_least_counts_calls_and_sequences():
    ask = [("ask_user", {"question": "?"})]
    search = [("catalog_search", {"query": "q"})] * 2
    # Without later turns: the calls packed into turns of the budget.
    assert _turns_at_least([ask, search], 3) == 1
    assert _turns_at_least([ask, search], 2) == 2
    # A step with two turns still ahead needs three in all, however few calls are pending.
    assert _turns_at_least([ask, search], 3, [2, 0]) == 3
    # Later turns add calls too: 3 pending + 4 later calls at 3 a turn.
    assert _turns_at_least([ask, search], 3, [2, 2]) == 3
    assert _turns_at_least([search, search], 2, [1, 1]) == 3


def _play_packed(chains: list[list[int]], budget: int) -> tuple[int, list[int]]:
    """Turns the journey oracle's packing takes for steps whose turns have these sizes.

    Each step's ``later`` is exact here (its turns still to come), the best case for
    :func:`_pack`'s order. Returns the turns played and the bound before each of them.
    """
    envs = ["discovery"] * len(chains)
    pos, sent, played, bounds = [0] * len(chains), [0] * len(chains), 0, []
    while True:
        active = [i for i, c in enumerate(chains) if pos[i] < len(c)]
        if not active:
            return played, bounds
        later = {i: len(chains[i]) - pos[i] - 1 for i in active}
        left = {i: chains[i][pos[i]] - sent[i] for i in active}
        turns = [[("x", {})] * left[i] for i in active]
        bounds.append(played + _turns_at_least(turns, budget, [later[i] for i in active]))
        shares = _pack(active, left, later, envs, budget)
        assert 0 < sum(n for _, n in shares) <= max(budget, 1)
        for i, n in shares:
            sent[i] += n
            if sent[i] == chains[i][pos[i]]:
                pos[i], sent[i] = pos[i] + 1, 0
        played += 1


@settings(max_examples=200, deadline=None)
@given(
    chains=st.lists(st.lists(st.integers(1, 5), min_size=1, max_size=5), min_size=1, max_size=5),
    budget=st.integers(1, 5),
)
def test_the_early_stop_bound_never_exceeds_the_packed_play(chains, budget):
    played, bounds = _play_packed(chains, budget)
    assert all(bound <= played for bound in bounds)  # a sound stop: no fitting draw rejected
    assert played <= sum(sum(c) for c in chains)  # every turn plays at least one call


def test_packing_splits_turns_and_starts_long_chains_first():
    # A cart's gather, variants and adds (3, 3, 2 calls), a bundle's question, searches and
    # list (1, 3, 1), a policy question (2), at 3 calls a turn: whole turns first-fit in step
    # order take 7 turns; call by call, longest first, they take 5 (the calls' own minimum is
    # ⌈15 / 3⌉ = 5).
    played, _ = _play_packed([[3, 3, 2], [1, 3, 1], [2]], 3)
    assert played == 5
    # Steps with equally long ways to go keep the environment order, then the step order.
    shares = _pack([0, 1, 2], {0: 2, 1: 2, 2: 2}, {0: 1, 1: 1, 2: 1}, ["policy", "cart", "cart"], 3)
    assert shares == [(1, 2), (2, 1)]
