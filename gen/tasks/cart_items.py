"""Drawing and describing cart items: the per-catalog index, item words, the visit history.

Split from :mod:`shopgen.gen.tasks.cart` (the task's docstring is there): an item is a product
the customer can single out by words alone (brand, a product-line word, the noun, and key
attributes when needed), in a variant whose attribute values single it out too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.schedules import p_history_clash
from shopgen.gen.tasks.base import GenContext, Redraw, per_root, pick, words

#: How the customer says when they looked at a product → how long ago, in hours.
SEEN_WHEN: dict[str, int] = {
    "this morning": 3,
    "yesterday": 26,
    "two days ago": 50,
    "three days ago": 74,
    "last week": 170,
}
#: Calendar days before today each phrase names ("last week" is vague: :func:`seen_fits`).
SEEN_DAY: dict[str, int] = {phrase: hours // 24 for phrase, hours in SEEN_WHEN.items()}
#: Same-kind views a clashing history item gets at other times, at most.
MAX_CLASHES = 2
#: Products drawn before giving up on an item (the caller then redraws the task).
TRIES = 16


class CartIndex:
    """Per-catalog lookups the cart generator needs, built once per :class:`GenContext`."""

    def __init__(self, ctx: GenContext) -> None:
        self.ctx = ctx

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The columns the generator reads, one row per product (row = catalog row)."""
        return self.ctx.products.select(
            "row",
            "product_id",
            "title",
            "brand",
            "category_id",
            "n_variants",
            "stock_qty",
            "key_attrs",
        )

    @cached_property
    def word_rows(self) -> dict[str, np.ndarray]:
        """Title word → sorted rows of the products whose title holds it (an inverted index).

        The posting lists are slices of one flat array (converting each list to NumPy on its
        own took as long as building the index).
        """
        grouped = (
            self.frame.select(
                "row",
                w=pl.col("title").str.to_lowercase().str.extract_all(r"[a-z0-9]+").list.unique(),
            )
            .explode("w")
            .group_by("w")
            .agg(pl.col("row").sort())
        )
        flat = grouped["row"].explode().to_numpy().astype(np.int64)
        ends = np.cumsum(grouped["row"].list.len().to_numpy()).tolist()
        starts = [0, *ends[:-1]]
        return {w: flat[a:b] for w, a, b in zip(grouped["w"].to_list(), starts, ends, strict=True)}

    def matching(self, desc: str, within: np.ndarray | None = None) -> np.ndarray:
        """Rows of every product whose title holds all the words of ``desc``.

        ``within`` (sorted rows, e.g. an earlier ``matching`` result) narrows the answer to
        those rows: ``matching(a + " " + b) == matching(b, within=matching(a))``, computed from
        the few rows of ``within`` instead of every posting list again.
        """
        postings = self.word_rows
        hits = [postings.get(w) for w in set(words(desc))]
        if any(hit is None for hit in hits) or (not hits and within is None):
            return np.zeros(0, dtype=np.int64)
        hits.sort(key=len)
        rows = hits.pop(0) if within is None else within
        for hit in hits:
            if rows.size == 0:
                break
            rows = intersect_sorted(rows, hit)
        return rows

    @cached_property
    def pools(self) -> dict[str, np.ndarray]:
        """Rows in stock, split into products sold in several variants and the others."""
        f = self.frame.filter(pl.col("stock_qty") >= 5)
        return {
            "variant": f.filter(pl.col("n_variants") >= 2)["row"].to_numpy(),
            "plain": f.filter(pl.col("n_variants") <= 1)["row"].to_numpy(),
            "any": f["row"].to_numpy(),
        }

    @cached_property
    def category_rows(self) -> dict[str, np.ndarray]:
        """Category id → its product rows (look-alikes to mark out of stock)."""
        grouped = self.frame.group_by("category_id").agg(pl.col("row").sort())
        return {
            c: np.asarray(r, dtype=np.int64)
            for c, r in zip(grouped["category_id"].to_list(), grouped["row"].to_list(), strict=True)
        }

    @cached_property
    def leaf_words(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """Category id → (product-line words, nouns longest first) of the taxonomy."""
        out = {}
        for dept, cat in self.ctx.store_taxonomy.leaves():
            lines = tuple(cat.lines or dept.lines)
            out[cat.id] = (lines, tuple(sorted(cat.nouns, key=len, reverse=True)))
        return out

    @cached_property
    def ids(self) -> list[str]:
        """Product id of each frame row (cheap membership tests without building records)."""
        return self.frame["product_id"].to_list()

    @cached_property
    def _columns(self) -> dict[str, list[Any]]:
        return {name: self.frame[name].to_list() for name in self.frame.columns}

    def record(self, row: int) -> dict[str, Any]:
        """One product row as a dict (``frame.row(row, named=True)`` from cached columns).

        Records are read for every product a draw looks at; a DataFrame row read costs tens
        of microseconds, plain list indexing well under one.
        """
        i = int(row)
        return {name: column[i] for name, column in self._columns.items()}

    def description(self, product: dict[str, Any]) -> tuple[str, str] | None:
        """:func:`describe` of ``product``, remembered per product row.

        A description depends on the catalog alone, and draws keep meeting the same products
        across tasks; each fresh one costs several posting-list intersections.
        """
        row = product["row"]
        if row not in self._descriptions:
            self._descriptions[row] = describe(self, product)
        return self._descriptions[row]

    @cached_property
    def _descriptions(self) -> dict[int, tuple[str, str] | None]:
        return {}


def intersect_sorted(small: np.ndarray, big: np.ndarray) -> np.ndarray:
    """``np.intersect1d(small, big, assume_unique=True)`` of sorted unique arrays, ``big`` non-empty.

    Binary-searches each element of ``small`` (best the smaller) in ``big``, where intersect1d
    sorts both together: posting lists of common words (brands) run to thousands of rows.
    """
    at = np.minimum(big.searchsorted(small), big.size - 1)  # the method: no fromnumeric wrapper
    return small[big[at] == small]


def cart_index(ctx: GenContext) -> CartIndex:
    """The :class:`CartIndex` of ``ctx``'s root (made on first use, shared by every task)."""
    return per_root(ctx, CartIndex)


@dataclass(kw_only=True)
class Item:
    """One wanted cart line while the task is drawn."""

    product: dict[str, Any]
    desc: str
    noun: str
    variant: dict[str, Any] | None
    quantity: int
    seen: str | None = None

    @property
    def product_id(self) -> str:
        """The product's id."""
        return self.product["product_id"]

    def tokens(self) -> set[str]:
        """The words the customer uses for this item."""
        return set(words(self.desc))


def describe(index: CartIndex, product: dict[str, Any]) -> tuple[str, str] | None:
    """Words that find ``product`` and no other: ``(description, noun)``, or None.

    Brand + the title's product-line word + the noun; when another product's title holds the
    same words, a key attribute is added, then a second one.
    """
    lines, nouns = index.leaf_words[product["category_id"]]
    title = product["title"]
    title_words = set(words(title))
    noun = next(
        (n for n in nouns if set(words(n)) <= title_words and n.lower() in title.lower()), None
    )
    rest = title[len(product["brand"]) :] if title.startswith(product["brand"]) else title
    line = next((w for w in rest.split() if w in lines), None)
    if noun is None or line is None or line.lower() in words(product["brand"]):
        return None
    base = [product["brand"], line]
    named = index.matching(" ".join([*base, noun]))  # every description narrows these rows
    for extra in ([], *[[a] for a in product["key_attrs"][:2]], product["key_attrs"][:2]):
        desc = " ".join([*base, *extra, noun.lower()])
        if not set(words(desc)) <= title_words:
            continue
        if index.matching(" ".join(extra), within=named).tolist() == [product["row"]]:
            return desc, noun.lower()
    return None


def pick_variant(
    ctx: GenContext, product: dict[str, Any], quantity: int, rng: np.random.Generator
) -> dict[str, Any] | None:
    """A variant with stock for ``quantity`` whose attribute values single it out.

    None unless another variant has that stock too: where the wanted one alone could fill
    the order, the stock list would say which it is, and a variant the customer left out
    would need no question.
    """
    variants = ctx.store.variants_of(product["product_id"])
    stocked = [v for v in variants if v["stock_qty"] >= quantity]
    if len(stocked) < 2:
        return None
    combos = [tuple(sorted(v["attributes"].items())) for v in variants]
    good = [
        v
        for v, c in zip(variants, combos, strict=True)
        if v["stock_qty"] >= quantity and v["attributes"] and combos.count(c) == 1
    ]
    return pick(rng, good) if good else None


def draw_item(
    ctx: GenContext,
    index: CartIndex,
    rng: np.random.Generator,
    taken: list[Item],
    *,
    kind: str,
    quantity: int,
) -> Item:
    """One item of a new category and brand whose words no other item shares."""
    pool = index.pools[kind]
    used_words = set().union(*(it.tokens() for it in taken)) if taken else set()
    used_cats = {it.product["category_id"] for it in taken}
    used_brands = {it.product["brand"] for it in taken}
    for _ in range(TRIES):
        product = index.record(pool[int(rng.integers(pool.size))])
        if product["category_id"] in used_cats or product["brand"] in used_brands:
            continue
        described = index.description(product)
        if described is None or set(words(described[0])) & used_words:
            continue
        variant = None
        if product["n_variants"] >= 2:
            variant = pick_variant(ctx, product, quantity, rng)
            if variant is None:
                continue
        elif product["n_variants"] == 1:
            variant = ctx.store.variants_of(product["product_id"])[0]
        return Item(
            product=product,
            desc=described[0],
            noun=described[1],
            variant=variant,
            quantity=quantity,
        )
    raise Redraw("no describable product for a cart item")


def seen_fits(phrase: str, viewed_at: datetime, now: datetime) -> bool:
    """Whether a view at ``viewed_at`` is one the customer could mean by ``phrase`` at ``now``.

    "this morning", "yesterday", "two/three days ago" name one calendar day. "last week" is
    read both ways a customer may mean it, so no reading makes a rival view fit: about a week
    ago (4–13 days), or any day of the previous calendar week (on a Monday, yesterday too).
    """
    days = (now.date() - viewed_at.date()).days
    if phrase != "last week":
        return days == SEEN_DAY[phrase] and viewed_at <= now
    monday = now.date() - timedelta(days=now.weekday())
    return 4 <= days <= 13 or monday - timedelta(days=7) <= viewed_at.date() < monday


def history_matches(
    history: list[dict[str, Any]], noun: str, phrase: str, now: datetime
) -> list[str]:
    """Ids of the views of ``noun``'s kind whose time fits ``phrase``: one when the reference works.

    A title of that kind holds the noun's words, or the noun inside a word ("lamps").
    """
    kind = set(words(noun))
    return [
        v["product_id"]
        for v in history
        if (kind <= set(words(v["title"])) or noun.lower() in v["title"].lower())
        and seen_fits(phrase, datetime.fromisoformat(v["viewed_at"]), now)
    ]


def visit_history(
    ctx: GenContext, index: CartIndex, items: list[Item], d: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """The visit history: history items at their times, plus views of other categories.

    With ``p_history_clash(d)`` a history item's kind was also viewed at other times
    (:func:`clash_views`): only the customer's time reference then picks the right view.
    """
    targets = [it for it in items if it.seen is not None]
    if not targets:
        return []
    cats = {it.product["category_id"] for it in items}
    nouns = [set(words(it.noun)) for it in targets]
    views = [(SEEN_WHEN[it.seen], it.product) for it in targets]
    pool = index.pools["any"]
    want = int(rng.integers(2, 6))
    for _ in range(want * 4):
        if len(views) >= len(targets) + want:
            break
        p = index.record(pool[int(rng.integers(pool.size))])
        tw = set(words(p["title"]))
        if p["category_id"] in cats or any(n <= tw for n in nouns):
            continue
        cats.add(p["category_id"])
        views.append((int(rng.integers(1, 400)), p))
    now = ctx.now()
    for it in targets:
        if rng.random() < p_history_clash(d):
            views += clash_views(index, it, items, views, now, rng)
    views.sort(key=lambda v: (v[0], v[1]["product_id"]))
    history = [
        {
            "product_id": p["product_id"],
            "title": p["title"],
            "viewed_at": (now - timedelta(hours=h)).isoformat(timespec="minutes"),
        }
        for h, p in views
    ]
    for it in targets:
        if history_matches(history, it.noun, it.seen, now) != [it.product_id]:
            raise Redraw("another view of a history item's kind fits the time it names")
    return history


def clash_views(
    index: CartIndex,
    item: Item,
    items: list[Item],
    views: list[tuple[int, dict[str, Any]]],
    now: datetime,
    rng: np.random.Generator,
) -> list[tuple[int, dict[str, Any]]]:
    """Views of other products of ``item``'s kind at times its reference rules out.

    Each is another product of its category whose title holds its noun (and no other history
    item's), viewed when the customer would say another :data:`SEEN_WHEN` phrase, one the
    item's own phrase does not fit (:func:`seen_fits`) and no other view of that kind holds:
    so the noun alone no longer finds it, and its phrase always does.
    """
    kind = set(words(item.noun))
    others = [set(words(it.noun)) for it in items if it.seen is not None and it is not item]
    taken = {it.product_id for it in items} | {p["product_id"] for _, p in views}
    busy = {h for h, p in views if kind <= set(words(p["title"]))}
    hours = [
        h
        for phrase, h in sorted(SEEN_WHEN.items(), key=lambda x: x[1])
        if h not in busy and not seen_fits(item.seen, now - timedelta(hours=h), now)
    ]
    rows = index.category_rows[item.product["category_id"]]
    out: list[tuple[int, dict[str, Any]]] = []
    want = min(len(hours), int(rng.integers(1, MAX_CLASHES + 1)))
    for j in rng.permutation(rows.size)[: 4 * TRIES].tolist():
        if len(out) >= want:
            break
        p = index.record(rows[j])
        tw = set(words(p["title"]))
        if p["product_id"] in taken or not kind <= tw or any(n <= tw for n in others):
            continue
        taken.add(p["product_id"])
        h = hours.pop(int(rng.integers(len(hours))))
        out.append((h, p))
    return out
