"""The system prompt says the number of products is the customer's and to ask for it.

The verifier grades exactly ``k_rec`` recommendations, and the customer leaves the number out
of the first message on most tasks (substitution's customer even asks for "a substitute" or
"a replacement"); the substitution prompt never mentioned a number, so an honest agent
recommended one product, or as many as it found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.taskgen import TaskFactory, assistant_message


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.mark.parametrize("env_name", ["discovery", "substitution"])
def test_the_prompt_asks_for_the_number_the_customer_left_out(shop, env_name) -> None:
    factory = TaskFactory(shop, seed=0)
    rows = [factory.make(env_name, d, k).row for d in (2, 6, 10) for k in range(4)]
    omitted = [
        r
        for r in rows
        if any(s["name"] == "k_rec" and s["omitted"] for s in r.decoded("user_script")["slots"])
    ]
    assert omitted, "no task of the fixture leaves the number out"
    for row in omitted:
        system = row.messages[0].content
        assert "as many as the customer asks for" in system
        assert "ask how many when they have not said" in system
        shop.reset(row)
        question = "How many options would you like?"
        obs, *_ = shop.step(assistant_message(1, [("ask_user", {"question": question})]))
        reply = json.loads(obs["messages"][-1]["content"])["reply"]
        assert str(row.decoded("goal")["k_rec"]) in reply
