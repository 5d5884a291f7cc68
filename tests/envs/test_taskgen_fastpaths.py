"""The task factory's shortcuts give exactly the plain computations' texts, ids and sets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.episode import ShopEnv
from shopgen.gen.difficulty import theta
from shopgen.taskgen import TaskFactory, _encode_id, _hidden_ids, _id_json, task_id

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    fields=st.dictionaries(st.text(), _VALUES, max_size=8),
    chosen=st.lists(st.integers(0, 7), max_size=8),
)
def test_id_json_with_known_values_is_the_plain_encoding(
    fields: dict[str, Any], chosen: list[int]
) -> None:
    keys = sorted(fields)
    known = {keys[i]: _encode_id(fields[keys[i]]) for i in chosen if i < len(keys)}
    assert _id_json(fields, known) == _encode_id(fields)
    assert _encode_id(fields) == json.dumps(
        fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def _plain_hidden_ids(goal: Any) -> set[str]:
    """The ids a customer never says, as a set merged per value visited (the plain walk)."""
    found: set[str] = set()
    if isinstance(goal, dict):
        for key, value in goal.items():
            if key in ("product_id", "variant_id", "product_ids") and value:
                found |= set(value) if isinstance(value, list) else {str(value)}
            else:
                found |= _plain_hidden_ids(value)
    elif isinstance(goal, list):
        for item in goal:
            found |= _plain_hidden_ids(item)
    return found


#: Ids as goals hold them (one id, a list of ids, or empty), under the keys that hold ids.
_IDS = st.dictionaries(
    st.sampled_from(["product_id", "variant_id", "product_ids"]),
    st.none() | st.integers() | st.text(max_size=3) | st.lists(st.text(max_size=3), max_size=3),
    max_size=2,
)
_GOALS = st.recursive(
    _SCALARS | st.tuples(st.text(), st.integers()),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.builds(
            lambda d, ids: {**d, **ids}, st.dictionaries(st.text(), inner, max_size=4), _IDS
        )
    ),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(_GOALS)
def test_hidden_ids_are_the_plain_walks(goal: Any) -> None:
    assert _hidden_ids(goal) == _plain_hidden_ids(goal)


def _plain_row_texts(row: Any) -> dict[str, Any]:
    """The id and JSON fields of ``row`` as the plain json.dumps calls write them."""
    goal = json.loads(row.goal)
    oracle = json.loads(row.oracle)
    content = row.model_dump()
    for key in ("task_id", "oracle", "shopgen_version"):
        content.pop(key)
    content["goal"] = json.dumps(
        {k: v for k, v in goal.items() if k != "min_turns"}, sort_keys=True, default=str
    )
    return {
        "task_id": task_id(content),
        "goal": json.dumps(goal, sort_keys=True, default=str),
        "oracle": json.dumps(oracle, separators=(",", ":")),
        "episode": json.dumps(json.loads(row.episode), sort_keys=True, default=str),
        "user_script": json.dumps(json.loads(row.user_script), sort_keys=True, default=str),
        "arguments": [
            json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True)
            for m in oracle
            for c in m.get("tool_calls", ())
        ],
    }


@pytest.mark.parametrize("env_name", ["status", "policy", "returns", "bundle"])
def test_rows_keep_the_plain_ids_and_texts(factory: TaskFactory, env_name: str) -> None:
    for k in range(3):
        for d in (2, 5):
            row = factory.make(env_name, d, k).row
            plain = _plain_row_texts(row)
            oracle = json.loads(row.oracle)
            assert row.task_id == plain["task_id"]
            assert row.goal == plain["goal"]
            assert row.oracle == plain["oracle"]
            assert row.episode == plain["episode"]
            assert row.user_script == plain["user_script"]
            assert plain["arguments"] == [
                c["function"]["arguments"] for m in oracle for c in m.get("tool_calls", ())
            ]


def test_each_difficulty_keeps_its_own_axes(shop_env: ShopEnv) -> None:
    factory = TaskFactory(shop_env, seed=3, overrides={"p_noise": 0.0})
    for d in (1, 6, 1):
        row = factory.make("status", d, 0).row
        assert row.theta == theta(d, p_noise=0.0).to_dict()
        assert row.task_id == _plain_row_texts(row)["task_id"]
