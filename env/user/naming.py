"""How a reply names what each stated fact is about: the item, the exchange, the step.

"the quantity is 4" is unreadable in a cart of three items; these functions rewrite an
answer's slots so that each says whose it is ("4 for the brush heads"), applied in order by
:meth:`~shopgen.env.user.customer.SimulatedUser.reply` after the slots are chosen.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from shopgen.env.user.matching import _EXCHANGE_FIELD, _ITEM_FIELD, _MUST_HAVE
from shopgen.gen.slots import Slot
from shopgen.schemas.task import ScriptSlot


def naming_the_item(slot: Slot, script: dict[str, ScriptSlot]) -> Slot:
    """A change of mind about one item of a list, as said so that the item is known.

    Said by its label alone, "the item should be X" read the same for an item swapped for X
    and for X added, and "the color should be Blue" fitted any item sold in colours: no
    agent could know which the customer meant. So a new description names the one it
    replaces ("X instead of the desk lamp"), an added item is said as extra ("the extra item
    should be X as well", as is a project's added must-have: "the must-have is now sleeping
    bag" read as a swap for one of the four said), and a variant value names its item ("Blue
    for the desk lamp");
    the value stays first, so a reply that states values only ("make it …") says them too.
    Other slots, and those whose label names the item already (a journey's "size for the
    desk lamp"), are said as they are.
    """
    if _MUST_HAVE.match(slot.name) and slot.name not in script:
        return replace(slot, label=f"extra {slot.label}", value=f"{slot.value} as well")
    m = _ITEM_FIELD.match(slot.name)
    if m is None or m["field"] == "qty":
        return slot
    item = script.get(f"{m['item']}.desc")
    if item is not None and str(item.value).lower() in slot.label.lower():
        return slot
    if m["field"] != "desc":
        return slot if item is None else replace(slot, value=f"{slot.value} for the {item.value}")
    if item is not None:
        return replace(slot, value=f"{slot.value} instead of the {item.value}")
    label = slot.label if "extra" in slot.label else f"extra {slot.label}"
    return replace(slot, label=label, value=f"{slot.value} as well")


def naming_items_apart(
    slots: tuple[Slot, ...], values: dict[str, Any], *, one_named: bool = True
) -> tuple[Slot, ...]:
    """An answer's slots, each item's quantity and variants naming the item when it states several.

    "Which colours?" about two items was answered "the color is Navy and the color is Red",
    and a journey's cart step gave every item's quantity to a question about one: nothing
    said whose value was whose. So when an answer states the quantities or variant values of
    more than one item, each names its item by the description the customer holds
    (``values``, after a said switch): "Navy for the wool socks", "2 for the desk lamp". The
    value stays first and is written out whole (a protected ``attr``: typo noise leaves the
    number and the name intact), so a reply stating values only says the items too. An
    answer about one item is said as before when the question named that one alone
    (``one_named``); to a question naming several items or none, in a list of several, it
    names its item too: "Which colour for the cocktail table and the swimsuit?" got
    "Black.", the swimsuit's, which an agent could read as the table's. An item the customer
    has not described yet is said as before.
    """
    fields = [_ITEM_FIELD.match(s.name) for s in slots]
    fields = [m if m and m["field"] != "desc" else None for m in fields]
    items = {m["item"] for m in fields if m}
    if len(items) < 2 and (one_named or not items or _described(values) < 2):
        return slots
    out = []
    for s, m in zip(slots, fields, strict=True):
        desc = values.get(f"{m['item']}.desc") if m else None
        if desc is not None and str(desc).lower() in s.label.lower():
            desc = None  # the label names the item already ("size for the desk lamp")
        out.append(
            s if desc is None else replace(s, value=f"{s.display()} for the {desc}", kind="attr")
        )
    return tuple(out)


def _described(values: dict[str, Any]) -> int:
    """How many list items the customer has described (a ``….desc`` they hold)."""
    return sum(1 for name in values if name.endswith(".desc") and _ITEM_FIELD.match(name))


def naming_the_exchange(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """An answer's slots, a journey exchange's replacement values naming the item exchanged.

    A question naming no request ("Which one would you like instead?") was answered "the
    scent is Vanilla" in a journey whose cart step also holds items sold in scents: nothing
    said the value was the exchange's. So a value of a returns step's replacement names its
    item by the step's goal (``values``): "Vanilla for the exchange of the air freshener".
    The value stays first and is written out whole (a protected ``attr``), as
    :func:`naming_items_apart` does. A label naming the exchange already (a switched step's
    "color for the desk lamp exchange") is said as it is.
    """
    out = []
    for s in slots:
        m = _EXCHANGE_FIELD.match(s.name)
        item = values.get(f"steps.{m['step']}.goal") if m else None
        if item is None or "exchange" in s.label:
            out.append(s)
            continue
        item = str(item)
        if not item.lower().startswith(("the ", "my ")):
            item = f"the {item}"
        out.append(replace(s, value=f"{s.display()} for the exchange of {item}", kind="attr"))
    return tuple(out)


#: A journey step's slot (``steps.<i>.<field>``).
_STEP_FIELD = re.compile(r"^steps\.(?P<step>\d+)\.(?P<field>[^.]+)")
#: Where the step's own words sit in an answer, and slots said by their item or exchange.
_STEP_SELF = ("verb", "goal", "items", "exchange")
#: A journey step's goal words that already say what they are about.
_SAID_SUBJECT = ("the ", "my ", "how ", "what ", "whether ", "when ", "which ", "if ")


def step_subject(step: str, values: dict[str, Any]) -> str | None:
    """How the customer names journey step ``step``: its goal ("the stem toys"), or None."""
    goal = values.get(f"steps.{step}.goal")
    if goal is None:
        return None
    goal = str(goal)
    if "replacement" in str(values.get(f"steps.{step}.verb", "")):
        return f"the {goal} replacement"
    return goal if goal.lower().startswith(_SAID_SUBJECT) else f"the {goal}"


#: How a reply says a visit-history time: a noun phrase for "the <label> is <value>".
SEEN_LABEL = "one I mean"


def saying_when_seen(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """A reply's slots, a visit-history time said as the item it picks out.

    Replies say a slot as "the <label> is <value>", and every label but one reads there as
    a noun phrase: the history time's, "when I looked at it", which matches questions ("When
    did you look at it?") but was said "the when I looked at it is two days ago for the body
    wash" (21 of 52 cart tasks at d = 0-12, 4 per d, on 5k products). So the time is said as the
    cart request says it, naming the item it picks out: "the one I mean is the body wash I
    looked at two days ago" ("the one I looked at …" for an item not described), written out
    whole (a protected ``attr``). Applied after the naming functions: the item is named here
    whatever they decided, and their " for the …" is not repeated.
    """
    out = []
    for s in slots:
        m = _ITEM_FIELD.match(s.name)
        if m is None or m["field"] != "seen" or s.name not in values:
            out.append(s)
            continue
        desc = values.get(f"{m['item']}.desc")
        item = f"the {desc}" if desc is not None else "the one"
        said = f"{item} I looked at {values[s.name]}"
        out.append(replace(s, label=SEEN_LABEL, value=said, kind="attr"))
    return tuple(out)


def naming_steps_apart(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """An answer's slots, each naming its journey step when the answer states several steps'.

    "How much do price, rating, delivery and brand matter to you?" names no step, and was
    answered "the budget is $23, …, the budget is $30, …, the priority order is … and the
    priority order is …": three budgets and two rankings, none said to be whose (21 of 60
    journeys at d = 8/11/12 on 5k products hold two rankings). So when an answer states the
    details of more than one step, each names its step by the customer's words for it
    (``values``): "$23 for the stem toys". Item and exchange values name their item already
    (:func:`naming_items_apart`, :func:`naming_the_exchange`), a step's own words need no
    naming, and a label naming its request already ("budget for the bike helmets") stays.
    """
    fields = [_STEP_FIELD.match(s.name) for s in slots]
    fields = [m if m and m["field"] not in _STEP_SELF else None for m in fields]
    if len({m["step"] for m in fields if m}) < 2:
        return slots
    out = []
    for s, m in zip(slots, fields, strict=True):
        subject = step_subject(m["step"], values) if m else None
        if subject is None or subject.lower().removeprefix("the ") in s.label.lower():
            out.append(s)
            continue
        out.append(replace(s, value=f"{s.display()} for {subject}", kind="attr"))
    return tuple(out)


def naming_the_step(slot: Slot) -> Slot:
    """A journey's change of mind, its value naming the request it is about.

    A journey labels a changed slot by its request ("budget for the bike helmets"), but a
    reply stating values only said "actually make it $190": in a journey with several
    budgets no agent could tell whose. So the request moves from the label to the value,
    as :func:`naming_the_item` says an item's ("$190 for the bike helmets"); the value is
    written out whole (a protected ``attr``). Other slots are said as they are.
    """
    if not slot.name.startswith("steps.") or _ITEM_FIELD.match(slot.name):
        return slot
    label, sep, subject = slot.label.partition(" for ")
    if not sep:
        return slot
    return replace(slot, label=label, value=f"{slot.display()} for {subject}", kind="attr")
