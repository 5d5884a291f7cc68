"""Verifier of ``cart`` (see ``shopgen.gen.tasks.cart`` for the task).

The cart is graded unit by unit: each unit of a (product_id, variant_id) line is one element of
a multiset. Precision, recall and F1 are exact fractions (no 1e-9 smoothing, so a perfect one-
or two-unit cart scores exactly 1 — issue #7), and ``r_task = 2·F1 − 1``.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.tools.cart import line_name
from shopgen.env.verifier import Score, copy_data
from shopgen.gen.store import BoundedCache
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, compose, guessed
from shopgen.verifiers.rows import PerObject, decoded

Key = tuple[str, str | None]


def goal_units(goal: dict[str, Any]) -> Counter[Key]:
    """The wanted units per (product_id, variant_id)."""
    units: Counter[Key] = Counter()
    for line in goal["cart"]:
        units[(line["product_id"], line["variant_id"])] += int(line["quantity"])
    return units


#: Per shared goal object (see :func:`shopgen.verifiers.rows.decoded`); read, never changed.
_goal_units = PerObject(goal_units)


def cart_units(cart: dict[Key, int]) -> Counter[Key]:
    """The cart's units per (product_id, variant_id), empty lines dropped."""
    return Counter({k: int(q) for k, q in cart.items() if q > 0})


def unit_f1(wanted: Counter[Key], got: Counter[Key]) -> tuple[Fraction, Fraction, Fraction]:
    """Exact unit-level (precision, recall, F1); an empty cart has precision 0."""
    hits = sum((wanted & got).values())
    n_got, n_wanted = sum(got.values()), sum(wanted.values())
    precision = Fraction(hits, n_got) if n_got else Fraction(0)
    recall = Fraction(hits, n_wanted) if n_wanted else Fraction(0)
    f1 = Fraction(2 * hits, n_got + n_wanted) if n_got + n_wanted else Fraction(0)
    return precision, recall, f1


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the final cart against the goal's cart, and that left-out details were asked.

    A quantity or variant value the first message left out is the customer's to say. A cart
    built without asking guessed it (one unit is the likeliest quantity, so a guess is often
    right): however well it matches, it earns at most 0 and is not correct, as a guessed
    start is in ``returns``. The cart's own grading is remembered (the details are shared).
    """
    goal = decoded(task, "goal")
    graded = _graded(goal)
    verdict = graded.remember(
        tuple(state.cart.items()), lambda: grade(_goal_units(goal), state.cart)
    )
    return verdict if _asked_in_time(task, goal, state) else guessed(verdict)


def _asked_in_time(task: TaskRow, goal: dict[str, Any], state: EpisodeState) -> bool:
    """Every left-out detail was heard before its item's cart line last changed.

    Item ``j``'s details (``items.j.…``) inform goal line ``j``: an answer heard in the turn
    that line changed, or later, cannot have. Counted against the whole cart's last change, a
    guessed line asked about after, with another line added later, passed.
    """
    needed = _to_ask(task)
    if not needed:
        return True
    changed = state.extra.get("cart_turns", {})
    lines = goal["cart"]
    heard: dict[int | None, set[str]] = {}
    for name in needed:
        j = int(name.split(".")[1])
        line = lines[j] if j < len(lines) else None
        before = changed.get(line_name((line["product_id"], line["variant_id"]))) if line else None
        if before not in heard:
            heard[before] = state.answered_slots(before=before)
        if name not in heard[before]:
            return False
    return True


def details_to_ask(task: TaskRow) -> frozenset[str]:
    """The left-out quantity and variant slots of the items the first message described.

    What a change of mind states is said unasked: a new variant value, an added item (one
    unit, as the oracle adds it), and an item swapped for another, whose old variant values
    no longer describe anything in the cart (its quantity still does).
    """
    script = decoded(task, "user_script")
    switch = script.get("switch") or {}
    changed = {name for name, _ in switch.get("changes", ())}
    swapped = tuple(
        name.removesuffix("desc") for name in changed if switch.get("kind") == "swap_item"
    )
    described = tuple(
        s["name"].removesuffix("desc") for s in script["slots"] if s["name"].endswith(".desc")
    )
    return frozenset(
        name
        for s in script["slots"]
        if s["omitted"]
        and (name := s["name"]).startswith(described)
        and name not in changed
        and not (".variant." in name and name.startswith(swapped))
    )


#: Per (frozen) task row: the details its cart needs asked (:func:`details_to_ask`).
_to_ask = PerObject(details_to_ask)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms, its details copied out."""
    r_task, correct, details = verdict(task, state)
    return compose(task, state, r_task, correct, copy_data(details))


def grade(wanted: Counter[Key], cart: dict[Key, int]) -> tuple[float, bool, dict[str, Any]]:
    """(r_task, correct, details) of a final cart: a pure function of the goal and the cart."""
    got = cart_units(cart)
    precision, recall, f1 = unit_f1(wanted, got)
    r_task = 2 * f1 - 1 if got else Fraction(-1)
    details = {
        "precision": str(precision),
        "recall": str(recall),
        "f1": str(f1),
        "missing": sorted(map(list, (wanted - got).keys()), key=str),
        "extra": sorted(map(list, (got - wanted).keys()), key=str),
    }
    return float(r_task), got == wanted, details


#: Distinct final carts whose grading one goal remembers.
_GRADED_LIMIT = 64
#: Per shared goal object: final cart (its lines in order) → :func:`grade`. Scoring replays
#: the same carts again and again; the remembered details are copied out, never handed over.
_graded = PerObject(lambda goal: BoundedCache(_GRADED_LIMIT), limit=1024)
