"""Heuristic agent for ``status``: find the order, read its status, say it plainly."""

from __future__ import annotations

from typing import Any

from shopgen.gen.tasks.base import Oracle
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.orders import find_order


def heuristic(task: PublicTask) -> Oracle:
    """Play a status task from the public view only."""
    order = yield from find_order(task.user, item=task.user)
    if order is None:
        yield "Sorry, I could not find that order."
        return
    yield describe(order)


def describe(order: dict[str, Any]) -> str:
    """Every fact a customer may ask about an order, in words.

    The status, the delivery (or expected) date, the tracking number and the carrier: saying
    all of them answers any mix of questions without parsing which ones were asked.
    """
    status = str(order.get("status", "")).replace("_", " ")
    parts = [f"Your order {order['order_id']} is {status}."]
    if order.get("delivered_on"):
        parts.append(f"It was delivered on {order['delivered_on']}.")
    elif order.get("eta"):
        parts.append(f"It is expected to arrive on {order['eta']}.")
    if order.get("tracking_number"):
        parts.append(f"The tracking number is {order['tracking_number']}.")
    if order.get("carrier"):
        parts.append(f"The carrier is {order['carrier']}.")
    return " ".join(parts)
