"""Finding the order a customer means, shared by the status, returns and journey heuristics."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from shopgen.gen.tasks.base import Call, call
from shopgen.policies.heuristic.common import ask, month_day, order_refs, overlap, reply_text

Find = Generator[list[Call], list[dict[str, Any]], dict[str, Any] | None]


def find_order(text: str, item: str = "") -> Find:
    """Yield turns until one order's details are known; return them (or None if lost).

    Uses the order number when the customer gave one, else the order list matched by the
    date or the item the customer named, else asks for the number.
    """
    refs = order_refs(text)
    if not refs:
        listing = yield [call("orders_list")]
        orders = next((r["orders"] for r in listing if "orders" in r), [])
        refs = _match(orders, text, item)
    if not refs:
        answer = reply_text((yield ask("What is your order number?")))
        refs = order_refs(answer)
    if not refs:
        return None
    details = yield [call("order_get_details", order_id=refs[0])]
    found = next((r for r in details if "order_id" in r and "status" in r), None)
    return found


def _match(orders: list[dict[str, Any]], text: str, item: str) -> list[str]:
    md = month_day(text)
    if md is not None:
        by_date = [o["order_id"] for o in orders if _md(o.get("placed_on", "")) == md]
        if len(by_date) == 1:
            return by_date
    if item:
        scored = [
            (max((overlap(item, it["title"]) for it in o.get("items", [])), default=0.0), i)
            for i, o in enumerate(orders)
        ]
        best = max(scored, default=(0.0, 0))
        if best[0] >= 0.5 and sum(s == best[0] for s, _ in scored) == 1:
            return [orders[best[1]]["order_id"]]
    return [orders[0]["order_id"]] if len(orders) == 1 else []


def _md(day: str) -> tuple[int, int] | None:
    try:
        return int(day[5:7]), int(day[8:10])
    except ValueError:
        return None
