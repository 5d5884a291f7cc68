"""Items a change of mind adds are in the customer's list once said, and not before."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.env.user import SimulatedUser, compile_script
from shopgen.schemas.task import ScriptSlot, ScriptSwitch, UserScript


def _slot(name, value, kind="text", label="item", omitted=False):
    return ScriptSlot(name=name, value=value, kind=kind, label=label, omitted=omitted)


CART = UserScript(
    style="terse",
    slots=[
        _slot("items.0.desc", "wool socks"),
        _slot("items.0.qty", 2, "quantity", "quantity", omitted=True),
        _slot("items.1.desc", "desk lamp"),
        _slot("items.1.qty", 1, "quantity", "quantity", omitted=True),
        # The generator states the added item's quantity in the script from the start.
        _slot("items.2.qty", 3, "quantity", "quantity"),
    ],
    switch=ScriptSwitch(kind="add_item", turn=2, changes=[("items.2.desc", "fire truck toy")]),
)

BUNDLE = UserScript(
    style="terse",
    slots=[
        _slot("project", "garden starter", label="project"),
        _slot("must.0", "seeds", label="must-have"),
        _slot("must.1", "water hose", label="must-have"),
    ],
    switch=ScriptSwitch(kind="add_item", turn=1, changes=[("must.2", "plant pot")]),
)


def _user(script: UserScript, env: str) -> SimulatedUser:
    return SimulatedUser(compile_script(script.model_dump_json()), env, 0, "t")


@pytest.mark.parametrize(
    "question",
    [
        "What items do you need?",
        "Can you list everything again?",
        "What do you need?",
        "Which items should I add to the cart?",
    ],
)
def test_an_added_cart_item_is_listed_once_said(question):
    """Before, the list left out the item just added: the agent was told a stale cart."""
    user = _user(CART, "cart")
    before = user.reply(question, 1)["reply"]
    assert "fire truck" not in before
    assert "wool socks" in before
    said = user.reply("Is that right?", 2)["reply"]  # the switch is said at its turn
    assert "fire truck toy as well" in said
    after = user.reply(question, 3)["reply"]
    assert all(item in after for item in ("wool socks", "desk lamp", "fire truck toy"))
    assert "items.2.desc" in user.questions[-1]["answered"]


def test_an_added_items_quantity_is_said_only_after_the_item():
    """ "How many of each?" got "… and the quantity is 3" before the toy was mentioned."""
    user = _user(CART, "cart")
    user.reply("How many of each do you need?", 1)
    assert user.questions[-1]["answered"] == ["items.0.qty", "items.1.qty"]
    user.reply("Anything else?", 2)
    after = user.reply("How many of each do you need?", 3)["reply"]
    assert "3 for the fire truck toy" in after
    assert user.reply("How many fire truck toys?", 4)["reply"].count("3") == 1


def test_an_added_must_have_is_listed_once_said():
    user = _user(BUNDLE, "bundle")
    first = user.reply("Which items do you need for the project?", 1)["reply"]
    assert "plant pot as well" in first  # the switch, said at turn 1
    assert "plant pot" in first.split("well", 1)[1]  # and in the answer after it
    again = user.reply("Can you list everything again?", 2)["reply"]
    assert all(m in again for m in ("seeds", "water hose", "plant pot"))


def test_replies_before_and_after_the_switch_are_remembered_apart():
    compiled = compile_script(CART.model_dump_json())
    q = "What items do you need?"
    assert [s.name for s in compiled.answerable(q).slots] == ["items.0.desc", "items.1.desc"]
    assert [s.name for s in compiled.answerable(q, True).slots] == [
        "items.0.desc",
        "items.1.desc",
        "items.2.desc",
    ]
    assert compiled.answerable(q) is compiled.answerable(q)
    added = compiled.matchers[-1].slot
    assert (added.kind, added.label) == ("text", "item")  # typed as its shape's slots


def test_a_script_without_added_slots_has_one_set_of_matchers():
    compiled = compile_script(UserScript(style="terse", slots=CART.slots[:4]).model_dump_json())
    assert compiled.heard(False) is compiled.heard(True) is compiled.matchers


def test_an_added_slot_of_a_new_shape_is_typed_by_its_name():
    """A change of mind naming a variant the script has none of is asked for as a variant."""
    script = UserScript(
        style="terse",
        slots=[_slot("items.0.desc", "wool socks")],
        switch=ScriptSwitch(
            kind="change_variant", turn=1, changes=[("items.0.variant.color", "Navy")]
        ),
    )
    compiled = compile_script(script.model_dump_json())
    added = compiled.matchers[-1].slot
    assert (added.kind, added.label) == ("variant", "color")
    user = _user(script, "cart")
    assert "Navy" in user.reply("Which colour?", 1)["reply"]  # said with the switch
    assert user.questions[-1]["answered"] == ["items.0.variant.color"]


@given(
    questions=st.lists(
        st.sampled_from(
            [
                "What items do you need?",
                "How many of each?",
                "How many fire truck toys?",
                "Can you list everything again?",
                "Is that all?",
                "Which items for the fire truck?",
                "What do you need?",
            ]
        )
        | st.text(max_size=40),
        max_size=6,
    )
)
def test_before_the_switch_nothing_of_the_added_item_is_said(questions):
    user = _user(CART, "cart")
    for q in questions:
        if not q.strip():
            continue
        user.reply(q, 1)  # turn 1 < the switch's turn 2
        assert not any(n.startswith("items.2.") for n in user.questions[-1]["answered"])
    assert not user.switch_said
