"""The journey oracle's early stop: its per-step turn bounds never exceed what oracles play."""

import json

import pytest

from shopgen.gen.tasks.journey import _turns_after, _turns_at_least


def _tool_turns(row) -> list[list[tuple[str, dict]]]:
    """The oracle's tool turns, as (name, arguments) calls, from a proven row."""
    return [
        [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m["tool_calls"]]
        for m in json.loads(row.oracle)
        if m.get("tool_calls")
    ]


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_turns_after_is_a_lower_bound_of_the_oracles_play(factory, env):
    checked = 0
    for d in (0, 3, 5, 8, 12):
        for k in range(4):
            turns = _tool_turns(factory.make(env, d, k).row)
            searched = False
            for j, turn in enumerate(turns):
                searched = searched or any(name == "catalog_search" for name, _ in turn)
                assert len(turns) - j - 1 >= _turns_after(env, turn, searched), (d, k, j)
                checked += 1
    assert checked > 40


def test_turns_after_claims_nothing_for_other_environments():
    turn = [("catalog_search", {"query": "lamp"})]
    assert _turns_after("cart", turn, False) == 0
    assert _turns_after("bundle", turn, True) == 0


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
