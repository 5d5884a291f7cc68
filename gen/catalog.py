"""Column-at-a-time product and variant generation.

Rows are drawn in fixed blocks of :data:`BLOCK` products, each block from its own keyed stream
(``("products", block)``), so product *i* is the same whatever the catalog size, shard layout or
worker count (DESIGN §4). Within a shard, every column is one vectorised draw; the only Python
loop is over leaf categories, where titles, attributes and variants take a leaf-specific shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from shopgen.gen.catalog_text import describe, render_attrs
from shopgen.gen.plan import CatalogPlan, LeafPlan
from shopgen.gen.seeding import FeistelIds, stream
from shopgen.gen.variants import cross_variants, draw_variants
from shopgen.schemas.tables import PRODUCTS

BLOCK = 4096
#: Attribute slots drawn per product; a leaf uses the first ``len(attrs)`` of them.
ATTR_SLOTS = 8


@dataclass(frozen=True)
class Draws:
    """The per-product random numbers of a row range, concatenated from its blocks."""

    leaf: np.ndarray
    brand: np.ndarray
    line: np.ndarray
    noun: np.ndarray
    attrs: np.ndarray  # (n, ATTR_SLOTS)
    price_z: np.ndarray
    discount: np.ndarray  # (n, 2): whether, and how much
    rating_z: np.ndarray
    count_z: np.ndarray
    stock: np.ndarray  # (n, 2): zero or not, lognormal z
    ship: np.ndarray
    text: np.ndarray  # (n, 3): description sentence choices


def draw(seed: int, start: int, stop: int) -> Draws:
    """Per-product uniforms and normals for rows ``[start, stop)``."""
    parts = []
    for block in range(start // BLOCK, (stop - 1) // BLOCK + 1):
        rng = stream(seed, "products", block)
        # The order of these draws is part of the data format: changing it changes every row.
        cols = {
            "leaf": rng.random(BLOCK),
            "brand": rng.random(BLOCK),
            "line": rng.random(BLOCK),
            "noun": rng.random(BLOCK),
            "attrs": rng.random((BLOCK, ATTR_SLOTS)),
            "price_z": rng.standard_normal(BLOCK),
            "discount": rng.random((BLOCK, 2)),
            "rating_z": rng.standard_normal(BLOCK),
            "count_z": rng.standard_normal(BLOCK),
            "stock": np.column_stack([rng.random(BLOCK), rng.standard_normal(BLOCK)]),
            "ship": rng.random(BLOCK),
            "text": rng.random((BLOCK, 3)),
        }
        lo = max(start - block * BLOCK, 0)
        hi = min(stop - block * BLOCK, BLOCK)
        parts.append({k: v[lo:hi] for k, v in cols.items()})
    return Draws(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})


def product_ids(seed: int, rows: np.ndarray) -> np.ndarray:
    """The opaque ASIN-like ids of product rows (``B0`` + 8 base-36 characters)."""
    return FeistelIds(seed, "product", prefix="B0", width=8).ids(rows)


def generate_rows(plan: CatalogPlan, start: int, stop: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Products ``[start, stop)`` and their variants, in row order."""
    d = draw(plan.seed, start, stop)
    vd = draw_variants(plan.seed, start, stop, BLOCK)
    rows = np.arange(start, stop, dtype=np.int64)
    leaf_codes = np.searchsorted(plan.leaf_cum, d.leaf, side="right").clip(max=len(plan.leaves) - 1)
    pids = product_ids(plan.seed, rows)
    products, variants = [], []
    for code in np.unique(leaf_codes):
        idx = np.flatnonzero(leaf_codes == code)
        leaf = plan.leaves[code]
        leaf_pids = pids.gather(idx)
        frame = _leaf_products(leaf, d, idx, leaf_pids, rows[idx])
        var, n_variants, variant_stock = cross_variants(
            plan, leaf, vd.take(idx), rows[idx], leaf_pids, frame["price"].to_numpy()
        )
        if var is not None:
            stock = np.where(n_variants > 0, variant_stock, frame["stock_qty"].to_numpy())
            variants.append(var)
        else:
            stock = frame["stock_qty"].to_numpy()
        products.append(
            frame.with_columns(
                pl.Series("n_variants", n_variants, dtype=pl.Int16),
                pl.Series("stock_qty", stock, dtype=pl.Int32),
            )
        )
    product_frame = pl.concat(products).sort("_row").drop("_row").select(PRODUCTS.names)
    # Variants stay grouped by leaf: the order is fixed by the shard, and re-sorting millions
    # of string rows would double the cost of the shard.
    variant_frame = pl.concat(variants) if variants else None
    return product_frame, variant_frame


def _leaf_products(
    leaf: LeafPlan, d: Draws, idx: np.ndarray, pids: pl.Series, rows: np.ndarray
) -> pl.DataFrame:
    brand = pl.Series(leaf.brands).gather(
        np.searchsorted(leaf.brand_cum, d.brand[idx], side="right").clip(max=len(leaf.brands) - 1)
    )
    line = pl.Series(leaf.lines).gather((d.line[idx] * len(leaf.lines)).astype(np.intp))
    noun = pl.Series(leaf.nouns).gather((d.noun[idx] * len(leaf.nouns)).astype(np.intp))
    price = _shelf_price(leaf.price_median * np.exp(leaf.price_sigma * d.price_z[idx]))
    on_sale = d.discount[idx, 0] < 0.3
    list_price = np.where(
        on_sale, _shelf_price(price / (1 - (0.05 + 0.35 * d.discount[idx, 1]))), price
    )
    rating = np.round(np.clip(leaf.rating_mean + leaf.rating_sd * d.rating_z[idx], 1.0, 5.0), 1)
    rating_count = (
        np.floor(np.exp(3.0 + 1.7 * d.count_z[idx])).astype(np.int64).clip(0, 2_000_000) + 1
    )
    in_stock = d.stock[idx, 0] >= leaf.stock_p_zero
    stock = np.where(
        in_stock, np.maximum(1, np.round(leaf.stock_median * np.exp(0.9 * d.stock[idx, 1]))), 0
    )
    ship = leaf.ship_days[
        np.searchsorted(leaf.ship_cum, d.ship[idx], side="right").clip(max=len(leaf.ship_days) - 1)
    ]
    base = pl.DataFrame(
        {
            "_row": rows,
            "product_id": pids,
            "brand": brand,
            "line": line,
            "noun": noun,
            "price": price,
            "list_price": list_price,
            "rating": rating,
            "rating_count": rating_count.astype(np.int32),
            "stock_qty": stock.astype(np.int32),
            "ship_days": ship.astype(np.int8),
        }
    )
    base = base.with_columns(
        pl.lit(leaf.department).alias("department"),
        pl.lit(leaf.category_id).alias("category_id"),
        pl.lit(leaf.path).alias("category_path"),
    )
    frame = render_attrs(leaf, base, d.attrs[idx])
    return describe(leaf, frame, d.text[idx]).drop("line", "noun")


def _shelf_price(raw: np.ndarray) -> np.ndarray:
    """Round to shelf prices: $x.99 from $10 up, $x.x9 below, never under $0.99."""
    high = np.floor(raw) + 0.99
    low = np.floor(raw * 10) / 10 + 0.09
    return np.round(np.maximum(np.where(raw >= 10, high, low), 0.99), 2)
