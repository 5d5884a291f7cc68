"""One notion of a protocol failure: the runtime's ``protocol`` label and the reward agree.

DESIGN §9 voids an episode (reward −1) on a protocol failure: an unreadable call or a tool the
environment does not offer. ``info.errors[*].protocol`` must say exactly that, for every error
kind the runtime records, or a trainer filtering on the label and one reading the reward see
two different episodes.
"""

from __future__ import annotations

import json
from typing import get_args

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.env.state import PROTOCOL_KINDS, EpisodeState, ErrorKind, ErrorRecord
from shopgen.env.tools import REGISTRY
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.reward import protocol_failure

KINDS = get_args(ErrorKind)


def test_protocol_kinds_are_the_design_s_voiding_kinds():
    assert {"parse", "unknown_tool", "not_offered"} == PROTOCOL_KINDS
    assert set(KINDS) >= PROTOCOL_KINDS


@pytest.mark.parametrize("kind", KINDS)
def test_label_and_reward_rule_agree_for_every_kind(kind):
    record = ErrorRecord(turn=1, tool="cart_view", kind=kind, message="m")
    state = EpisodeState(errors=[record])
    assert record.protocol == (protocol_failure(state) is not None)
    assert state.summary()["errors"][0]["protocol"] == record.protocol


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="module")
def task(shop):
    return TaskFactory(shop, seed=0).make("status", 0, 0).row


def _calls(*calls: tuple[str, dict]) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def _bad_turns(task) -> dict[str, dict | str]:
    """One assistant turn per error kind the runtime can be driven into on a status task."""
    offered = {s["function"]["name"]: s["function"] for s in json.loads(task.tools)}
    name, spec = sorted(offered.items())[0]
    required = spec["parameters"].get("required", [])
    not_offered = sorted(set(REGISTRY) - set(offered))[0]
    zero_arg = [n for n, s in sorted(offered.items()) if not s["parameters"].get("required")]
    turns: dict[str, dict | str] = {
        "parse": "<tool_call>{not json}</tool_call>",
        "unknown_tool": _calls(("rm_rf", {})),
        "not_offered": _calls((not_offered, {})),
        "bad_arguments": _calls((name, {**{r: "x" for r in required}, "bogus": 1})),
    }
    if zero_arg:
        turns["over_budget"] = _calls(*[(zero_arg[0], {})] * (task.axis("B_tool") + 1))
    return turns


@pytest.mark.parametrize(
    "kind", ["parse", "unknown_tool", "not_offered", "bad_arguments", "over_budget"]
)
def test_a_played_error_is_labelled_protocol_exactly_when_it_voids_the_reward(shop, task, kind):
    turns = _bad_turns(task)
    if kind not in turns:
        pytest.skip(f"status offers no tool to drive {kind} with")
    env = shop.spawn()
    env.reset(task)
    _, done, _, info = env.step(turns[kind])
    assert not done
    labels = {e["kind"]: e["protocol"] for e in info["errors"]}
    assert kind in labels, info["errors"]
    for message in task.decoded("oracle"):
        _, done, reward, final = env.step(message)
        if done:
            break
    assert done
    voided = reward == -1.0
    assert labels[kind] == voided, (kind, reward, final.get("score"))
    assert final["is_correct"] is not voided
