"""A final answer is grounded only by the turns before it, never by calls in its own message.

An episode ends at ``T_max`` even when that message calls tools: the calls run, and the
message's text is the final answer. Had the text-graded verifiers (status's lookup, policy's
search and questions, a refusal's eligibility check) counted those calls, an answer guessed
before any result came back would have been graded as looked up (found by red-teaming: a
policy guess "$0.00" with the questions asked in the answer's own message was correct).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.replay import play

#: Tasks graded as text per environment (refusals are a few of the returns drawn).
ENOUGH = 6


def _variants(row: TaskRow) -> tuple[TaskRow, list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The row with room for every oracle call in one turn, and two ways to play it.

    The grounded play makes all of the oracle's calls in its first turn and answers in its
    second; the late play makes the same calls in the message that answers, which ends the
    episode (``T_max`` = 1). None for a row whose answer is not graded as text.
    """
    oracle = json.loads(row.oracle)
    calls = [c for m in oracle[:-1] for c in m.get("tool_calls", [])]
    if not calls:
        return None
    answer = oracle[-1]["content"]
    roomy = row.model_copy(update={"theta": {**row.theta, "B_tool": len(calls)}})
    grounded = [{"role": "assistant", "content": "", "tool_calls": calls}, oracle[-1]]
    late = roomy.model_copy(update={"theta": {**roomy.theta, "T_max": 1}})
    return roomy, grounded, [late, {"role": "assistant", "content": answer, "tool_calls": calls}]


@pytest.mark.parametrize(
    ("env_name", "levels"),
    [
        ("status", (0, 3, 6)),
        ("policy", (0, 3, 6)),
        ("returns", (0, 3, 6)),
        # At d = 0 a journey is a status and a policy request; its later steps' own rules
        # (an answer heard before the cart line it sets) keep one turn of calls from them.
        ("journey", (0,)),
    ],
)
def test_calls_in_the_answers_own_message_do_not_ground_it(
    shop_env: ShopEnv, factory: TaskFactory, env_name: str, levels: tuple[int, ...]
) -> None:
    tried = 0
    for d, k in ((d, k) for k in range(30) for d in levels):
        row = factory.make(env_name, d, k).row
        if env_name == "returns" and row.decoded("goal")["eligible"]:
            continue  # a started return is an action, graded wherever it is made
        made = _variants(row)
        if made is None:
            continue
        roomy, grounded, (late_row, late) = made
        score, _ = play(shop_env, roomy, grounded)
        assert score.is_correct, (row.task_id, score.to_dict())  # the calls do ground it
        score, _ = play(shop_env, late_row, [late])
        assert not score.is_correct, (row.task_id, score.to_dict())
        assert score.r_task <= 0.0
        tried += 1
        if tried == ENOUGH:
            break
    assert tried == ENOUGH
