"""status — "where is my order?".

Customer wants:
    to know where one of their orders is: its status, and the delivery date (delivered) or the
    expected delivery date (on its way); as d grows they ask for more at once
    (``order_facts_asked(d)`` of status, delivery date, tracking number, carrier). They name
    the order by its number or, more often as d grows (``p_indirect_order_ref``), by a kind of
    item in it — as d grows more often by another word than its title's
    (``p_item_paraphrase``: "plushie" for a "Plush Toy"), and typos (p_noise) may hit it. With
    probability ``p_order_clash(d)`` other listed orders hold the same kind of item, and only
    a detail the customer adds tells them apart, from exact to relational as d grows
    (``order_hint_level(d)``, :data:`HINT_KINDS`): the day placed, the month, the total, "the
    most recent one", another item in it, "the cheaper one", whether it already arrived. That
    detail is optional (dropped with p_missing): then the agent must ask which order is meant
    and relate the answer to the orders holding the item. Once d leaves the day out of the
    customer's memory they cannot give it at all.
Tools offered:
    orders_list, order_get_details, ask_user.
Hidden goal:
    ``{order_id, status, date, date_kind, want, tracking_number, carrier, item_ambiguous,
    hint_kind, holders, holder_ids}`` from the world's orders table: ``date`` is the delivery day
    (``date_kind = "delivered_on"``), the ETA (``"eta"``), or None for a cancelled order;
    ``tracking_number`` / ``carrier`` are set only when asked for; ``holder_ids`` are the
    listed orders the customer's item words could mean (``holders`` of them; none when the
    order is named by number).
Reward and is_correct:
    ``verifiers.status`` reads the final message: it must assert the true status and no other,
    state the date, the tracking number and the carrier (only that one) when asked.
    r_task = 2·(parts right / parts asked) − 1; correct iff every part is right.
Difficulty axes used:
    H_orders (orders the agent must tell apart, and room for same-item orders), p_missing
    (whether the telling detail is said), p_noise (typos in the item's name), T_max, B_tool,
    and the schedules p_indirect_order_ref(d), p_item_paraphrase(d), p_order_clash(d),
    order_hint_level(d), order_facts_asked(d).
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    2.0 — same-item orders drawn on purpose (p_order_clash), told apart by one of seven kinds
    of detail, vaguer as d grows (order_hint_level); items paraphrased (p_item_paraphrase);
    several facts asked at once, the carrier among them (order_facts_asked); the oracle's
    clarifying question now matches the customer's words (1.0's drew "don't know").
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import (
    order_facts_asked,
    order_hint_level,
    p_indirect_order_ref,
    p_item_paraphrase,
    p_order_clash,
)
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick
from shopgen.schemas.task import TaskRow

#: What a customer may ask for: tracking and carrier only make sense once an order has shipped.
_WANTS_SHIPPED = ("status", "delivery date", "tracking number", "carrier")
_WANTS_UNSHIPPED = ("status", "delivery date")

#: Details that tell same-item orders apart, from exact to relational. At level
#: L = ``order_hint_level(d)`` the kinds L-2..L are open (:data:`HINT_WINDOW`). "day" is the
#: ``order_date`` slot, the others the ``order_hint`` slot.
HINT_KINDS = ("day", "month", "total", "recency", "co_item", "price_rank", "arrival")
HINT_WINDOW = 3

#: Customers to try for one whose listed orders share a kind of item, before a plain draw.
CLASH_TRIES = 8

#: Characters of a title an order listing shows (``shopgen.env.tools.orders.TITLE_CHARS``):
#: the named item must be visible there, so the agent can see which orders hold it.
_LISTED_CHARS = 59

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
    pool = ctx.customers_with_orders(visible_n)
    indirect = rng.random() < p_indirect_order_ref(d)
    clash = indirect and visible_n > 1 and rng.random() < p_order_clash(d)
    drawn = _clashing_draw(ctx, pool, visible_n, rng) if clash else None
    if drawn is None:
        user_id = pick(rng, pool)
        visible = ctx.orders_of(user_id).tail(visible_n)
        target = visible.row(int(rng.integers(visible.height)), named=True)
        noun = _item_noun(ctx, target, rng) if indirect else ""
    else:
        user_id, visible, target, noun = drawn
    want, asked = _wants(target, d, rng)
    slots: list[Slot] = [make_slot("status", "want", want, required=True)]
    holders: list[dict[str, Any]] = []
    kind: str | None = None
    said = noun
    if indirect:
        said, category = _spoken_item(ctx, target, noun, d, rng)
        holders = [
            o
            for o in visible.iter_rows(named=True)
            if _refers(ctx, o["order_id"], (noun, said), category)
        ]
        slots.append(make_slot("status", "item", said, required=True))
        if len(holders) > 1:
            kind, phrase = _hint(ctx, target, holders, noun, d, rng)
            if kind != "day":
                slots.append(make_slot("status", "order_hint", phrase))
    else:
        slots.append(make_slot("status", "order_ref", target["order_id"], required=True))
    if kind == "day" or (kind is None and "day" in _open_kinds(d)):
        # The day is said (or given when asked) only while d leaves it in memory.
        slots.append(make_slot("status", "order_date", spoken_date(target["placed_at"].date())))
    date_kind, when = _answer_date(target)
    goal = {
        "order_id": target["order_id"],
        "status": target["status"],
        "date": when,
        "date_kind": date_kind,
        "want": want,
        "tracking_number": target["tracking_number"] if "tracking number" in asked else None,
        "carrier": target["carrier"] if "carrier" in asked else None,
        "item_ambiguous": len(holders) > 1,
        "item_paraphrased": said != noun,
        "hint_kind": kind,
        "holders": len(holders),
        "holder_ids": [o["order_id"] for o in holders],
    }
    episode = {
        "user_id": user_id,
        "order_ids": visible["order_id"].to_list(),
        "today": ctx.today.isoformat(),
    }
    return Draft(slots=tuple(slots), goal=goal, episode=episode)


def _wants(target: dict[str, Any], d: int, rng: np.random.Generator) -> tuple[str, list[str]]:
    """What the customer asks for, as they say it, and the list of facts (pool order)."""
    pool = _WANTS_SHIPPED if target["tracking_number"] else _WANTS_UNSHIPPED
    n = min(len(pool), order_facts_asked(d))
    chosen = sorted(rng.choice(len(pool), size=n, replace=False).tolist())
    asked = [pool[i] for i in chosen]
    said = asked[0] if n == 1 else f"{', '.join(asked[:-1])} and {asked[-1]}"
    return said, asked


def _clashing_draw(
    ctx: GenContext, pool: list[str], visible_n: int, rng: np.random.Generator
) -> tuple[str, pl.DataFrame, dict[str, Any], str] | None:
    """A customer whose listed orders share a kind of item, a target holding it, and the noun.

    A few customers are tried (each a keyed draw); None sends the caller to a plain draw.
    """
    for _ in range(CLASH_TRIES):
        user_id = pick(rng, pool)
        visible = ctx.orders_of(user_id).tail(visible_n)
        rows = list(visible.iter_rows(named=True))
        shared: dict[str, list[dict[str, Any]]] = {}
        for order in rows:
            for noun in _listed_nouns(ctx, order["order_id"]):
                holders = [o for o in rows if _holds(ctx, o["order_id"], noun)]
                if len(holders) > 1 and order in holders:
                    shared.setdefault(noun, [])
                    if order not in shared[noun]:
                        shared[noun].append(order)
        if shared:
            noun = pick(rng, sorted(shared))
            return user_id, visible, pick(rng, shared[noun]), noun
    return None


def _listed_nouns(ctx: GenContext, order_id: str) -> list[str]:
    """Nouns of an order's items that its listing shows (sorted, for stable draws)."""
    found = set()
    for pid in ctx.lines_of(order_id)["product_id"]:
        title = ctx.store.product(pid)["title"]
        noun = ctx.noun_in_title(title)
        if noun is not None and noun in title[:_LISTED_CHARS].lower():
            found.add(noun)
    return sorted(found)


def _item_noun(ctx: GenContext, target: dict[str, Any], rng: np.random.Generator) -> str:
    """The noun of one of the target's items, as its listing shows it (what a customer says)."""
    nouns = _listed_nouns(ctx, target["order_id"])
    if not nouns:
        raise Redraw("no listed item of the order has a taxonomy noun")
    return pick(rng, nouns)


def _spoken_item(
    ctx: GenContext, target: dict[str, Any], noun: str, d: int, rng: np.random.Generator
) -> tuple[str, str | None]:
    """What the customer calls the item, and its category (None when said as listed).

    With probability ``p_item_paraphrase(d)`` it is another noun of the item's taxonomy
    category that shares no word with the listed title (when the category has one).
    """
    if rng.random() >= p_item_paraphrase(d):
        return noun, None
    product = next(
        p
        for p in (ctx.store.product(pid) for pid in ctx.lines_of(target["order_id"])["product_id"])
        if noun in p["title"][:_LISTED_CHARS].lower()
    )
    title_words = set(_words(product["title"]))
    cat = next(c for _, c in ctx.store_taxonomy.leaves() if c.id == product["category_id"])
    others = sorted(
        {n.lower() for n in cat.nouns if not set(_words(n)) & title_words} - {noun},
        key=lambda n: (len(n), n),
    )
    if not others:
        return noun, None
    return pick(rng, others), product["category_id"]


def _words(text: str) -> list[str]:
    return [w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower())]


def _refers(ctx: GenContext, order_id: str, words: tuple[str, ...], category: str | None) -> bool:
    """Whether the customer's words could mean an item of the order (by word or by kind)."""
    for pid in ctx.lines_of(order_id)["product_id"]:
        product = ctx.store.product(pid)
        title = product["title"].lower()
        if any(w in title for w in words) or product["category_id"] == category:
            return True
    return False


def _open_kinds(d: int) -> tuple[str, ...]:
    """The kinds of telling detail a customer remembers at level d (see :data:`HINT_KINDS`)."""
    level = order_hint_level(d)
    return HINT_KINDS[max(0, level + 1 - HINT_WINDOW) : level + 1]


def _holds(ctx: GenContext, order_id: str, noun: str) -> bool:
    return any(
        noun in ctx.store.product(pid)["title"].lower()
        for pid in ctx.lines_of(order_id)["product_id"]
    )


def _hint(
    ctx: GenContext,
    target: dict[str, Any],
    holders: list[dict[str, Any]],
    noun: str,
    d: int,
    rng: np.random.Generator,
) -> tuple[str, str]:
    """One open kind of detail that singles ``target`` out among ``holders``, and its words.

    Raises:
        Redraw: no open kind singles the target out (e.g. two holders placed the same day).
    """
    others = [o for o in holders if o["order_id"] != target["order_id"]]
    options = [(k, p) for k in _open_kinds(d) if (p := _hint_words(ctx, k, target, others, noun))]
    if not options:
        raise Redraw("no detail tells the same-item orders apart")
    return pick(rng, options)


def _hint_words(
    ctx: GenContext,
    kind: str,
    target: dict[str, Any],
    others: list[dict[str, Any]],
    noun: str,
) -> str | None:
    """The customer's words for detail ``kind``, or None when it does not single out the target."""
    placed = target["placed_at"]
    if kind == "day":
        day = placed.date()
        return None if any(o["placed_at"].date() == day for o in others) else "day"
    if kind == "month":
        key = (placed.year, placed.month)
        if any((o["placed_at"].year, o["placed_at"].month) == key for o in others):
            return None
        return f"the one I placed in {placed:%B}"
    if kind == "recency":
        if all(o["placed_at"] < placed for o in others):
            return "the most recent one"
        if all(o["placed_at"] > placed for o in others):
            return "the earliest one"
        return None
    if kind == "co_item":
        for other in _listed_nouns(ctx, target["order_id"]):
            clear = other != noun and noun not in other and other not in noun
            if clear and not any(_holds(ctx, o["order_id"], other) for o in others):
                return f"the one that also had the {other}"
        return None
    if kind == "price_rank":
        total = round(target["total"], 2)
        if all(round(o["total"], 2) > total for o in others):
            return "the cheaper one" if len(others) == 1 else "the cheapest one"
        if all(round(o["total"], 2) < total for o in others):
            return "the more expensive one" if len(others) == 1 else "the most expensive one"
        return None
    if kind == "total":
        total = round(target["total"], 2)
        if any(round(o["total"], 2) == total for o in others):
            return None
        return f"the one that came to ${total:.2f}"
    arrived = target["status"] == "delivered"
    if target["status"] == "cancelled" or any(
        (o["status"] == "delivered") == arrived or o["status"] == "cancelled" for o in others
    ):
        return None
    return "the one that already arrived" if arrived else "the one that hasn't arrived yet"


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
    if goal.get("carrier"):
        parts.append(f"The carrier is {goal['carrier']}.")
    return " ".join(parts)


def clarifying_question(item: str) -> str:
    """What to ask when several orders hold the item: it names the order and asks the day.

    "which order" and "when did you place" are the customer's words for the telling detail
    (the ``order_hint`` and ``order_date`` slots); the item narrows a journey's customer to
    this step.
    """
    return f"Which order do you mean (the {item} one)? When did you place it?"


def oracle(task: TaskRow) -> Oracle:
    """Look the order up; list and ask only when the customer's words do not single it out."""
    goal = task.decoded("goal")
    slots = {s["name"]: s for s in task.decoded("user_script")["slots"]}
    if "order_ref" in slots:  # said: the order number is always in the first message
        yield [call("order_get_details", order_id=goal["order_id"])]
    else:
        yield [call("orders_list")]
        telling = slots.get("order_hint") or slots.get("order_date")
        if goal["item_ambiguous"] and telling is not None and telling["omitted"]:
            yield [call("ask_user", question=clarifying_question(str(slots["item"]["value"])))]
        yield [call("order_get_details", order_id=goal["order_id"])]
    yield answer(goal)
