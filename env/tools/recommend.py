"""Recommending products: the structured answer of discovery, substitution and bundle tasks."""

from __future__ import annotations

import json
from typing import Annotated, Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, Items, ToolError, encoded, tool
from shopgen.gen.store import CatalogStore

#: Most products one recommendation may name (k_rec(d) is at most 10; this only bounds abuse).
#: Stated in the schema with the least, one (:class:`~shopgen.env.tools.registry.Items`).
MAX_RECOMMENDED = 20


@tool("write")
def recommend_products(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext, product_ids: Annotated[list[str], Items(1, MAX_RECOMMENDED)]
) -> Encoded:
    """Recommend products to the customer, best first; a new call replaces the previous list.

    Args:
        product_ids: product ids to show the customer (e.g. ["B07XK3M9QZ", "B01N5IB20Q"]), as
            returned by the catalog tools; product ids, not variant_ids, each id at most once.
    """
    ids = tuple(product_ids)
    rules = (ctx.stock_overrides, ctx.out_of_stock)
    # A list read under the same stock rules (the very objects: a row's rules are read once
    # and shared by its episodes) records the same facts and shows the same result, so a
    # replayed list is one look-up; the rules are held with the entry, so their ids stay theirs.
    key = ("recommend_list", ids, id(rules[0]), id(rules[1]))
    hit = ctx.memo.get(key)
    if hit is None or hit[0] is not rules[0] or hit[1] is not rules[1]:
        hit = ctx.memo.put(key, (*rules, *_recommended(ctx, ids)))
    facts = dict(hit[2])  # the episode's own dict; the fact records are shared (read-only)
    ctx.state.recommendations = list(product_ids)
    # Verifiers have no catalog handle: what they grade (constraints, stock in this episode)
    # is recorded here, by the runtime, so a replayed transcript cannot fake it. The turn too:
    # only what the customer said before it can have informed the list (``as_asked``).
    ctx.state.extra["recommended_facts"] = facts
    ctx.state.extra["recommended_turn"] = ctx.state.turns
    # Every list in order, with its facts: a journey answers several recommendation requests
    # in one conversation and grades each on its own list (single-request verifiers keep
    # reading the latest list above).
    ctx.state.extra.setdefault("recommendation_lists", []).append(
        {"product_ids": list(product_ids), "facts": facts, "turn": ctx.state.turns}
    )
    return hit[3]


def _recommended(
    ctx: ToolContext, product_ids: tuple[str, ...]
) -> tuple[dict[str, dict[str, Any]], Encoded]:
    """A list's recorded facts (product id → facts) and its result, or the call's ToolError.

    A pure function of the ids, the catalog and the episode's stock rules (what
    :func:`recommend_products` remembers it under).
    """
    seen: set[str] = set()
    facts: dict[str, dict[str, Any]] = {}
    store, memo = ctx.store, ctx.memo
    for pid in product_ids:
        if pid in seen:
            raise ToolError(f"product_ids lists {pid} twice", "bad_arguments")
        seen.add(pid)
        row = store.product_row(pid)
        if row < 0:
            ctx.product(pid)  # raises not_found (and says so for a variant id)
        stock = ctx.product_stock(pid, row)
        # Remembered per (product, stock in the episode), the only things they depend on:
        # shared by every list naming the product, so read, never changed. Looked up before
        # anything is made for a miss (the common case is a hit: ctx.memo_read's memo).
        key = ("recommend_facts", pid, stock)
        fact = memo.get(key)
        facts[pid] = fact if fact is not None else memo.put(key, _facts(store, row, stock))
    return facts, ctx.memo_read(
        ("recommend_products", product_ids),
        lambda: encoded({"recommended": list(product_ids), "count": len(product_ids)}),
    )


def _facts(store: CatalogStore, row: int, stock: int) -> dict[str, Any]:
    """The gradable facts of the product at catalog ``row``, with ``stock`` units in this episode.

    Read field by field from the store's columns, not from the product's record: a
    recommended product is mostly one no tool has read yet (any of the catalog), and its
    record would cost a row decode of every column (~50 µs in a busy process) for seven facts.
    The title says the product's kind (a substitute must be of the original's, ``gen.tasks.kinds``).
    Equal to the facts of the record (a test compares them).
    """
    return {
        "category_id": store.product_list("category_id")[row],
        "title": store.product_field_at(row, "title"),
        "price": float(store.product_array("price")[row]),
        "rating": float(store.product_array("rating")[row]),
        "ship_days": int(store.product_array("ship_days")[row]),
        "brand": store.product_list("brand")[row],
        "attributes": json.loads(store.product_field_at(row, "attributes")),
        "stock_qty": stock,
    }
