"""How a customer tells apart orders that hold the same kind of item (status and returns).

At high d several listed orders hold the item the customer names, and only a detail they add
singles one out, from exact to relational as d grows (``order_hint_level(d)``,
:data:`HINT_KINDS`): the day placed, the month, the total, "the most recent one", whether it
already arrived, another item in it (by its category at high d), "the cheapest one", its place
among them ("the second most recent of my orders with that item"), the shipping chosen (only ``order_get_details``
shows it). :func:`order_hint` picks an open kind that singles the target out and its words;
the environments decide when to draw such orders and how the agent must ask.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from shopgen.gen.schedules import order_hint_level, p_item_paraphrase
from shopgen.gen.tasks.base import GenContext, Redraw, pick
from shopgen.schemas.taxonomy import Category

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

#: How a customer remembers the shipping they chose (``order_get_details`` ship_method).
SHIP_WORDS = {
    "standard": "the one I sent with plain standard shipping",
    "expedited": "the one I paid extra to expedite",
    "two_day": "the one I picked two-day shipping for",
    "next_day": "the one I paid for next-day delivery",
}
#: "the second most recent of my orders with that item", … (``position``: a middle one of
#: three or more holders).
_ORDINALS = ("", "second", "third", "fourth", "fifth", "sixth")

#: Characters of a title an order listing shows (``shopgen.env.tools.orders.TITLE_CHARS``):
#: the named item must be visible there, so the agent can see which orders hold it.
LISTED_CHARS = 59


def listed_nouns(ctx: GenContext, order_id: str) -> list[str]:
    """Nouns of an order's items that its listing shows (sorted, for stable draws)."""
    found = {
        noun
        for title, noun in ctx.order_items(order_id)
        if noun is not None and noun in title[:LISTED_CHARS].lower()
    }
    return sorted(found)


def category_paths(ctx: GenContext) -> dict[str, tuple[str, ...]]:
    """Leaf category id → its path (department first), built once per taxonomy."""
    return _leaf_tables(ctx)[0]


def leaf_categories(ctx: GenContext) -> dict[str, Category]:
    """Leaf category id → its category, built once per taxonomy (``leaves()`` is a list)."""
    return _leaf_tables(ctx)[1]


def _leaf_tables(ctx: GenContext) -> tuple[dict[str, tuple[str, ...]], dict[str, Category]]:
    taxonomy = ctx.store_taxonomy
    held = _LEAVES.get(id(taxonomy))
    if held is None or held[0] is not taxonomy:
        leaves = [c for _, c in taxonomy.leaves()]
        tables = ({c.id: tuple(c.path) for c in leaves}, {c.id: c for c in leaves})
        held = _LEAVES[id(taxonomy)] = (taxonomy, tables)
    return held[1]


#: Per-taxonomy leaf tables (the taxonomy object is kept, so its id is not reused).
_LEAVES: dict[int, tuple[Any, tuple[dict[str, tuple[str, ...]], dict[str, Category]]]] = {}


def title_words(text: str) -> list[str]:
    """Lower-case words with a plural ``s`` stripped (how titles and category names compare)."""
    return [w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower())]


def open_kinds(d: int) -> tuple[str, ...]:
    """The kinds of telling detail a customer remembers at level d (see :data:`HINT_KINDS`)."""
    level = order_hint_level(d)
    return HINT_KINDS[max(0, level + 1 - HINT_WINDOW) : level + 1]


def _holds(ctx: GenContext, order_id: str, noun: str) -> bool:
    return any(noun in title.lower() for title, _ in ctx.order_items(order_id))


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
    options = [(k, p) for k in open_kinds(d) if (p := said.words(k))]
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

    def _newer_older(self) -> tuple[int, int]:
        """Other holders placed on a later day and on an earlier one.

        Ranks count days, all the tools show ("placed_on"): two orders of one day have no
        order the agent can see, whatever their hours.
        """
        placed = self.target["placed_at"].date()
        newer = sum(o["placed_at"].date() > placed for o in self.others)
        older = sum(o["placed_at"].date() < placed for o in self.others)
        return newer, older

    def _recency(self) -> str | None:
        """The newest or the oldest by the day placed."""
        newer, older = self._newer_older()
        if older == len(self.others):
            return "the most recent one"
        if newer == len(self.others):
            return "the earliest one"
        return None

    def _position(self) -> str | None:
        """A middle one of three or more holders, counted from the newest by day placed.

        The words say the rank counts the orders holding the item: "the second most recent
        one" also reads as the second most recent order of all, which may hold the item too
        (the extremes have no such reading: the newest order of all, if it holds the item, is
        the newest holder).
        """
        newer, older = self._newer_older()
        if newer == 0 or older == 0 or newer + older != len(self.others):
            return None
        return f"the {_ORDINALS[newer]} most recent of my orders with that item"

    def _co_item(self) -> str | None:
        """Another item of the order, by its listed noun or (``paraphrase``) by its kind."""
        if self.paraphrase:
            return self._co_kind()
        ctx, target, noun = self.ctx, self.target, self.noun
        for other in listed_nouns(ctx, target["order_id"]):
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
        paths = category_paths(ctx)

        def products(order_id: str) -> list[dict[str, Any]]:
            return [
                ctx.store.product(pid) for pid in ctx.store.lines_columns(order_id, "product_id")[0]
            ]

        mine = products(self.target["order_id"])
        theirs = [p for o in self.others for p in products(o["order_id"])]
        seen = {w for p in mine + theirs for w in title_words(p["title"])}
        for product in mine:
            if self.noun in product["title"].lower():
                continue
            path = paths[product["category_id"]]
            for depth in range(len(path) - 1, 0, -1):
                name = path[depth]
                if set(title_words(name)) & seen or any(
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
