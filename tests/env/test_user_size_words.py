"""A variant axis a shopper calls a size (capacity, length, storage…) is asked for as "size"."""

import pytest

from shopgen.env.user import SimulatedUser, compile_script, match_slots
from shopgen.gen.slots import slot_label
from shopgen.schemas.task import ScriptSlot, UserScript


def _item(i: int, desc: str, **axes: str) -> list[ScriptSlot]:
    out = [
        ScriptSlot(name=f"items.{i}.desc", value=desc, kind="text", label="item"),
        ScriptSlot(name=f"items.{i}.qty", value=1, kind="quantity", label="quantity", omitted=True),
    ]
    out += [
        ScriptSlot(
            name=f"items.{i}.variant.{axis}",
            value=value,
            kind="variant",
            label=slot_label(axis),
            omitted=True,
        )
        for axis, value in axes.items()
    ]
    return out


def _asked(slots: list[ScriptSlot], question: str) -> set[str]:
    compiled = compile_script(UserScript(style="terse", slots=slots).model_dump_json())
    return {s.name for s in match_slots(compiled, question)}


AXES = [
    ("capacity", "insulated tumbler", "20 oz"),
    ("cable_length", "charging cable", "6 ft"),
    ("wiper_length", "wiper blade", "18-Inch"),
    ("storage", "tablet", "256 GB"),
    ("dumbbell_weight", "dumbbell", "10 lb"),
    ("inseam", "jeans", "L30"),
    ("womens_inseam", "leggings", "Tall"),
    ("pack_count", "batteries", "4-Pack"),
]


@pytest.mark.parametrize(("axis", "desc", "value"), AXES)
@pytest.mark.parametrize("question", ["What size do you want?", "Which size would you like?"])
def test_a_size_like_axis_is_asked_for_as_a_size(axis, desc, value, question):
    """Each of these got "I'm not sure": only the axis's own name ("capacity") asked it."""
    assert _asked(_item(0, desc, **{axis: value}), question) == {f"items.0.variant.{axis}"}


@pytest.mark.parametrize(
    ("axis", "question"),
    [
        ("capacity", "How big should it be?"),
        ("capacity", "How much should it hold?"),
        ("storage", "How much storage do you need?"),
        ("cable_length", "How long should the cable be?"),
        ("cable_length", "What length?"),
        ("inseam", "What length do you wear?"),
        ("dumbbell_weight", "How heavy?"),
    ],
)
def test_the_axis_is_asked_in_its_own_everyday_words(axis, question):
    desc, value = next((d, v) for a, d, v in AXES if a == axis)
    assert _asked(_item(0, desc, **{axis: value}), question) == {f"items.0.variant.{axis}"}


def test_beside_a_shirt_both_sizes_are_said_each_naming_its_item():
    """Before, "What size?" of a shirt and a tumbler said the shirt's M alone."""
    slots = _item(0, "flannel shirt", apparel_size="M") + _item(1, "tumbler", capacity="20 oz")
    text = UserScript(style="terse", slots=slots).model_dump_json()
    reply = SimulatedUser(compile_script(text), "cart", 0, "t").reply("What size?", 1)["reply"]
    assert "M for the flannel shirt" in reply
    assert "20 oz for the tumbler" in reply


def test_an_exchange_for_another_capacity_is_asked_as_a_size():
    slots = [
        ScriptSlot(name="item", value="insulated tumbler", kind="text", label="item"),
        ScriptSlot(
            name="exchange.capacity", value="30 oz", kind="variant", label="capacity", omitted=True
        ),
    ]
    assert _asked(slots, "What size do you want?") == {"exchange.capacity"}


@pytest.mark.parametrize(
    "question", ["How long will delivery take?", "What colour?", "How many do you need?"]
)
def test_other_questions_do_not_ask_the_size(question):
    slots = _item(0, "charging cable", cable_length="6 ft") + _item(1, "tumbler", capacity="20 oz")
    assert not {n for n in _asked(slots, question) if ".variant." in n}
