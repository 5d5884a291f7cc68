"""status — "where is my order?".

Customer wants:
    to know where one of their orders is: its status, and the delivery date (delivered) or the
    expected delivery date (on its way); sometimes the tracking number too. They name the order
    by its number or, more often as d grows, indirectly: by an item in it and the day they
    placed it. When the item fits several of their orders and they left the day out, the agent
    has to ask.
Tools offered:
    orders_list, order_get_details, ask_user.
Hidden goal:
    ``{order_id, status, date, date_kind, want, tracking_number, item_ambiguous}`` from the
    world's orders table: ``date`` is the delivery day (``date_kind = "delivered_on"``), the
    ETA (``"eta"``), or None for a cancelled order.
Reward and is_correct:
    ``verifiers.status`` reads the final message: it must assert the true status and no other,
    state the date, and state the tracking number when asked. r_task = 2·(parts right / parts
    asked) − 1; correct iff every part is right.
Difficulty axes used:
    H_orders (orders the agent must tell apart), p_missing (whether the day is said),
    p_noise, T_max, B_tool, and the schedule p_indirect_order_ref(d).
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import p_indirect_order_ref
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick
from shopgen.schemas.task import TaskRow

#: What a customer asks for: tracking only makes sense once an order has shipped.
_WANTS_SHIPPED = ("status", "delivery date", "tracking number")
_WANTS_UNSHIPPED = ("status", "delivery date")

#: How the final message states each status (the verifier accepts these and paraphrases).
STATUS_PHRASES = {
    "placed": "has been placed and is not processed yet",
    "processing": "is processing",
    "shipped": "has shipped",
    "in_transit": "is in transit",
    "delivered": "was delivered",
    "cancelled": "was cancelled",
}


def spoken_date(day: date) -> str:
    """A date as a customer says it: ``March 5``."""
    return f"{day:%B} {day.day}"


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a customer, one of their last H_orders orders, and how they refer to it."""
    visible_n = int(axes.H_orders)
    user_id = pick(rng, ctx.customers_with_orders(visible_n))
    visible = ctx.orders_of(user_id).tail(visible_n)
    target = visible.row(int(rng.integers(visible.height)), named=True)
    want = pick(rng, _WANTS_SHIPPED if target["tracking_number"] else _WANTS_UNSHIPPED)
    slots: list[Slot] = [make_slot("status", "want", want, required=True)]
    ambiguous = False
    if rng.random() < p_indirect_order_ref(d):
        item, ambiguous = _item_reference(ctx, visible, target, rng)
        slots.append(make_slot("status", "item", item, required=True))
    else:
        slots.append(make_slot("status", "order_ref", target["order_id"], required=True))
    slots.append(make_slot("status", "order_date", spoken_date(target["placed_at"].date())))
    date_kind, when = _answer_date(target)
    goal = {
        "order_id": target["order_id"],
        "status": target["status"],
        "date": when,
        "date_kind": date_kind,
        "want": want,
        "tracking_number": target["tracking_number"] if want == "tracking number" else None,
        "item_ambiguous": ambiguous,
    }
    episode = {
        "user_id": user_id,
        "order_ids": visible["order_id"].to_list(),
        "today": ctx.today.isoformat(),
    }
    return Draft(slots=tuple(slots), goal=goal, episode=episode)


def _item_reference(
    ctx: GenContext, visible: pl.DataFrame, target: dict[str, Any], rng: np.random.Generator
) -> tuple[str, bool]:
    """A noun from the target's titles, and whether other listed orders hold it too.

    When they do, the day must single the order out; a tie on the day is redrawn.
    """
    title = ctx.store.product(pick(rng, ctx.lines_of(target["order_id"])["product_id"].to_list()))[
        "title"
    ]
    noun = _noun_in(ctx, title)
    holders = [o for o in visible.iter_rows(named=True) if _holds(ctx, o["order_id"], noun)]
    day = target["placed_at"].date()
    if sum(o["placed_at"].date() == day for o in holders) > 1:
        raise Redraw("two orders hold the item on the same day")
    return noun, len(holders) > 1


def _noun_in(ctx: GenContext, title: str) -> str:
    """The taxonomy noun a product's title uses, lowercased (what a customer calls it)."""
    found = ctx.noun_in_title(title)
    if found is None:
        raise Redraw(f"no taxonomy noun in title {title!r}")
    return found


def _holds(ctx: GenContext, order_id: str, noun: str) -> bool:
    return any(
        noun in ctx.store.product(pid)["title"].lower()
        for pid in ctx.lines_of(order_id)["product_id"]
    )


def _answer_date(order: dict[str, Any]) -> tuple[str | None, str | None]:
    if order["delivered_at"] is not None:
        return "delivered_on", _iso(order["delivered_at"])
    if order["cancelled_at"] is not None:
        return None, None
    return "eta", _iso(order["eta"])


def _iso(value: date | datetime) -> str:
    return value.isoformat()[:10]


def answer(goal: dict[str, Any]) -> str:
    """The final message a perfect agent writes from the order's details."""
    parts = [f"Your order {goal['order_id']} {STATUS_PHRASES[goal['status']]}."]
    if goal["date_kind"] == "delivered_on":
        parts.append(f"It was delivered on {goal['date']}.")
    elif goal["date_kind"] == "eta":
        parts.append(f"It is expected to arrive on {goal['date']}.")
    if goal["tracking_number"]:
        parts.append(f"The tracking number is {goal['tracking_number']}.")
    return " ".join(parts)


def oracle(task: TaskRow) -> Oracle:
    """Look the order up; list and ask only when the customer's words do not single it out."""
    goal = task.decoded("goal")
    slots = {s["name"]: s for s in task.decoded("user_script")["slots"]}
    if "order_ref" in slots:  # said: the order number is always in the first message
        yield [call("order_get_details", order_id=goal["order_id"])]
    else:
        yield [call("orders_list")]
        if goal["item_ambiguous"] and slots["order_date"]["omitted"]:
            yield [call("ask_user", question="On which day did you place that order?")]
        yield [call("order_get_details", order_id=goal["order_id"])]
    yield answer(goal)
