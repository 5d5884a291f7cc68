"""The runtime's shortcuts agree with the plain computations they stand in for."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.episode import _prepare, _switch_is_null
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

    class _Store:
        catalog_id = "c"

    prepared = _prepare(row, _Store())  # type: ignore[arg-type]
    assert prepared.messages == [m.model_dump() for m in row.messages]
