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
    most recent one", whether it already arrived, another item in it (at high d by a category
    it belongs to: "the one that also had some school supplies in it"), "the cheapest one",
    its place among them ("the second most recent one"), the shipping chosen ("the one I paid
    for next-day delivery" — only ``order_get_details`` shows it). That detail is optional
    (dropped with p_missing): then the agent must ask which order is meant and relate the
    answer to the orders holding the item. Once d leaves the day out of the customer's memory
    they cannot give it at all. As d grows the clashing draw looks for more orders holding the
    item (``same_item_orders(d)``: 2, 3, 4), so a guess among them is worth less, and an item
    may be named by a category it belongs to ("my order with the school supplies"), which
    every order with such an item then holds.

    Reasoning an agent needs at high d (the oracle proves each task solvable with tool results
    and the customer's answers): map a paraphrase or a category name to listed titles; rank
    the candidate orders by total or by date and pick by rank ("cheapest", "second most
    recent" — a word matcher reading "most recent" takes the newest, wrongly); decide which
    category another listed item belongs to; open each candidate's details to compare the
    shipping method; ask which order is meant when the detail was left out.
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
    (whether the telling detail is said), p_noise (typos in the item's name), T_max, B_tool
    (candidates' details opened per turn), and the schedules p_indirect_order_ref(d),
    p_item_paraphrase(d), p_order_clash(d), same_item_orders(d), order_hint_level(d),
    order_facts_asked(d).
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    2.0 — same-item orders drawn on purpose (p_order_clash), told apart by one of seven kinds
    of detail, vaguer as d grows (order_hint_level); items paraphrased (p_item_paraphrase);
    several facts asked at once, the carrier among them (order_facts_asked); the oracle's
    clarifying question now matches the customer's words (1.0's drew "don't know").
    2.1 — orders named by number rarer at high d (p_indirect_order_ref → 0.95 at d=12); more
    same-item orders (same_item_orders, 48 customer tries); p_order_clash up to 0.81 and
    p_item_paraphrase up to 0.82 at d=12, with category-path names when the category has no
    other noun; two more kinds of detail, ``position`` and ``shipping`` (the oracle opens every
    candidate's details), ``arrival`` moved before ``co_item``, ``co_item`` said by category
    at high d; order_hint_level reaches 8 at d=11 with a window of 4 kinds.
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
    same_item_orders,
)
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, chunked, pick
from shopgen.schemas.task import TaskRow

#: What a customer may ask for: tracking and carrier only make sense once an order has shipped.
_WANTS_SHIPPED = ("status", "delivery date", "tracking number", "carrier")
_WANTS_UNSHIPPED = ("status", "delivery date")

#: Details that tell same-item orders apart, from exact to relational. At level
#: L = ``order_hint_level(d)`` the kinds L-2..L are open (:data:`HINT_WINDOW`). "day" is the
#: ``order_date`` slot, the others the ``order_hint`` slot.
HINT_KINDS = (
    "day",
    "month",
    "total",
    "recency",
    "arrival",
    "co_item",
    "price_rank",
    "position",
    "shipping",
)
HINT_WINDOW = 4
#: Kinds the order listing does not show: the agent must open each candidate's details.
DETAIL_KINDS = frozenset({"shipping"})

#: Customers to try for one whose listed orders share a kind of item, before a plain draw
#: (the first with ``same_item_orders(d)`` such orders wins; else the one with the most).
CLASH_TRIES = 48

#: How a customer remembers the shipping they chose (``order_get_details`` ship_method).
SHIP_WORDS = {
    "standard": "the one I sent with plain standard shipping",
    "expedited": "the one I paid extra to expedite",
    "two_day": "the one I picked two-day shipping for",
    "next_day": "the one I paid for next-day delivery",
}
#: "the second most recent one", … (``position``: a middle one of three or more holders).
_ORDINALS = ("", "second", "third", "fourth", "fifth", "sixth")

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
    drawn = _clashing_draw(ctx, pool, visible_n, same_item_orders(d), rng) if clash else None
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
            kind, phrase = order_hint(ctx, target, holders, noun, d, rng)
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
    ctx: GenContext, pool: list[str], visible_n: int, want: int, rng: np.random.Generator
) -> tuple[str, pl.DataFrame, dict[str, Any], str] | None:
    """A customer whose listed orders share a kind of item, a target holding it, and the noun.

    A few customers are tried (each a keyed draw): the first whose most-shared noun is held by
    ``want`` orders wins, else the best seen; None sends the caller to a plain draw.
    """
    best: tuple[int, str, pl.DataFrame, list[dict[str, Any]], str] | None = None
    for _ in range(CLASH_TRIES):
        user_id = pick(rng, pool)
        visible = ctx.orders_of(user_id).tail(visible_n)
        rows = list(visible.iter_rows(named=True))
        shared: dict[str, list[dict[str, Any]]] = {}
        for order in rows:
            for noun in _listed_nouns(ctx, order["order_id"]):
                shared.setdefault(noun, []).append(order)
        shared = {n: os for n, os in shared.items() if len(os) > 1}
        if not shared:
            continue
        top = max(len(os) for os in shared.values())
        noun = pick(rng, sorted(n for n, os in shared.items() if len(os) == top))
        if best is None or top > best[0]:
            best = (top, user_id, visible, shared[noun], noun)
        if top >= want:
            break
    if best is None:
        return None
    _, user_id, visible, holders, noun = best
    return user_id, visible, pick(rng, holders), noun


def _listed_nouns(ctx: GenContext, order_id: str) -> list[str]:
    """Nouns of an order's items that its listing shows (sorted, for stable draws)."""
    found = {
        noun
        for title, noun in ctx.order_items(order_id)
        if noun is not None and noun in title[:_LISTED_CHARS].lower()
    }
    return sorted(found)


def _item_noun(ctx: GenContext, target: dict[str, Any], rng: np.random.Generator) -> str:
    """The noun of one of the target's items, as its listing shows it (what a customer says)."""
    nouns = _listed_nouns(ctx, target["order_id"])
    if not nouns:
        raise Redraw("no listed item of the order has a taxonomy noun")
    return pick(rng, nouns)


def _spoken_item(
    ctx: GenContext, target: dict[str, Any], noun: str, d: int, rng: np.random.Generator
) -> tuple[str, tuple[str, ...] | None]:
    """What the customer calls the item, and the category path it means (None: as listed).

    With probability ``p_item_paraphrase(d)`` it is another noun of the item's taxonomy
    category sharing no word with the listed title ("plushie" for a "Plush Toy"), or else the
    deepest category on its path whose name shares none ("school supplies" for a "Spiral
    Notebook"): then every listed order with an item of that kind holds it.
    """
    if rng.random() >= p_item_paraphrase(d):
        return noun, None
    product = _product_with(ctx, target["order_id"], noun)
    path = _paths(ctx)[product["category_id"]]
    other = _other_word(ctx, product, noun, rng)
    if other is not None:
        return other, path
    title = set(_words(product["title"]))
    for depth in range(len(path) - 1, 0, -1):
        if not set(_words(path[depth])) & title:
            return path[depth].lower(), path[: depth + 1]
    return noun, None


def _paths(ctx: GenContext) -> dict[str, tuple[str, ...]]:
    """Leaf category id → its path (department first), built once per taxonomy."""
    taxonomy = ctx.store_taxonomy
    held = _PATHS.get(id(taxonomy))
    if held is None or held[0] is not taxonomy:
        held = (taxonomy, {c.id: tuple(c.path) for _, c in taxonomy.leaves()})
        _PATHS[id(taxonomy)] = held
    return held[1]


#: Per-taxonomy path tables (the taxonomy object is kept, so its id is not reused).
_PATHS: dict[int, tuple[Any, dict[str, tuple[str, ...]]]] = {}


def _product_with(ctx: GenContext, order_id: str, noun: str) -> dict[str, Any]:
    """The order's product whose listed title shows ``noun``."""
    return next(
        p
        for p in (ctx.store.product(pid) for pid in ctx.lines_of(order_id)["product_id"])
        if noun in p["title"][:_LISTED_CHARS].lower()
    )


def _other_word(
    ctx: GenContext, product: dict[str, Any], noun: str, rng: np.random.Generator
) -> str | None:
    """Another noun of the product's category sharing no word with its title, or None."""
    title_words = set(_words(product["title"]))
    cat = next(c for _, c in ctx.store_taxonomy.leaves() if c.id == product["category_id"])
    others = sorted(
        {n.lower() for n in cat.nouns if not set(_words(n)) & title_words} - {noun},
        key=lambda n: (len(n), n),
    )
    return pick(rng, others) if others else None


def _words(text: str) -> list[str]:
    return [w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower())]


def _refers(
    ctx: GenContext, order_id: str, words: tuple[str, ...], kind: tuple[str, ...] | None
) -> bool:
    """Whether the customer's words could mean an item of the order (by word or by kind)."""
    paths = _paths(ctx) if kind else {}
    for pid in ctx.lines_of(order_id)["product_id"]:
        product = ctx.store.product(pid)
        title = product["title"].lower()
        if any(w in title for w in words):
            return True
        if kind and paths[product["category_id"]][: len(kind)] == kind:
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


def order_hint(
    ctx: GenContext,
    target: dict[str, Any],
    holders: list[dict[str, Any]],
    noun: str,
    d: int,
    rng: np.random.Generator,
) -> tuple[str, str]:
    """One open kind of detail that singles ``target`` out among ``holders``, and its words.

    Shared with ``returns`` (same-item lines across orders). ``holders`` are order records
    (placed_at, total, status, ship_method, order_id) and include ``target``.

    Raises:
        Redraw: no open kind singles the target out (e.g. two holders placed the same day).
    """
    others = [o for o in holders if o["order_id"] != target["order_id"]]
    said = _Said(ctx, target, others, noun, rng, rng.random() < p_item_paraphrase(d))
    options = [(k, p) for k in _open_kinds(d) if (p := said.words(k))]
    if not options:
        raise Redraw("no detail tells the same-item orders apart")
    return pick(rng, options)


class _Said:
    """The customer's words for each kind of detail about ``target`` against ``others``.

    ``paraphrase`` names another item of the order (``co_item``) by another word of its
    category, as :func:`_spoken_item` does for the item itself.
    """

    def __init__(
        self,
        ctx: GenContext,
        target: dict[str, Any],
        others: list[dict[str, Any]],
        noun: str,
        rng: np.random.Generator,
        paraphrase: bool,
    ) -> None:
        self.ctx, self.target, self.others, self.noun = ctx, target, others, noun
        self.rng, self.paraphrase = rng, paraphrase

    def words(self, kind: str) -> str | None:
        """The words for detail ``kind``, or None when it does not single out the target."""
        return getattr(self, f"_{kind}")()

    def _day(self) -> str | None:
        day = self.target["placed_at"].date()
        return None if any(o["placed_at"].date() == day for o in self.others) else "day"

    def _month(self) -> str | None:
        placed = self.target["placed_at"]
        key = (placed.year, placed.month)
        if any((o["placed_at"].year, o["placed_at"].month) == key for o in self.others):
            return None
        return f"the one I placed in {placed:%B}"

    def _recency(self) -> str | None:
        placed = self.target["placed_at"]
        if all(o["placed_at"] < placed for o in self.others):
            return "the most recent one"
        if all(o["placed_at"] > placed for o in self.others):
            return "the earliest one"
        return None

    def _position(self) -> str | None:
        """A middle one of three or more holders, counted from the newest."""
        newer = sum(o["placed_at"] > self.target["placed_at"] for o in self.others)
        older = sum(o["placed_at"] < self.target["placed_at"] for o in self.others)
        if newer == 0 or older == 0 or newer + older != len(self.others):
            return None
        return f"the {_ORDINALS[newer]} most recent one"

    def _co_item(self) -> str | None:
        """Another item of the order, by its listed noun or (``paraphrase``) by its kind."""
        if self.paraphrase:
            return self._co_kind()
        ctx, target, noun = self.ctx, self.target, self.noun
        for other in _listed_nouns(ctx, target["order_id"]):
            clear = other != noun and noun not in other and other not in noun
            if clear and not any(_holds(ctx, o["order_id"], other) for o in self.others):
                return f"the one that also had the {other}"
        return None

    def _co_kind(self) -> str | None:
        """Another item of the order named by a category it belongs to, as people file things.

        The deepest level of the item's category path ("Notebooks", "School Supplies") whose
        name shares no word with any same-item order's titles (so only meaning links the two)
        and under which no other same-item order has an item.
        """
        ctx = self.ctx
        paths = _paths(ctx)

        def products(order_id: str) -> list[dict[str, Any]]:
            return [ctx.store.product(pid) for pid in ctx.lines_of(order_id)["product_id"]]

        mine = products(self.target["order_id"])
        theirs = [p for o in self.others for p in products(o["order_id"])]
        seen = {w for p in mine + theirs for w in _words(p["title"])}
        for product in mine:
            if self.noun in product["title"].lower():
                continue
            path = paths[product["category_id"]]
            for depth in range(len(path) - 1, 0, -1):
                name = path[depth]
                if set(_words(name)) & seen or any(
                    paths[p["category_id"]][: depth + 1] == path[: depth + 1] for p in theirs
                ):
                    continue
                return f"the one that also had some {name.lower()} in it"
        return None

    def _price_rank(self) -> str | None:
        total = round(self.target["total"], 2)
        n = len(self.others)
        if all(round(o["total"], 2) > total for o in self.others):
            return "the cheaper one" if n == 1 else "the cheapest one"
        if all(round(o["total"], 2) < total for o in self.others):
            return "the more expensive one" if n == 1 else "the most expensive one"
        return None

    def _total(self) -> str | None:
        total = round(self.target["total"], 2)
        if any(round(o["total"], 2) == total for o in self.others):
            return None
        return f"the one that came to ${total:.2f}"

    def _arrival(self) -> str | None:
        arrived = self.target["status"] == "delivered"
        if self.target["status"] == "cancelled" or any(
            (o["status"] == "delivered") == arrived or o["status"] == "cancelled"
            for o in self.others
        ):
            return None
        return "the one that already arrived" if arrived else "the one that hasn't arrived yet"

    def _shipping(self) -> str | None:
        method = self.target["ship_method"]
        if method not in SHIP_WORDS or any(o["ship_method"] == method for o in self.others):
            return None
        return SHIP_WORDS[method]


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
        if goal["hint_kind"] in DETAIL_KINDS:  # only the details tell: open every holder
            looks = [call("order_get_details", order_id=oid) for oid in goal["holder_ids"]]
            for turn in chunked(looks, task.axis("B_tool")):  # noqa: UP028  (send() needs a generator)
                yield turn
        else:
            yield [call("order_get_details", order_id=goal["order_id"])]
    yield answer(goal)
