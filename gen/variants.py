"""Variants: each product crosses a sensible subset of its leaf's variant axes.

Apparel offers a run of sizes in a few colours; a cable a few lengths in a colour or two; a
phone some storage sizes. Sized axes (see :data:`UNORDERED_AXES`) offer a contiguous run, so
nobody sells S and XL without M; unordered axes a random subset. Numeric sizes cost more per
step up, so the smallest offered size carries the product's own price.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from shopgen.gen.plan import UNORDERED_AXES, CatalogPlan
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
    leaf: np.ndarray,
    draws: VariantDraws,
    rows: np.ndarray,
    pids: pl.Series,
    price: np.ndarray,
) -> tuple[pl.DataFrame | None, np.ndarray, np.ndarray]:
    """The variants of a shard's products, with each product's variant count and total stock.

    Leaves that share their variant axes share one vectorised pass; the variants come out in
    (product row, ordinal) order. The frame is None when no product of the shard has variants.
    """
    n = rows.size
    parts = []
    for axes, codes in _axis_groups(plan).items():
        sel = np.flatnonzero(np.isin(leaf, codes))
        if sel.size:
            parts.append(_cross(plan, axes, draws, sel))
    if not parts:
        return None, np.zeros(n, dtype=np.int16), np.zeros(n, dtype=np.int64)
    r, ordinal, step, v0, v1 = (np.concatenate([p[k] for p in parts]) for k in range(5))
    order = np.argsort(r * _ID_STRIDE + ordinal, kind="stable")
    r, ordinal, step, v0, v1 = r[order], ordinal[order], step[order], v0[order], v1[order]
    frame, stock = _variant_frame(plan, leaf, draws, rows, pids, price, r, ordinal, step, v0, v1)
    return (
        frame,
        np.bincount(r, minlength=n),
        np.bincount(r, weights=stock, minlength=n).astype(np.int64),
    )


def _axis_groups(plan: CatalogPlan) -> dict[tuple[str, ...], np.ndarray]:
    """Leaf codes by their variant axes (leaves without axes are left out)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for leaf in plan.leaves:
        if leaf.axes:
            groups.setdefault(leaf.axes, []).append(leaf.code)
    return {axes: np.array(codes) for axes, codes in groups.items()}


def _cross(plan: CatalogPlan, axes: tuple[str, ...], draws: VariantDraws, sel: np.ndarray):
    """Variant index arrays of the products ``sel`` whose leaves all have ``axes``."""
    n = sel.size
    caps = (8,) if len(axes) == 1 else (6, MAX_VARIANTS)
    selected, steps = [], []
    budget = np.full(n, MAX_VARIANTS)
    for a, axis in enumerate(axes):
        values = plan.axis_values[axis]
        width = len(values)
        low = 2 if len(axes) == 1 else 1
        high = np.minimum(np.minimum(width, caps[a]), budget)
        k = low + np.floor(draws.count[sel, a] * (high - low + 1)).astype(np.intp)
        k = np.minimum(k, high)
        budget = budget // k
        pos = np.arange(width)
        if axis in UNORDERED_AXES:
            rank = np.argsort(np.argsort(draws.keys[sel, a, :width], axis=1), axis=1)
            chosen = rank < k[:, None]
        else:
            first = np.floor(draws.start[sel, a] * (width - k + 1)).astype(np.intp)
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
    t = plan.text
    v0 = np.column_stack([t.axis_json0[axes[0]] + i, t.axis_label0[axes[0]] + i])
    if len(axes) == 1:
        v1 = np.zeros((r.size, 2), dtype=np.int64)
    else:
        v1 = np.column_stack([t.axis_json1[axes[1]] + j, t.axis_label1[axes[1]] + j])
    return sel[r], ordinal, step, v0, v1


def _variant_frame(
    plan, leaf, draws, rows, pids, price, r, ordinal, step, v0, v1
) -> tuple[pl.DataFrame, np.ndarray]:
    numbers = plan.numbers
    zero_u, z = draws.stock[r, ordinal, 0], draws.stock[r, ordinal, 1]
    per_variant = np.maximum(1.0, numbers.stock_median[leaf[r]] / 4)
    stock = np.where(
        zero_u < np.minimum(0.9, numbers.stock_p_zero[leaf[r]] * 1.5),
        0,
        np.maximum(1, np.round(per_variant * np.exp(0.9 * z))),
    )
    strings = plan.text.strings
    attributes = [strings.gather(v0[:, 0]), pl.lit("}")]
    label = [strings.gather(v0[:, 1])]
    if v1.any():
        attributes.insert(1, strings.gather(v1[:, 0]))
        label.append(strings.gather(v1[:, 1]))
    frame = pl.DataFrame(
        {
            "variant_id": FeistelIds(plan.seed, "variant", prefix="V", width=9).ids(
                rows[r] * _ID_STRIDE + ordinal
            ),
            "product_id": pids.gather(r),
            "attributes": pl.select(pl.concat_str([_lit(x) for x in attributes])).to_series(),
            "label": pl.select(pl.concat_str([_lit(x) for x in label])).to_series(),
            "price_delta": np.round(price[r] * _STEP_PRICE * step, 2),
            "stock_qty": stock.astype(np.int32),
        }
    )
    return frame.select(VARIANTS.names), stock


def _lit(x: pl.Series | pl.Expr) -> pl.Expr:
    return pl.lit(x) if isinstance(x, pl.Series) else x
