"""The runtime's shortcuts agree with the plain computations they stand in for."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.episode import TaskError, _prepare, _switch_is_null, _switch_scheduled
from shopgen.env.tools.context import stock_rules
from shopgen.env.user import compile_script
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import TaskRow

_SWITCH = {"kind": "swap_item", "turn": 2, "changes": [["items.0.desc", "a red lamp"]]}
_SLOT = {"name": "order_ref", "value": "A-12", "kind": "order_ref", "label": "order number"}
_SWITCH_VALUES = st.sampled_from([None, _SWITCH, 5, "soon", [], {"kind": "x"}])


def _scheduled_switch(text: str) -> bool:
    """The plain reading: the compiled script has a switch (an invalid script has none)."""
    try:
        return compile_script(text).script.switch is not None
    except ConfigError:
        return False


@st.composite
def _script_texts(draw: st.DrawFn) -> str:
    """User-script texts: valid or not, with or without a switch, duplicate keys, non-JSON."""
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["slots"] = [_SLOT] if draw(st.booleans()) else "not a list"
    if draw(st.booleans()):
        body["style"] = draw(st.sampled_from(["terse", "polite", "loud"]))
    pairs = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in body.items()]
    for _ in range(draw(st.integers(0, 2))):  # json and pydantic both keep the last of a key
        pairs.insert(
            draw(st.integers(0, len(pairs))), f'"switch": {json.dumps(draw(_SWITCH_VALUES))}'
        )
    text = "{" + ", ".join(pairs) + "}"
    shape = draw(st.sampled_from(["object", "list", "broken"]))
    if shape == "list":
        return f"[{text}]"
    if shape == "broken":
        return text[:-1]
    return text


@settings(max_examples=300, deadline=None)
@given(text=_script_texts())
def test_a_null_switch_means_no_scheduled_switch(text: str) -> None:
    if _switch_is_null(text):
        assert not _scheduled_switch(text)
    else:  # the shortcut answers only for readable objects whose switch is null or absent
        obj = None
        with contextlib.suppress(ValueError):
            obj = json.loads(text)
        assert not (isinstance(obj, dict) and obj.get("switch") is None)


@settings(max_examples=300, deadline=None)
@given(text=_script_texts())
def test_a_rows_switch_flag_is_the_compiled_scripts_switch(text: str) -> None:
    """step asks the customer to speak unprompted only when the flag says a switch is due."""
    assert _switch_scheduled(text) == _scheduled_switch(text)


def test_prepared_rows_carry_their_switch_flag() -> None:
    row = _row_with("{}")
    with_switch = json.dumps({"slots": [_SLOT], "switch": _SWITCH}, sort_keys=True)
    assert not _prepare(row, _Store()).switch  # type: ignore[arg-type]
    switching = row.model_copy(update={"user_script": with_switch})
    assert _prepare(switching, _Store()).switch  # type: ignore[arg-type]


def test_generated_scripts_without_a_switch_take_the_shortcut() -> None:
    text = json.dumps({"slots": [_SLOT], "switch": None, "never_say": []}, sort_keys=True)
    assert _switch_is_null(text)
    assert not _scheduled_switch(text)
    with_switch = json.dumps({"slots": [_SLOT], "switch": _SWITCH}, sort_keys=True)
    assert not _switch_is_null(with_switch)
    assert _scheduled_switch(with_switch)


@settings(max_examples=50, deadline=None)
@given(
    contents=st.lists(st.text(), min_size=1, max_size=3),
    roles=st.lists(st.sampled_from(["system", "user", "assistant", "tool"]), min_size=3),
)
def test_prepared_messages_are_the_rows_model_dump(contents: list[str], roles: list[str]) -> None:
    row = TaskRow(
        task_id="t",
        env="status",
        d=0,
        theta={"T_max": 4, "B_tool": 2},
        seed=0,
        messages=[{"role": r, "content": c} for r, c in zip(roles, contents, strict=False)],
        tools="[]",
        goal="{}",
        episode="{}",
        user_script="{}",
        oracle="[]",
        shopgen_version="0",
        catalog_id="c",
        verifier_version="1",
    )

    prepared = _prepare(row, _Store())  # type: ignore[arg-type]
    assert prepared.messages == [m.model_dump() for m in row.messages]


class _Store:
    catalog_id = "c"


def _row_with(episode: str, goal: str = "{}") -> TaskRow:
    return TaskRow(
        task_id="t",
        env="status",
        d=0,
        theta={"T_max": 4, "B_tool": 2},
        seed=0,
        messages=[{"role": "user", "content": "hi"}],
        tools="[]",
        goal=goal,
        episode=episode,
        user_script="{}",
        oracle="[]",
        shopgen_version="0",
        catalog_id="c",
        verifier_version="1",
    )


_EPISODE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None)
@given(
    extra=st.dictionaries(st.text(max_size=6), _EPISODE_VALUES, max_size=4),
    overrides=st.dictionaries(st.text(max_size=6), st.integers(0, 9), max_size=3),
    oos=st.lists(st.text(max_size=6), max_size=3),
)
def test_rows_sharing_an_episode_text_share_its_plain_decoding(
    extra: dict[str, Any], overrides: dict[str, int], oos: list[str]
) -> None:
    episode = {**extra, "stock_overrides": overrides, "out_of_stock": oos}
    text = json.dumps(episode)
    live = _prepare(_row_with(text), _Store())  # type: ignore[arg-type]
    proof = _prepare(_row_with(text, goal='{"min_turns": 2}'), _Store())  # type: ignore[arg-type]
    assert live.episode == json.loads(text)
    assert live.stock == stock_rules(json.loads(text))
    assert proof.episode is live.episode
    assert proof.stock is live.stock


@pytest.mark.parametrize(
    ("episode", "message"),
    [("{", "task t: episode is not JSON"), ("[1]", "task t: episode must be a JSON object")],
)
def test_an_unreadable_episode_is_a_task_error_every_time(episode: str, message: str) -> None:
    for _ in range(2):  # a failure is not remembered as a value
        with pytest.raises(TaskError, match=message):
            _prepare(_row_with(episode), _Store())  # type: ignore[arg-type]
