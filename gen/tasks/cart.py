"""cart — "put these things in my cart": the seed workflow of the wufus-CART-8B model.

Customer wants:
    ``cart_items(d)`` distinct products in the cart, each in a quantity and, for products sold
    in several variants, in one variant (colour, size…). Most items are described by brand, a
    distinctive title word and a noun ("Bryant Palette yarn") — words that single the product
    out of the whole catalog; some (``p_history_ref(d)``) only by a noun and when the customer
    looked at it ("the yarn I looked at yesterday"), which the visit history resolves. Variant
    values and quantities may be left out of the first message (``p_missing``) and must be asked.
Tools offered:
    the seed six — catalog_search, catalog_get_variants, cart_add, cart_view,
    user_get_visit_history, ask_user — plus catalog_get_product, cart_remove and
    cart_update_quantity (to fix a cart after a change of mind).
Hidden goal:
    ``{"cart": [{product_id, variant_id, quantity}], "items": [...]}``: the FINAL cart after any
    switch (variant_id is the only variant's id for single-variant products, None for products
    without variants); ``items`` keeps per-item details the oracle decides with.
Reward and is_correct:
    ``verifiers.cart`` compares the final cart with the goal unit by unit over (product,
    variant): exact precision/recall as fractions, r_task = 2·F1 − 1 (−1 for an empty cart);
    correct iff the cart equals the goal exactly.
Difficulty axes used:
    T_max, B_tool (turn and call budgets), p_missing (omitted variants/quantities), p_noise,
    top_k and eps_rank (what search shows), p_oos (sibling variants and look-alike products out
    of stock), p_switch (change_variant, swap_item, add_item), and the schedules cart_items,
    p_variant, p_quantity_gt1, p_history_ref.
Episode end:
    the first assistant message without a tool call, or T_max.
Version history:
    1.0 — first version.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import cart_items, p_history_ref, p_quantity_gt1, p_variant
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.switches import Switch, plan_switch
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick, shown_ids
from shopgen.schemas.task import TaskRow

_WORD = re.compile(r"[a-z0-9]+")
#: How the customer says when they looked at a product → how long ago, in hours.
SEEN_WHEN: dict[str, int] = {
    "this morning": 3,
    "yesterday": 26,
    "two days ago": 50,
    "three days ago": 74,
    "last week": 170,
}
#: Products drawn before giving up on an item (the caller then redraws the task).
_TRIES = 16


def words(text: str) -> tuple[str, ...]:
    """Lower-case alphanumeric words: the unit of the uniqueness check and of search."""
    return tuple(_WORD.findall(text.lower()))


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
        """Title word → sorted rows of the products whose title holds it (an inverted index)."""
        exploded = (
            self.frame.select(
                "row", pl.col("title").str.to_lowercase().str.extract_all(r"[a-z0-9]+").alias("w")
            )
            .explode("w")
            .unique()
            .group_by("w")
            .agg(pl.col("row").sort())
        )
        return {
            w: np.asarray(rows, dtype=np.int64)
            for w, rows in zip(exploded["w"].to_list(), exploded["row"].to_list(), strict=True)
        }

    def matching(self, desc: str) -> np.ndarray:
        """Rows of every product whose title holds all the words of ``desc``."""
        rows: np.ndarray | None = None
        for w in sorted(set(words(desc)), key=lambda x: len(self.word_rows.get(x, ()))):
            hit = self.word_rows.get(w)
            if hit is None:
                return np.zeros(0, dtype=np.int64)
            rows = hit if rows is None else np.intersect1d(rows, hit, assume_unique=True)
            if rows.size == 0:
                break
        return rows if rows is not None else np.zeros(0, dtype=np.int64)

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

    def record(self, row: int) -> dict[str, Any]:
        """One product row as a dict."""
        return self.frame.row(int(row), named=True)


_INDEXES: weakref.WeakKeyDictionary[GenContext, CartIndex] = weakref.WeakKeyDictionary()


def cart_index(ctx: GenContext) -> CartIndex:
    """The :class:`CartIndex` of ``ctx`` (made on first use, shared by every task)."""
    index = _INDEXES.get(ctx)
    if index is None:
        index = _INDEXES[ctx] = CartIndex(ctx)
    return index


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
    for extra in ([], *[[a] for a in product["key_attrs"][:2]], product["key_attrs"][:2]):
        desc = " ".join([*base, *extra, noun.lower()])
        if not set(words(desc)) <= title_words:
            continue
        if index.matching(desc).tolist() == [product["row"]]:
            return desc, noun.lower()
    return None


def _pick_variant(
    ctx: GenContext, product: dict[str, Any], quantity: int, rng: np.random.Generator
) -> dict[str, Any] | None:
    """A variant with stock for ``quantity`` whose attribute values single it out."""
    variants = ctx.store.variants_of(product["product_id"])
    combos = [tuple(sorted(v["attributes"].items())) for v in variants]
    good = [
        v
        for v, c in zip(variants, combos, strict=True)
        if v["stock_qty"] >= quantity and v["attributes"] and combos.count(c) == 1
    ]
    return pick(rng, good) if good else None


def _draw_item(
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
    for _ in range(_TRIES):
        product = index.record(pool[int(rng.integers(pool.size))])
        if product["category_id"] in used_cats or product["brand"] in used_brands:
            continue
        described = describe(index, product)
        if described is None or set(words(described[0])) & used_words:
            continue
        variant = None
        if product["n_variants"] >= 2:
            variant = _pick_variant(ctx, product, quantity, rng)
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


def _quantity(d: int, rng: np.random.Generator) -> int:
    return int(rng.integers(2, 6)) if rng.random() < p_quantity_gt1(d) else 1


def _item_slots(i: int, it: Item, wants_variant: bool) -> list[Slot]:
    out = [make_slot("cart", f"items.{i}.desc", it.desc, required=True)]
    if it.seen is not None:
        out.append(make_slot("cart", f"items.{i}.seen", it.seen, required=True))
    if wants_variant and it.variant is not None:
        for axis, value in sorted(it.variant["attributes"].items()):
            out.append(make_slot("cart", f"items.{i}.variant.{axis}", str(value)))
    out.append(make_slot("cart", f"items.{i}.qty", it.quantity))
    return out


def _history(
    ctx: GenContext, index: CartIndex, items: list[Item], rng: np.random.Generator
) -> list[dict[str, Any]]:
    """The visit history: history items at their times, plus views of other categories."""
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
    views.sort(key=lambda v: (v[0], v[1]["product_id"]))
    now = ctx.now()
    return [
        {
            "product_id": p["product_id"],
            "title": p["title"],
            "viewed_at": (now - timedelta(hours=h)).isoformat(timespec="minutes"),
        }
        for h, p in views
    ]


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw the items, how each is described, the history, out-of-stock look-alikes, a switch."""
    index = cart_index(ctx)
    items: list[Item] = []
    wants: list[bool] = []
    for _ in range(cart_items(d)):
        needs_variant = bool(rng.random() < p_variant(d))
        it = _draw_item(
            ctx,
            index,
            rng,
            items,
            kind="variant" if needs_variant else "plain",
            quantity=_quantity(d, rng),
        )
        if rng.random() < p_history_ref(d):
            it.seen = pick(rng, sorted(SEEN_WHEN))
            it.desc = it.noun
        items.append(it)
        wants.append(needs_variant)
    slots = [s for i, it in enumerate(items) for s in _item_slots(i, it, wants[i])]
    switch, extra = _switch(ctx, index, items, slots, axes, rng)
    final = _apply(ctx, items, switch, extra)
    oos = _out_of_stock(ctx, index, items, final, axes, rng)
    episode = {
        "user_id": pick(rng, ctx.user_ids),
        "today": ctx.today.isoformat(),
        "visit_history": _history(ctx, index, items, rng),
        "out_of_stock": oos,
    }
    facts = {}
    if switch is not None and switch.kind == "add_item":
        facts[f"items.{len(items)}.qty"] = {"value": 1, "kind": "quantity", "label": "quantity"}
    return Draft(slots=tuple(slots), goal=_goal(final), episode=episode, switch=switch, facts=facts)


def _switch(
    ctx: GenContext,
    index: CartIndex,
    items: list[Item],
    slots: list[Slot],
    axes: Theta,
    rng: np.random.Generator,
) -> tuple[Switch | None, dict[str, Item]]:
    """A change of mind revealed after the first turn, with the items it would bring in."""
    if rng.random() >= float(axes.p_switch):
        return None, {}
    names = {s.name for s in slots}
    options: dict[str, dict[str, list[Any]]] = {}
    extra: dict[str, Item] = {}
    for i, it in enumerate(items):
        for axis in sorted((it.variant or {}).get("attributes", {})):
            name = f"items.{i}.variant.{axis}"
            values = _other_values(ctx, it, axis) if name in names else []
            if values:
                options.setdefault("change_variant", {})[name] = values
        if it.seen is None and it.product["n_variants"] == 0:
            try:
                alt = _draw_item(ctx, index, rng, items, kind="plain", quantity=it.quantity)
            except Redraw:
                continue
            if alt.product["n_variants"] == 0:
                extra[f"items.{i}.desc"] = alt
                options.setdefault("swap_item", {})[f"items.{i}.desc"] = [alt.desc]
    try:
        new = _draw_item(ctx, index, rng, items, kind="plain", quantity=1)
        name = f"items.{len(items)}.desc"
        extra[name] = new
        options["add_item"] = {name: [new.desc]}
    except Redraw:
        pass
    switch = plan_switch("cart", slots, p_switch=1.0, T_max=axes.T_max, rng=rng, options=options)
    # Revealed after the first turn (the gathering turn), so every oracle acts on it.
    return (replace(switch, turn=1) if switch else None), extra


def _other_values(ctx: GenContext, it: Item, axis: str) -> list[str]:
    """Values of ``axis`` the item's product has in stock with its other axes unchanged."""
    current = it.variant["attributes"]
    out = []
    variants = ctx.store.variants_of(it.product_id)
    combos = [tuple(sorted(v["attributes"].items())) for v in variants]
    for v, c in zip(variants, combos, strict=True):
        a = v["attributes"]
        same_rest = all(a.get(k) == x for k, x in current.items() if k != axis)
        unique = combos.count(c) == 1 and set(a) == set(current)
        if same_rest and unique and a.get(axis) != current[axis] and v["stock_qty"] >= it.quantity:
            out.append(str(a[axis]))
    return sorted(set(out))


def _apply(
    ctx: GenContext, items: list[Item], switch: Switch | None, extra: dict[str, Item]
) -> list[Item]:
    """The final items once the switch is applied (the goal's source)."""
    final = [replace(it) for it in items]
    if switch is None:
        return final
    for name, value in switch.changes:
        parts = name.split(".")
        i = int(parts[1])
        if switch.kind == "change_variant":
            it = final[i]
            want = {**it.variant["attributes"], parts[3]: value}
            it.variant = next(
                v
                for v in ctx.store.variants_of(it.product_id)
                if {k: str(x) for k, x in v["attributes"].items()} == want
            )
        elif switch.kind == "swap_item":
            alt = extra[name]
            final[i] = replace(alt, quantity=final[i].quantity)
        else:
            final.append(extra[name])
    return final


def _out_of_stock(
    ctx: GenContext,
    index: CartIndex,
    items: list[Item],
    final: list[Item],
    axes: Theta,
    rng: np.random.Generator,
) -> list[str]:
    """Sibling variants and look-alike products with no stock in this episode (p_oos)."""
    keep_products = {it.product_id for it in [*items, *final]}
    keep_variants = {it.variant["variant_id"] for it in [*items, *final] if it.variant}
    oos: list[str] = []
    for it in final:
        if rng.random() >= float(axes.p_oos):
            continue
        if it.product["n_variants"] >= 2:
            others = [
                v["variant_id"]
                for v in ctx.store.variants_of(it.product_id)
                if v["variant_id"] not in keep_variants
            ]
            k = min(len(others), int(rng.integers(1, 3)))
            oos += [others[j] for j in sorted(rng.choice(len(others), k, replace=False))]
        rows = index.category_rows[it.product["category_id"]]
        ids = index.ids
        alike = [r for r in rows.tolist() if ids[r] not in keep_products]
        k = min(len(alike), int(rng.integers(1, 3)))
        oos += [ids[alike[j]] for j in sorted(rng.choice(len(alike), k, replace=False))]
    return sorted(set(oos))


def _goal(final: list[Item]) -> dict[str, Any]:
    cart = [
        {
            "product_id": it.product_id,
            "variant_id": it.variant["variant_id"] if it.variant else None,
            "quantity": it.quantity,
        }
        for it in final
    ]
    details = [
        {
            "product_id": it.product_id,
            "variant_id": it.variant["variant_id"] if it.variant else None,
            "quantity": it.quantity,
            "n_variants": int(it.product["n_variants"]),
            "desc": it.desc,
            "title": it.product["title"],
            "history": it.seen is not None,
        }
        for it in final
    ]
    return {"cart": cart, "items": details}


# --- Oracle --------------------------------------------------------------------------------


@dataclass(kw_only=True)
class _Intent:
    """What the oracle knows it must put in the cart for one item, and how far it got."""

    index: int
    desc: str
    history: bool
    target: dict[str, Any]
    omitted: list[tuple[str, Any]]
    located: bool = False
    retried: bool = False
    variants_known: bool = False
    added: bool = False


def _question(desc: str, omitted: list[tuple[str, Any]]) -> str:
    """One question about every detail of an item the customer left out."""
    axes = [n.split(".")[-1].replace("_", " ") for n, _ in omitted if ".variant." in n]
    asks = [f"which {' and which '.join(axes)} would you like"] if axes else []
    if any(n.endswith(".qty") for n, _ in omitted):
        asks.append("how many units do you need")
    return f"For the {desc}: {', and '.join(asks)}?"


def _intents(
    goal: dict[str, Any], slots: dict[str, dict[str, Any]], changes: dict[str, Any]
) -> tuple[list[_Intent], list[_Intent]]:
    """The customer's items as first stated, and as they stand once the switch is said."""
    final = goal["items"]
    first, last = [], []
    n = sum(1 for name in slots if name.endswith(".desc"))
    for i in range(n):
        omitted = [
            (name, changes.get(name, s["value"]))
            for name, s in slots.items()
            if name.startswith(f"items.{i}.") and s["omitted"]
        ]
        desc = slots[f"items.{i}.desc"]["value"]
        history = f"items.{i}.seen" in slots
        first.append(_Intent(index=i, desc=desc, history=history, target={}, omitted=omitted))
    for i, target in enumerate(final):
        desc = changes.get(f"items.{i}.desc", first[i].desc if i < n else target["desc"])
        omitted = first[i].omitted if i < n else []
        last.append(
            _Intent(index=i, desc=desc, history=target["history"], target=target, omitted=omitted)
        )
    return first, last


def _plan_turn(
    intents: list[_Intent], state: dict[str, Any], budget: int
) -> list[tuple[tuple[str, dict[str, Any]], Any]]:
    """The next turn's calls (at most ``budget``), each with what it is for."""
    calls: list[tuple[tuple[str, dict[str, Any]], Any]] = []
    if any(it.history for it in intents) and not state["history"]:
        calls.append((call("user_get_visit_history"), "history"))
    for it in intents:
        if it.history:
            continue
        if it.desc not in state["searched"]:
            calls.append((call("catalog_search", query=it.desc), ("search", it.desc)))
        elif not it.located and state["searched"][it.desc] is None and not it.retried:
            query = it.target.get("title", it.desc).split(",")[0]
            calls.append((call("catalog_search", query=query), ("retry", it)))
    for it in intents:
        if it.omitted and it.index not in state["asked"]:
            calls.append((call("ask_user", question=_question(it.desc, it.omitted)), ("ask", it)))
    if state["revealed"]:
        for it in intents:
            if it.located and it.target["n_variants"] >= 2 and not it.variants_known:
                calls.append(
                    (call("catalog_get_variants", product_id=it.target["product_id"]), ("var", it))
                )
        for it in intents:
            ready = it.located and (it.target["n_variants"] < 2 or it.variants_known)
            if ready and not it.added and (not it.omitted or it.index in state["answered"]):
                args = {"product_id": it.target["product_id"], "quantity": it.target["quantity"]}
                if it.target["n_variants"] >= 2:
                    args["variant_id"] = it.target["variant_id"]
                calls.append((call("cart_add", **args), ("add", it)))
    return calls[:budget]


def _read(
    planned: list[tuple[tuple[str, dict[str, Any]], Any]],
    results: list[dict[str, Any]],
    intents: list[_Intent],
    state: dict[str, Any],
) -> None:
    """Update what the oracle knows from one turn's results (tool results come in call order)."""
    for (_, purpose), result in zip(planned, results, strict=False):
        if purpose == "history":
            state["history"] = True
            seen = set(shown_ids(result))
            for it in intents:
                if it.history:
                    it.located = it.target.get("product_id") in seen
        elif purpose[0] in ("search", "retry"):
            seen = set(shown_ids(result))
            if purpose[0] == "search":
                state["searched"][purpose[1]] = seen
            for it in intents:
                if not it.history and (
                    (purpose[0] == "search" and it.desc == purpose[1])
                    or (purpose[0] == "retry" and it is purpose[1])
                ):
                    it.located = it.target.get("product_id") in seen
                    if not it.located and purpose[0] == "search":
                        state["searched"][it.desc] = None
                    it.retried = it.retried or purpose[0] == "retry"
        elif purpose[0] == "ask":
            it = purpose[1]
            state["asked"].add(it.index)
            reply = str(result.get("reply", ""))
            if all(str(v) in reply for _, v in it.omitted):
                state["answered"].add(it.index)
        elif purpose[0] == "var":
            it = purpose[1]
            it.variants_known = it.target["variant_id"] in shown_ids(result, "variant_id")
            if not it.variants_known:
                raise Redraw("the wanted variant is not listed")
        elif purpose[0] == "add":
            if "error" in result:
                raise Redraw(f"cart_add refused: {result}")
            purpose[1].added = True


def _sync(first: list[_Intent], last: list[_Intent], state: dict[str, Any]) -> None:
    """Carry what was learnt about the first-stated items over to the final ones."""
    for old in first:
        for new in last:
            if new.index == old.index and new.desc == old.desc:
                searched = state["searched"].get(new.desc)
                new.located = bool(searched) and new.target["product_id"] in searched
                if new.history:
                    new.located = state["history"] and new.target["product_id"] in state["shown"]


def oracle(task: TaskRow) -> Oracle:
    """Gather (history, one search per item, questions), then variants, adds, a check, a reply."""
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    budget, t_max = task.axis("B_tool"), task.axis("T_max")
    slots = {s["name"]: s for s in script["slots"] if s["name"].startswith("items.")}
    switch = script.get("switch")
    changes = dict(switch["changes"]) if switch else {}
    first, last = _intents(goal, slots, changes)
    state: dict[str, Any] = {
        "history": False,
        "searched": {},
        "asked": set(),
        "answered": set(),
        "revealed": switch is None,
        "shown": set(),
    }
    intents = last if switch is None else first
    turns = 0
    while not all(it.added for it in last):
        planned = _plan_turn(intents, state, budget)
        if not planned:
            raise Redraw("the oracle cannot make progress (search never showed a target)")
        adds_left = sum(not it.added for it in intents) - sum(
            p[1][0] == "add" for p in planned if isinstance(p[1], tuple)
        )
        if adds_left == 0 and intents is last and len(planned) < budget:
            planned.append((call("cart_view"), "view"))
        results = yield [c for c, _ in planned]
        turns += 1
        for r in results:
            state["shown"].update(shown_ids(r))
        _read(planned, results, intents, state)
        if not state["revealed"]:
            if not any("customer" in r or "reply" in r for r in results):
                raise Redraw("the change of mind was not said after the first turn")
            state["revealed"] = True
            _sync(first, last, state)
            intents = last
    if not any(p[1] == "view" for p in planned) and turns + 2 <= t_max:
        yield [call("cart_view")]
    yield (
        "Your cart is ready: "
        + "; ".join(f"{it.target['quantity']} x {it.target['title']}" for it in last)
        + "."
    )
