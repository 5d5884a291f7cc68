"""Column-at-a-time product and variant generation.

Rows are drawn in fixed blocks of :data:`BLOCK` products, each block from its own keyed stream
(``("products", block)``), so product *i* is the same whatever the catalog size, shard layout or
worker count (DESIGN §4). Within a shard, every column is one vectorised draw; the only Python
loop runs NumPy searches through each leaf's own cumulative weights (brands, shipping days,
enum attributes). Text is assembled for the whole shard at once from the plan's interned
pieces (:mod:`shopgen.gen.catalog_text`), so products come out in row order without a sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from shopgen.gen.catalog_tables import ATTR_SLOTS, BRAND
from shopgen.gen.catalog_text import field_matrix, render_text, sample_values
from shopgen.gen.plan import CatalogPlan, LeafNumbers
from shopgen.gen.seeding import FeistelIds, stream
from shopgen.gen.variants import cross_variants, draw_variants
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.tables import PRODUCTS

BLOCK = 4096


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


def check_size(plan: CatalogPlan, size: int) -> None:
    """Refuse, before any work, a catalog too small to have a product with variants.

    The world's orders price a line by its variant, and generating them fails on a catalog
    whose products have no variant at all, which a few products can be (size 1 with seed 0,
    size 3 with seed 9). Products are the same whatever the size, so the smallest size that
    works for the seed is the first product with variants.

    Raises:
        ConfigError: naming the smallest size that works for this seed.
    """
    if size > BLOCK:
        return  # thousands of products: ~60% of them have variants
    if generate_rows(plan, 0, size)[1] is not None:
        return
    products, _ = generate_rows(plan, 0, BLOCK)
    with_variants = np.flatnonzero(products["n_variants"].to_numpy() > 0)
    least = f"at least {with_variants[0] + 1}" if with_variants.size else f"more than {BLOCK}"
    raise ConfigError(
        f"size={size} with seed {plan.seed} gives a catalog without any product variants, "
        f"which its world's orders need: give a size of {least}"
    )


def product_ids(seed: int, rows: np.ndarray) -> np.ndarray:
    """The opaque ASIN-like ids of product rows (``B0`` + 8 base-36 characters)."""
    return FeistelIds(seed, "product", prefix="B0", width=8).ids(rows)


def generate_rows(plan: CatalogPlan, start: int, stop: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Products ``[start, stop)`` and their variants, both in product row order."""
    d = draw(plan.seed, start, stop)
    rows = np.arange(start, stop, dtype=np.int64)
    leaf = np.searchsorted(plan.leaf_cum, d.leaf, side="right").clip(max=len(plan.leaves) - 1)
    pids = product_ids(plan.seed, rows)
    t = plan.text
    picks = _leaf_picks(plan, leaf, d)
    line = (d.line * t.line_len[leaf]).astype(np.intp)
    noun = (d.noun * t.noun_len[leaf]).astype(np.intp)
    fields = field_matrix(t, leaf, picks.brand, line, noun, picks.values)
    numbers = _numbers(plan.numbers, leaf, d)
    variants, n_variants, variant_stock = cross_variants(
        plan, leaf, draw_variants(plan.seed, start, stop, BLOCK), rows, pids, numbers["price"]
    )
    stock = np.where(n_variants > 0, variant_stock, numbers.pop("stock_qty"))
    text = render_text(t, leaf, fields, picks.values, d.text)
    products = pl.DataFrame(
        {
            "product_id": pids,
            "title": text["title"],
            "brand": t.strings.gather(fields[:, BRAND]),
            "department": plan.numbers.department.gather(leaf),
            "category_id": plan.numbers.category_id.gather(leaf),
            "category_path": plan.numbers.path.gather(leaf),
            **numbers,
            "stock_qty": stock.astype(np.int32),
            "ship_days": picks.ship.astype(np.int8),
            "n_variants": n_variants.astype(np.int16),
            "attributes": text["attributes"],
            "key_attrs": text["key_attrs"],
            "description": text["description"],
        }
    )
    return products.select(PRODUCTS.names), variants


@dataclass(frozen=True)
class _Picks:
    brand: np.ndarray  # index into the leaf's brands
    ship: np.ndarray  # shipping days
    values: np.ndarray  # (n, ATTR_SLOTS) value index per attribute slot


def _leaf_picks(plan: CatalogPlan, leaf: np.ndarray, d: Draws) -> _Picks:
    """Draws that go through a leaf's own cumulative weights (NumPy only, per leaf)."""
    n = leaf.size
    brand = np.zeros(n, dtype=np.intp)
    ship = np.zeros(n, dtype=np.int8)
    values = np.zeros((n, ATTR_SLOTS), dtype=np.intp)
    order = np.argsort(leaf, kind="stable")
    bounds = np.searchsorted(leaf[order], np.arange(len(plan.leaves) + 1))
    for code in np.flatnonzero(np.diff(bounds)):
        sel = order[bounds[code] : bounds[code + 1]]
        lp = plan.leaves[code]
        brand[sel] = np.searchsorted(lp.brand_cum, d.brand[sel], side="right").clip(
            max=len(lp.brands) - 1
        )
        at = np.searchsorted(lp.ship_cum, d.ship[sel], side="right")
        ship[sel] = lp.ship_days[at.clip(max=len(lp.ship_days) - 1)]
        for slot, attr in enumerate(lp.attrs):
            values[sel, slot] = sample_values(attr, d.attrs[sel, slot])
    return _Picks(brand=brand, ship=ship, values=values)


def _numbers(p: LeafNumbers, leaf: np.ndarray, d: Draws) -> dict[str, np.ndarray]:
    """Prices, ratings and stock: elementwise formulas over per-leaf parameters."""
    price = _shelf_price(p.price_median[leaf] * np.exp(p.price_sigma[leaf] * d.price_z))
    on_sale = d.discount[:, 0] < 0.3
    list_price = np.where(
        on_sale, _shelf_price(price / (1 - (0.05 + 0.35 * d.discount[:, 1]))), price
    )
    rating = np.round(np.clip(p.rating_mean[leaf] + p.rating_sd[leaf] * d.rating_z, 1.0, 5.0), 1)
    rating_count = np.floor(np.exp(3.0 + 1.7 * d.count_z)).astype(np.int64).clip(0, 2_000_000) + 1
    in_stock = d.stock[:, 0] >= p.stock_p_zero[leaf]
    stock = np.where(
        in_stock, np.maximum(1, np.round(p.stock_median[leaf] * np.exp(0.9 * d.stock[:, 1]))), 0
    )
    return {
        "price": price,
        "list_price": list_price,
        "rating": rating,
        "rating_count": rating_count.astype(np.int32),
        "stock_qty": stock,
    }


def _shelf_price(raw: np.ndarray) -> np.ndarray:
    """Round to shelf prices: $x.99 from $10 up, $x.x9 below, never under $0.99."""
    high = np.floor(raw) + 0.99
    low = np.floor(raw * 10) / 10 + 0.09
    return np.round(np.maximum(np.where(raw >= 10, high, low), 0.99), 2)
