"""Titles, attribute maps and descriptions of a whole shard, assembled from interned pieces.

Every text column is ``concat_str`` over a few columns gathered from the plan's string table
(:mod:`shopgen.gen.catalog_tables`); which piece a product gets is plain NumPy indexing by its
leaf and value indices. There is no loop over leaves and no Python string operation per
product, so a shard costs a fixed handful of Polars kernels whatever the taxonomy's size.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from shopgen.gen.catalog_tables import (
    ATTR_SLOTS,
    CLOSERS,
    FIRST_ATTR,
    NO_FIELD,
    OPENERS,
    Template,
    TextTables,
)
from shopgen.gen.plan import AttrPlan


def sample_values(attr: AttrPlan, u: np.ndarray) -> np.ndarray:
    """Value indices of ``attr`` for uniforms ``u``."""
    if attr.kind == "enum":
        return np.searchsorted(attr.cum_weights, u, side="right").clip(max=len(attr.display) - 1)
    if attr.kind == "numeric":
        return (u * int(attr.cum_weights[0])).astype(np.intp)
    return (u < attr.p_true).astype(np.intp)


def field_matrix(
    t: TextTables,
    leaf: np.ndarray,
    brand: np.ndarray,
    line: np.ndarray,
    noun: np.ndarray,
    values: np.ndarray,
) -> np.ndarray:
    """String indices of every field a template may name, one row per product.

    Args:
        t: the plan's string tables.
        leaf: leaf code per product.
        brand: index into the leaf's brands, per product.
        line: index into the leaf's product lines.
        noun: index into the leaf's nouns.
        values: (n, ATTR_SLOTS) value index per attribute slot (ignored for unused slots).
    """
    n = leaf.size
    fields = np.zeros((n, NO_FIELD + 1), dtype=np.int64)
    fields[:, 0] = t.brand_off[leaf] + brand
    fields[:, 1] = t.line_off[leaf] + line
    fields[:, 2] = t.noun_off[leaf] + noun
    fields[:, 3] = t.category[leaf]
    fields[:, FIRST_ATTR:NO_FIELD] = _slot_index(t.display_off[leaf], values)
    return fields


def render_text(
    t: TextTables, leaf: np.ndarray, fields: np.ndarray, values: np.ndarray, choice: np.ndarray
) -> pl.DataFrame:
    """``title``, ``attributes`` (JSON), ``key_attrs`` and ``description`` of a shard."""
    rows = np.arange(leaf.size)
    title = _fill(t.title, leaf, fields, rows)
    attributes = [*_slot_index(t.json_off[leaf], values).T, np.full(leaf.size, t.close_brace)]
    opener = _fill(t.opener, (choice[:, 0] * len(OPENERS)).astype(np.intp), fields, rows)
    closer = _fill(t.closer, (choice[:, 2] * len(CLOSERS)).astype(np.intp), fields, rows)
    specs = list(_slot_index(t.spec_off[leaf], values).T)
    frame = pl.DataFrame(
        {
            "title": _concat(t, title),
            "attributes": _concat(t, attributes),
            "description": _concat(
                t,
                [*opener, " Specifications: ", *specs, ". ", *closer],
            ),
        }
    )
    return frame.with_columns(
        _tidy(pl.col("title")).alias("title"),
        pl.Series("key_attrs", _key_attrs(t, leaf, fields)),
    )


def _slot_index(offsets: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Offset + value per slot; unused slots (offset 0) stay 0, the empty string."""
    return np.where(offsets > 0, offsets + values[:, :ATTR_SLOTS], 0)


def _fill(
    template: Template, row: np.ndarray, fields: np.ndarray, rows: np.ndarray
) -> list[np.ndarray]:
    """The piece indices of ``template`` row ``row[i]`` for each product ``i``."""
    lit, code = template.lit[row], template.field[row]
    pieces = []
    for p in range(code.shape[1]):
        pieces.append(lit[:, p])
        pieces.append(fields[rows, code[:, p]])
    pieces.append(lit[:, -1])
    return pieces


def _concat(t: TextTables, pieces: list) -> pl.Series:
    """Concatenate string-index columns (and literal strings) into one string column."""
    exprs = []
    for piece in pieces:
        if isinstance(piece, str):
            exprs.append(pl.lit(piece))
        elif piece.any():  # a column of empty strings adds nothing
            exprs.append(pl.lit(t.strings.gather(piece)))
    return pl.select(pl.concat_str(exprs)).to_series()


def _key_attrs(t: TextTables, leaf: np.ndarray, fields: np.ndarray) -> pa.Array:
    """The displayed key attributes per product, without the blanks of false booleans."""
    slots = t.key_slot[leaf]
    idx = np.where(slots >= 0, fields[np.arange(leaf.size)[:, None], FIRST_ATTR + slots], 0)
    keep = idx > 0
    keep &= t.nonempty[idx]
    offsets = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int32)
    values = t.arrow.take(pa.array(idx[keep]))
    return pa.ListArray.from_arrays(pa.array(offsets), values.cast(pa.string()))


def _tidy(text: pl.Expr) -> pl.Expr:
    """Close the gaps a false boolean leaves in a title: ", ,", trailing commas, double spaces."""
    return (
        text.str.replace_all(r"(,\s*)+,", ",")
        .str.replace_all(r"\s{2,}", " ")
        .str.replace_all(r"\s+,", ",")
        .str.replace_all(r"[\s,]+$", "")
        .str.strip_chars()
    )
