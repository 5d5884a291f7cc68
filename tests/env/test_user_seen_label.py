"""Replies say each slot as "the <label> is <value>": every label must read as a noun phrase there.

The visit-history time's label, "when I looked at it", matches the questions that ask for it
but was said "the when I looked at it is two days ago": it is said as the item it picks out.
"""

import re

import pytest

from shopgen.env.user import SEEN_LABEL, SimulatedUser, compile_script, saying_when_seen
from shopgen.gen.slots import VOCAB, Slot
from shopgen.schemas.task import ScriptSlot, UserScript

#: A label opening with one of these is a clause, not a noun phrase ("the when I … is …").
_CLAUSE_FIRST = {"when", "where", "why", "how", "which", "what", "whether", "if", "that"}
#: Vocabulary patterns whose replies are reworded (and so may keep a clause label for matching).
_REWORDED = {"items.#.seen"}


def _slot(name, value, kind="text", label="item", omitted=False):
    return ScriptSlot(name=name, value=value, kind=kind, label=label, omitted=omitted)


def _reply(slots, question, style="polite"):
    text = UserScript(style=style, slots=slots).model_dump_json()
    return SimulatedUser(compile_script(text), "cart", 0, "t").reply(question, 1)["reply"]


def test_every_label_said_as_it_is_reads_as_a_noun_phrase():
    clauses = {
        spec.pattern
        for specs in VOCAB.values()
        for spec in specs
        if spec.label and spec.label.split()[0].lower() in _CLAUSE_FIRST
    }
    assert clauses == _REWORDED


@pytest.mark.parametrize("style", ["polite", "chatty", "impatient", "terse", "mobile"])
def test_a_time_seen_is_said_as_the_item_it_picks_out(style):
    slots = [
        _slot("items.0.desc", "body wash"),
        _slot("items.0.seen", "two days ago", "when", "when I looked at it", omitted=True),
    ]
    reply = _reply(slots, "When did you look at it?", style)
    assert "the body wash I looked at two days ago" in reply
    assert not re.search(r"\bthe when\b", reply, re.IGNORECASE)


def test_each_time_of_several_items_names_its_own_once():
    slots = [
        _slot("items.0.desc", "camera lens"),
        _slot("items.0.seen", "two days ago", "when", "when I looked at it"),
        _slot("items.1.desc", "ice chest"),
        _slot("items.1.seen", "three days ago", "when", "when I looked at it"),
    ]
    reply = _reply(slots, "When did you look at them?")
    assert "the camera lens I looked at two days ago" in reply
    assert "the ice chest I looked at three days ago" in reply
    assert "for the" not in reply  # the naming functions' " for the …" is not repeated


def test_a_time_of_an_item_not_described_says_the_one():
    seen = Slot(name="items.0.seen", value="yesterday", kind="when", label="when I looked at it")
    (out,) = saying_when_seen((seen,), {"items.0.seen": "yesterday"})
    assert (out.label, out.value, out.kind) == (SEEN_LABEL, "the one I looked at yesterday", "attr")


def test_other_slots_are_said_as_they_are():
    qty = Slot(name="items.0.qty", value=2, kind="quantity", label="quantity")
    assert saying_when_seen((qty,), {"items.0.qty": 2, "items.0.desc": "socks"}) == (qty,)
