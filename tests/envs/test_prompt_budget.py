"""The default system prompt states the turn and call budget the task is played with.

At d = 0–1 the oracles of discovery, substitution, cart, returns and bundle use every turn
(12 of 12 tasks at each d, 5k products; returns 22 of 24), and an agent doing each step its
prompt listed (viewing the cart, checking eligibility before a return) ran out of turns before
it finished: the budget was unsaid.
"""

from __future__ import annotations

import json

import pytest

from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.replay import play


@pytest.mark.parametrize("env", ENV_NAMES)
def test_the_prompt_states_the_turns_and_calls_the_runtime_allows(factory, env):
    for d in (0, 7):
        row = factory.make(env, d, 0).row
        system = row.messages[0].content
        turns, calls = row.axis("T_max"), row.axis("B_tool")
        assert f"You have {turns} turns" in system
        assert f"A turn makes {'one tool call' if calls == 1 else f'{calls} tool calls'}" in system


def test_a_prompt_of_ones_own_is_kept_as_written(shop_env):
    own = "You are a helpful shopping assistant."
    row = TaskFactory(shop_env, seed=0, prompt=own).make("cart", 0, 0).row
    assert row.messages[0].content == own


def test_returns_at_d0_starts_without_the_eligibility_check_it_no_longer_requires(
    shop_env, factory
):
    """The prompt made return_check_eligibility a step; with it a d = 0 task whose item is
    eligible needed a turn more than it has. The prompt says return_start decides."""
    started = 0
    for k in range(8):
        row = factory.make("returns", 0, k).row
        assert "return_start refuses a line that is not eligible" in row.messages[0].content
        if not row.decoded("goal")["eligible"]:
            continue
        oracle = json.loads(row.oracle)
        assert len(oracle) == row.axis("T_max")
        names = {c["function"]["name"] for m in oracle for c in m.get("tool_calls") or []}
        assert "return_check_eligibility" not in names
        assert play(shop_env, row, oracle)[0].is_correct
        started += 1
    assert started >= 3
