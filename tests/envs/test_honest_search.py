"""Oracles search only with words the customer or a tool gave them (issue #7).

Proven solvable means solvable with what an agent is told. Discovery's and substitution's
oracles used to search the brands of the best products they had not seen — brands no card
had shown and the customer never said — and the cart oracle retried a failed search with the
product's hidden title. ``shopgen.testing.check_env`` checks every environment on a few tasks;
these tests look harder where searches are many.
"""

import json

import pytest

from shopgen.taskgen import TaskFactory
from shopgen.testing import unseen_search_words


@pytest.mark.parametrize("env", ["discovery", "substitution", "cart", "bundle", "journey"])
def test_every_search_word_was_told_or_shown(env, shop_env):
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    offending = [
        (d, k, found)
        for d in (8, 12)
        for k in range(6)
        if (found := unseen_search_words(shop_env, factory.make(env, d, k).row))
    ]
    assert offending == []


def test_a_word_nobody_said_is_caught(shop_env):
    """The check itself bites: an oracle search with a word the episode never showed."""
    row = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0}).make("discovery", 3, 0).row
    oracle = json.loads(row.oracle)
    first_call = next(m for m in oracle if m.get("tool_calls"))
    search = next(c for c in first_call["tool_calls"] if c["function"]["name"] == "catalog_search")
    said = json.loads(search["function"]["arguments"])["query"]
    assert unseen_search_words(shop_env, row) == []
    search["function"]["arguments"] = json.dumps({"query": f"zyxwvut {said}"})
    tampered = row.model_copy(update={"oracle": json.dumps(oracle)})
    assert unseen_search_words(shop_env, tampered)[0] == (f"zyxwvut {said}", ["zyxwvut"])
