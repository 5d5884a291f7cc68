"""Variants: each product crosses a sensible subset of its leaf's variant axes.

Apparel offers a run of sizes in a few colours; a cable a few lengths in a colour or two; a
phone some storage sizes. Sized axes (see :data:`UNORDERED_AXES`) offer a contiguous run, so
nobody sells S and XL without M; unordered axes a random subset. Numeric sizes cost more per
step up, so the smallest offered size carries the product's own price.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import polars as pl

from shopgen.gen.catalog_text import fmt
from shopgen.gen.plan import UNORDERED_AXES, CatalogPlan, LeafPlan
from shopgen.gen.seeding import FeistelIds, stream
from shopgen.schemas.tables import VARIANTS

AXIS_SLOTS = 16  # the schema caps an axis at 16 values
MAX_VARIANTS = 24
_ID_STRIDE = 32  # variant id index = product row * stride + ordinal; stride > MAX_VARIANTS
_STEP_PRICE = 0.12  # share of the base price added per step up a numeric size axis


@dataclass(frozen=True)
class VariantDraws:
    """Per-product uniforms for variant choice, concatenated from their blocks."""

    keys: np.ndarray  # (n, 2, AXIS_SLOTS): subset order for unordered axes
    count: np.ndarray  # (n, 2): how many values of each axis
    start: np.ndarray  # (n, 2): where a sized run starts
    stock: np.ndarray  # (n, MAX_VARIANTS, 2): zero or not, lognormal z

    def take(self, idx: np.ndarray) -> VariantDraws:
        """The draws of the rows at ``idx``."""
        return VariantDraws(self.keys[idx], self.count[idx], self.start[idx], self.stock[idx])


def draw_variants(seed: int, start: int, stop: int, block: int) -> VariantDraws:
    """Variant uniforms for product rows ``[start, stop)``, from ``("variants", block)`` streams."""
    parts = []
    for b in range(start // block, (stop - 1) // block + 1):
        rng = stream(seed, "variants", b)
        cols = (
            rng.random((block, 2, AXIS_SLOTS)),
            rng.random((block, 2)),
            rng.random((block, 2)),
            np.stack(
                [rng.random((block, MAX_VARIANTS)), rng.standard_normal((block, MAX_VARIANTS))],
                axis=2,
            ),
        )
        lo, hi = max(start - b * block, 0), min(stop - b * block, block)
        parts.append([c[lo:hi] for c in cols])
    return VariantDraws(*(np.concatenate([p[i] for p in parts]) for i in range(4)))


def cross_variants(
    plan: CatalogPlan,
    leaf: LeafPlan,
    draws: VariantDraws,
    rows: np.ndarray,
    pids: np.ndarray,
    price: np.ndarray,
) -> pl.DataFrame:
    """The variants of a leaf's products, with each product's variant count and total stock.

    Returns ``(None, zeros, zeros)`` when the leaf has no variant axes.
    """
    n = rows.size
    if not leaf.axes:
        return None, np.zeros(n, dtype=np.int16), np.zeros(n, dtype=np.int64)
    caps = (8,) if len(leaf.axes) == 1 else (6, MAX_VARIANTS)
    selected, steps = [], []
    budget = np.full(n, MAX_VARIANTS)
    for a, axis in enumerate(leaf.axes):
        values = plan.axis_values[axis]
        width = len(values)
        low = 2 if len(leaf.axes) == 1 else 1
        high = np.minimum(np.minimum(width, caps[a]), budget)
        k = low + np.floor(draws.count[:, a] * (high - low + 1)).astype(np.intp)
        k = np.minimum(k, high)
        budget = budget // k
        pos = np.arange(width)
        if axis in UNORDERED_AXES:
            rank = np.argsort(np.argsort(draws.keys[:, a, :width], axis=1), axis=1)
            chosen = rank < k[:, None]
        else:
            first = np.floor(draws.start[:, a] * (width - k + 1)).astype(np.intp)
            chosen = (pos >= first[:, None]) & (pos < (first + k)[:, None])
        selected.append(chosen)
        numeric = axis not in UNORDERED_AXES and values[0][:1].isdigit()
        steps.append(
            np.cumsum(chosen, axis=1) - 1 if numeric else np.zeros((n, width), dtype=np.intp)
        )
    if len(selected) == 1:
        selected.append(np.ones((n, 1), dtype=bool))
        steps.append(np.zeros((n, 1), dtype=np.intp))
    combos = selected[0][:, :, None] & selected[1][:, None, :]
    r, i, j = np.nonzero(combos)
    first_of_row = np.searchsorted(r, np.arange(n))
    ordinal = np.arange(r.size) - first_of_row[r]
    step = steps[0][r, i] + steps[1][r, j]
    frame, stock = _variant_frame(plan, leaf, draws, rows, pids, price, r, i, j, ordinal, step)
    return (
        frame,
        np.bincount(r, minlength=n),
        np.bincount(r, weights=stock, minlength=n).astype(np.int64),
    )


def _variant_frame(
    plan, leaf, draws, rows, pids, price, r, i, j, ordinal, step
) -> tuple[pl.DataFrame, np.ndarray]:
    zero_u, z = draws.stock[r, ordinal, 0], draws.stock[r, ordinal, 1]
    per_variant = max(1.0, leaf.stock_median / 4)
    stock = np.where(
        zero_u < min(0.9, leaf.stock_p_zero * 1.5),
        0,
        np.maximum(1, np.round(per_variant * np.exp(0.9 * z))),
    )
    frame = pl.DataFrame(
        {
            "variant_id": FeistelIds(plan.seed, "variant", prefix="V", width=9).ids(
                rows[r] * _ID_STRIDE + ordinal
            ),
            "product_id": pids.gather(r),
            "price_delta": np.round(price[r] * _STEP_PRICE * step, 2),
            "stock_qty": stock.astype(np.int32),
        }
    )
    values = [
        pl.Series(plan.axis_values[axis]).gather(k)
        for axis, k in zip(leaf.axes, (i, j), strict=False)
    ]
    pairs = ", ".join(f'"{axis}": {{}}' for axis in leaf.axes)
    quoted = [
        pl.lit(pl.Series([json.dumps(v) for v in plan.axis_values[axis]]).gather(k))
        for axis, k in zip(leaf.axes, (i, j), strict=False)
    ]
    frame = frame.with_columns(
        fmt("{" + pairs + "}", *quoted).alias("attributes"),
        pl.concat_str([pl.lit(v) for v in values], separator=" / ").alias("label"),
    ).select(VARIANTS.names)
    return frame, stock
