"""journey: a step's verb is no fact of the request, and no answer to what is asked.

The journey slot saying a step's verb ("sort out a return for") was named
``steps.<i>.action``, the name a returns step's return-or-exchange fact takes in the journey
script: 91 of 220 journeys (d = 2–12, 5k products) held two slots of that name, and every verb
slot took that fact's question words ("exchange", "replacement", "refund"). "Would you like a
return or an exchange?" got "the step is find a replacement for, the step is return and the
return or exchange is return." The verb slots are ``steps.<i>.verb`` now.

A step is also named by its verb's noun (a return, a replacement): asked without naming the
item, that question named only a policy step about "what sending a return back costs", and
the customer, asked about that step alone, did not know (20 of 89 returns steps).
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from shopgen.gen.slots import ACTIONS
from shopgen.taskgen import TaskFactory


@pytest.fixture(scope="module")
def quiet_rows(shop_env):
    """Journeys at d = 2–12 without typo noise, so replies can be read word for word."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    return [factory.make("journey", d, k).row for d in range(2, 13) for k in range(6)]


def _reply(shop_env, row, question: str) -> str:
    episode = shop_env.spawn()
    episode.reset(row)
    call = {"name": "ask_user", "arguments": json.dumps({"question": question})}
    observation, *_ = episode.step(
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": call}]}
    )
    return json.loads(observation["messages"][0]["content"])["reply"]


def test_no_two_script_slots_share_a_name(quiet_rows):
    for row in quiet_rows:
        names = Counter(s["name"] for s in row.decoded("user_script")["slots"])
        assert [n for n, count in names.items() if count > 1] == [], row.task_id


def test_return_or_exchange_is_answered_with_the_returns_fact_alone(shop_env, quiet_rows):
    asked = 0
    for row in quiet_rows:
        values = {s["name"]: s["value"] for s in row.decoded("user_script")["slots"]}
        for i, step in enumerate(row.decoded("goal")["steps"]):
            if step["env"] != "returns":
                continue
            item = values[f"steps.{i}.goal"]
            for question in (
                f"Would you like a return or an exchange for {item}?",
                "Would you like a return or an exchange?",
            ):
                reply = _reply(shop_env, row, question)
                # The fact's label ("the return or exchange is …") names both: the value, one.
                said = set(re.findall(r"[a-z]+", reply.lower().replace("return or exchange", "")))
                other = {"return": "exchange", "exchange": "return"}[step["goal"]["action"]]
                assert step["goal"]["action"] in said, (question, reply)
                assert other not in said, (question, reply)
                assert not [verb for verb in ACTIONS.values() if verb in reply], reply
                asked += 1
    assert asked >= 5
