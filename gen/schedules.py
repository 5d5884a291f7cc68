"""Environment-specific difficulty schedules: named functions of d beside θ(d).

DESIGN §5 fixes the twelve shared axes; each environment also needs a few knobs of its own
(how many items a cart task holds, how often a return sits on the edge of its window). They
live here, one named function each, so a task row can record them next to ``theta`` and a
test can check that each is monotone in d. All are non-decreasing in d and bounded.

>>> cart_items(0), cart_items(12)
(1, 4)
>>> journey_length(0), journey_length(9)
(2, 4)
"""

from __future__ import annotations

from typing import Any

from shopgen.gen.difficulty import check_d, sigmoid


def cart_items(d: int) -> int:
    """Distinct products the customer wants in the cart: 1 at d=0, one more every 4 levels, ≤ 5."""
    return min(5, 1 + check_d(d) // 4)


def p_variant(d: int) -> float:
    """Probability a cart item needs a specific variant (size, colour…) chosen."""
    return round(0.2 + 0.6 * sigmoid((check_d(d) - 4) / 2), 6)


def p_quantity_gt1(d: int) -> float:
    """Probability a cart item is wanted in a quantity above one."""
    return min(0.6, 0.1 + 0.05 * check_d(d))


def p_history_ref(d: int) -> float:
    """Probability a cart item is named only by the customer's visit history."""
    return min(0.5, 0.05 * check_d(d))


def p_history_clash(d: int) -> float:
    """Probability a history-named cart item's kind was also viewed at other times.

    Then the noun alone ("the lamp I looked at …") finds several views, and only the time the
    customer names picks one (cart 1.2): the history counterpart of :func:`p_order_clash`.
    """
    return round(0.95 * sigmoid((check_d(d) - 6) / 2), 6)


def p_return_edge(d: int) -> float:
    """Probability a return's order age sits within two days of its window boundary."""
    return min(0.6, 0.06 * check_d(d))


def p_indirect_order_ref(d: int) -> float:
    """Probability an order is named by date or item instead of its number.

    Near 1 at high d (status/returns 2.1): a number makes every other difficulty moot.
    """
    return round(0.97 * sigmoid((check_d(d) - 4) / 2), 6)


def p_order_clash(d: int) -> float:
    """Probability an order named by its item shares that kind of item with other listed orders.

    Then the item alone no longer says which order is meant: the customer's extra detail
    (:func:`order_hint_level`) does, and it may have to be asked for (p_missing).
    """
    return round(0.95 * sigmoid((check_d(d) - 6) / 2), 6)


def order_hint_level(d: int) -> int:
    """How vague the detail telling same-item orders apart may be: 0 at d=0, 8 from d=11.

    ``shopgen.gen.tasks.order_hints.HINT_KINDS`` lists the kinds from exact to relational (the day
    placed, the month, the total, recency, whether it arrived, another item in it, cheaper or
    dearer, its place among the same-item orders, the shipping chosen — only the order's
    details show that); at level L the customer remembers one of the kinds L-3..L, so as d
    grows the exact ones drop out, as they do from a customer's memory. ⌊3d/4⌋, at most 8.
    """
    return min(8, 3 * check_d(d) // 4)


def same_item_orders(d: int) -> int:
    """Listed orders holding the named item that a clashing draw looks for: 2, 3 from d=6, 4 from 12.

    The more orders hold it, the less a guess among them is worth; the generator takes the
    best customer it finds within a few tries when none has this many.
    """
    return min(4, 2 + check_d(d) // 6)


def p_item_paraphrase(d: int) -> float:
    """Probability a customer names an ordered item by another word for it than its title's.

    ("my plushie" for a "Plush Toy", "my tabletop game" for a "Board Game"): the listing must
    then be read for meaning, not matched word for word.
    """
    return round(0.85 * sigmoid((check_d(d) - 7) / 1.5), 6)


def order_facts_asked(d: int) -> int:
    """Facts a status customer asks for at once (status, delivery date, tracking, carrier), ≤ 3."""
    return min(3, 1 + check_d(d) // 5)


def journey_length(d: int) -> int:
    """Sub-intents in a journey task, L(d) = 2 + ⌊d/4⌋, at most 5."""
    return min(5, 2 + check_d(d) // 4)


def journey_turns(d: int) -> int:
    """Turns a journey gets beyond θ's T_max(d): one for each request after its first.

    A journey packs its L(d) requests' calls into shared turns of at most B_tool calls. Within
    T_max(d) alone, draws with a cart, discovery or substitution step needed more turns
    than that far more often than the others, and were redrawn until a short mix came up: at
    d = 5 on 100k products 34% of the cart steps drawn fitted against 72% of the policy
    steps, so the journeys shown to an agent held fewer of the long requests than they drew,
    and each journey cost 2.2 draws.
    """
    return journey_length(d) - 1


def p_shorthand(d: int) -> float:
    """Probability a word that has a chat shorthand ("please" → "pls") is written that way."""
    return min(0.6, 0.05 * check_d(d))


SCHEDULES = {
    f.__name__: f
    for f in (
        cart_items,
        p_variant,
        p_quantity_gt1,
        p_history_ref,
        p_history_clash,
        p_return_edge,
        p_indirect_order_ref,
        p_order_clash,
        order_hint_level,
        same_item_orders,
        p_item_paraphrase,
        order_facts_asked,
        journey_length,
        journey_turns,
        p_shorthand,
    )
}


def schedules(d: int) -> dict[str, Any]:
    """Every environment schedule at level ``d``, by name (for task rows and the CLI table)."""
    return {name: f(d) for name, f in SCHEDULES.items()}
