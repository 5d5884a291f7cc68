"""Finding the order a customer means, shared by the status, returns and journey heuristics.

A rule-based agent's way: the order number when the customer gave one; otherwise the order
list, narrowed to the orders whose items share the most words with the customer's message,
then by what the words say about the order — a day ("March 5"), a month ("in March"),
recency ("the most recent one"), an amount ("$45.99"). When that still leaves several, it
asks which order is meant and narrows again with the reply; a tie left after that is settled
by taking the newest. It reads words, not meaning: typos in an item's name, or a description
such as "the one that already arrived", defeat it (that is what the difficulty dial is for).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import Any

from shopgen.gen.tasks.base import Call, call
from shopgen.policies.heuristic.common import (
    MONTHS,
    ask,
    month_day,
    order_refs,
    reply_text,
    words,
)

Find = Generator[list[Call], list[dict[str, Any]], dict[str, Any] | None]

#: What the agent asks when several orders fit.
WHICH_ORDER = "Which order do you mean? When did you place it?"

#: Words of customer requests that name no item (they must not match a product title).
_STOP = frozenset(
    words(
        "the a an and or my me i you your it is was of for to with on in at by from this that "
        "one order orders placed place status delivery date tracking number carrier need want "
        "know tell please pls thanks thank hi hello hey where when what which can could would "
        "also had have has came arrived arrive yet still most recent earliest return exchange "
        "item items thing stuff check give just now help"
    )
)
_RECENT = re.compile(r"\b(?:most recent|latest|newest|last one|later one)\b")
_EARLY = re.compile(r"\b(?:earliest|oldest|first one|older one|earlier one)\b")
_MONTH_ONLY = re.compile(r"\bin\s+(" + "|".join(MONTHS) + r")\b")
_AMOUNT = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d{1,2})?)")


def find_order(text: str, item: str = "", *, details: bool = True) -> Find:
    """Yield turns until one order's details are known; return them (or None if lost).

    Args:
        text: the customer's message (order numbers and details about the order are read here).
        item: words naming the item (often the whole message); "" to skip item matching.
        details: False returns an order chosen from the listing as listed (its ``items`` carry
            product ids), saving the details call a turn budget may not have room for.
    """
    refs = order_refs(text)
    if not refs:
        listing = yield [call("orders_list")]
        orders = next((r["orders"] for r in listing if "orders" in r), [])
        fits = narrow(by_item(orders, item), text)
        if len(fits) > 1:
            said = reply_text((yield ask(WHICH_ORDER)))
            fits = [o for o in fits if o["order_id"] in order_refs(said)] or narrow(
                by_words(fits, said), said
            )
        if fits and not details:
            return fits[0]
        refs = [o["order_id"] for o in fits[:1]]
    if not refs:
        refs = order_refs(reply_text((yield ask("What is your order number?"))))
    if not refs:
        return None
    details = yield [call("order_get_details", order_id=refs[0])]
    return next((r for r in details if "order_id" in r and "status" in r), None)


def item_words(order: dict[str, Any]) -> set[str]:
    """The words of an order's item titles (as the listing shows them)."""
    out: set[str] = set()
    for it in order.get("items", []):
        out |= words(str(it.get("title", "")))
    return out - _STOP


def by_words(orders: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The orders whose items share the most words with ``text`` (all of them if none does)."""
    said = words(text) - _STOP
    scores = [len(said & item_words(o)) for o in orders]
    best = max(scores, default=0)
    return [o for o, s in zip(orders, scores, strict=True) if s == best] if best else orders


def by_item(orders: list[dict[str, Any]], item: str) -> list[dict[str, Any]]:
    """:func:`by_words` for the item's words, or every order when no item was named."""
    return by_words(orders, item) if item else list(orders)


def narrow(orders: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Apply each detail ``text`` gives about the order; a detail that fits none is ignored."""
    low = text.lower()
    for keep in _filters(low):
        kept = keep(orders)
        if kept:
            orders = kept
    return orders


def _filters(low: str) -> list[Callable[[list[dict[str, Any]]], list[dict[str, Any]]]]:
    out: list[Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = []
    md = month_day(low)
    if md is not None:
        out.append(lambda os: [o for o in os if _md(o.get("placed_on", "")) == md])
    m = _MONTH_ONLY.search(low)
    if m is not None and md is None:
        month = MONTHS.index(m.group(1)) + 1
        out.append(lambda os: [o for o in os if (_md(o.get("placed_on", "")) or (0,))[0] == month])
    amounts = {round(float(a.replace(",", "")), 2) for a in _AMOUNT.findall(low)}
    if amounts:
        out.append(lambda os: [o for o in os if round(float(o.get("total", -1)), 2) in amounts])
    if _RECENT.search(low):
        out.append(lambda os: [max(os, key=lambda o: o.get("placed_on", ""))])
    elif _EARLY.search(low):
        out.append(lambda os: [min(os, key=lambda o: o.get("placed_on", ""))])
    return out


def _md(day: str) -> tuple[int, int] | None:
    try:
        return int(day[5:7]), int(day[8:10])
    except ValueError:
        return None
