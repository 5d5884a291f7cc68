"""The oracles' questions read as a person writes them, and each part asks its one fact.

Oracle transcripts are supervised warm-start data as well as proofs: "could you tell me your
preferred how many options and priorities?" and "Could you tell me the reason, return or
exchange, return method, order I mean?" taught a model to write label lists.
"""

from __future__ import annotations

import json
import re

import pytest

from shopgen.env.user import compile_script
from shopgen.gen.tasks import policy, recsearch, returns

PHRASES = {
    "discovery": recsearch.ASK_PHRASES,
    "substitution": recsearch.ASK_PHRASES,
    "returns": returns.ASK_PHRASES,
    "policy": policy.ASK_PHRASES,
}


@pytest.fixture(scope="module")
def rows(factory):
    return {
        env: [factory.make(env, d, k).row for d in range(13) for k in range(4)] for env in PHRASES
    }


def _questions(row) -> list[str]:
    return [
        json.loads(c["function"]["arguments"])["question"]
        for m in json.loads(row.oracle)
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] == "ask_user"
    ]


@pytest.mark.parametrize("env", sorted(PHRASES))
def test_each_phrase_asks_the_customer_its_one_fact(rows, env):
    heard: set[str] = set()
    for row in rows[env]:
        compiled = compile_script(row.user_script)
        names = {s.name for s in compiled.script.slots}
        for name, phrase in PHRASES[env].items():
            if name in names:
                asked = {s.name for s in compiled.slots_asked(f"Could you tell me {phrase}?")}
                assert asked == {name}, (row.task_id, phrase, asked)
                heard.add(name)
    assert heard, env


@pytest.mark.parametrize("env", sorted(PHRASES))
def test_a_question_of_several_parts_lists_them_with_and(rows, env):
    several = 0
    for row in rows[env]:
        for question in _questions(row):
            body = re.sub(
                r"^(?:About [^:]+: )?(?:Before I search, c|C)ould you tell me ", "", question
            )
            if "," in body:
                several += 1
                assert " and " in body.rsplit(",", 1)[1], question
            assert "preferred how" not in body, question
    assert several, env
