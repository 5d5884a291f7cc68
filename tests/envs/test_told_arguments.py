"""Oracles pass only ids and search words the customer or a tool gave them (issue #7).

Proven solvable means solvable with what an agent is told. Discovery's and substitution's
oracles used to search the brands of the best products they had not seen (brands no card had
shown and the customer never said), the cart oracle retried a failed search with the
product's hidden title, and the returns oracle named the order line's variant id, which
orders_list does not show. ``shopgen.testing.check_env`` checks every environment on a few
tasks; these tests look harder.
"""

import json

import pytest

from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory
from shopgen.testing import untold_arguments


@pytest.mark.parametrize("env", ENV_NAMES)
def test_every_argument_was_told_or_shown(env, shop_env):
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    offending = [
        (d, k, found)
        for d in (3, 8, 12)
        for k in range(5)
        if (found := untold_arguments(shop_env, factory.make(env, d, k).row))
    ]
    assert offending == []


def _tampered(row, tool, edit):
    """``row`` whose oracle's first call of ``tool`` has its arguments changed by ``edit``."""
    oracle = json.loads(row.oracle)
    calls = [c for m in oracle for c in m.get("tool_calls") or []]
    first = next(c for c in calls if c["function"]["name"] == tool)
    arguments = json.loads(first["function"]["arguments"])
    edit(arguments)
    first["function"]["arguments"] = json.dumps(arguments)
    return row.model_copy(update={"oracle": json.dumps(oracle)})


def test_a_search_word_nobody_said_is_caught(shop_env):
    row = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0}).make("discovery", 3, 0).row
    assert untold_arguments(shop_env, row) == []
    tampered = _tampered(row, "catalog_search", lambda a: a.update(query=f"zyxwvut {a['query']}"))
    assert untold_arguments(shop_env, tampered)[0] == ("catalog_search", "query", ["zyxwvut"])


def test_an_id_no_tool_showed_is_caught(shop_env):
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    row = next(
        g.row for k in range(20) if (g := factory.make("returns", 3, k)).draft.goal["eligible"]
    )
    assert untold_arguments(shop_env, row) == []
    hidden = "V0NEVERSHOWN"
    act = "return_start" if '"return_start"' in row.oracle else "exchange_start"
    tampered = _tampered(row, act, lambda a: a.update(variant_id=hidden))
    assert (act, "variant_id", hidden) in untold_arguments(shop_env, tampered)
