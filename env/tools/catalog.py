"""Catalog tools: look a product up, list its variants, search the catalog."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, ToolError, encoded, tool
from shopgen.gen.seeding import stable_hash

#: Characters of a product description a detail result shows (keeps results compact).
DESCRIPTION_CHARS = 400


@tool("read")
def catalog_get_product(ctx: ToolContext, product_id: str) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Get one product's details: title, brand, category, price, rating, stock, attributes.

    Args:
        product_id: the product's id as shown by a search or another tool (e.g. B07XK3M9QZ),
            not a variant_id.
    """
    p = ctx.product(product_id)
    pid = p["product_id"]
    stock = ctx.stock(p)
    return ctx.memo_read(("catalog_get_product", pid, stock), lambda: encoded(_details(p, stock)))


def _details(p: dict[str, Any], stock: int) -> dict[str, Any]:
    """A product's details as shown, with ``stock`` units in this episode."""
    description = p["description"]
    if len(description) > DESCRIPTION_CHARS:
        description = description[:DESCRIPTION_CHARS].rsplit(" ", 1)[0] + "…"
    return {
        "product_id": p["product_id"],
        "title": p["title"],
        "brand": p["brand"],
        "category": p["category_path"],
        "price": round(p["price"], 2),
        "list_price": round(p["list_price"], 2),
        "rating": round(p["rating"], 1),
        "rating_count": p["rating_count"],
        "stock_qty": stock,
        "ship_days": p["ship_days"],
        "n_variants": p["n_variants"],
        "attributes": p["attributes"],
        "description": description,
    }


@tool("read")
def catalog_get_variants(ctx: ToolContext, product_id: str) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """List a product's variants (color, size, capacity…) with their variant_id, price and stock.

    Use the variant_id from this list with cart_add when a product has variants.

    Args:
        product_id: the product's id (e.g. B07XK3M9QZ), not a variant_id.
    """
    p = ctx.product(product_id)
    pid = p["product_id"]
    variants = ctx.store.variants_of(pid)
    stocks = tuple(ctx.stock(p, v) for v in variants)
    return ctx.memo_read(
        ("catalog_get_variants", pid, stocks), lambda: encoded(_variant_list(p, variants, stocks))
    )


def _variant_list(
    p: dict[str, Any], variants: list[dict[str, Any]], stocks: tuple[int, ...]
) -> dict[str, Any]:
    """A product's variants as shown, with ``stocks`` units of each in this episode."""
    if not variants:
        return {
            "product_id": p["product_id"],
            "variants": [],
            "note": "this product has no variants; call cart_add without variant_id",
        }
    return {
        "product_id": p["product_id"],
        "variants": [
            {
                "variant_id": v["variant_id"],
                "label": v["label"],
                "attributes": v["attributes"],
                "price": round(p["price"] + v["price_delta"], 2),
                "stock_qty": stock,
            }
            for v, stock in zip(variants, stocks, strict=True)
        ],
    }


@tool("read")
def catalog_search(ctx: ToolContext, query: str) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Search the store's catalog by keywords; returns product cards, best match first.

    Args:
        query: what to look for, in words (e.g. "waterproof hiking boots size 10"); product
            ids are returned by the search, not searched for.
    """
    if ctx.search is None:
        raise ToolError(
            "catalog search is not available: this catalog has no search index", "unavailable"
        )
    if not query.strip():
        # Refused before it counts as a search: the page a task's next search draws is the
        # same whether or not a blank one came first.
        raise ToolError("query is empty; say what to search for", "bad_arguments")
    calls = ctx.state.extra.get("search_calls", 0)
    ctx.state.extra["search_calls"] = calls + 1
    task = ctx.task
    # The memo keeps the result's JSON text with the cards: a repeated search (a replay, a
    # scored trajectory) is neither re-encoded nor walked for ids (issue #7's throughput).
    text, shown = ctx.search.result_text(
        query,
        top_k=task.axis("top_k"),
        eps_rank=float(task.theta["eps_rank"]),
        oos_ids=ctx.out_of_stock,
        # Keyed by the task, not the run's root seed alone, so two tasks of one run that
        # search the same words see independent distractors.
        seed=search_seed(task.seed, task.task_id),
        call_index=calls,
    )
    return Encoded(text, product_ids=shown)


@lru_cache(maxsize=4096)
def search_seed(seed: int, task_id: str) -> int:
    """The distractor seed of a task's searches (63 bits, as the index takes).

    Memoised: every search of a task (and every replay of it) asks again, and the hash
    costs ~5 µs where a look-up costs a fraction of one.
    """
    return stable_hash(seed, task_id, bits=64) >> 1
