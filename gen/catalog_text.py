"""Titles, attribute maps and descriptions, assembled with Polars string kernels.

Attribute values are sampled as indices into a leaf's compiled value tables; rendering is a
gather from a small string table plus one ``concat_str`` per leaf, never a Python string
operation per product.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from shopgen.gen.plan import AttrPlan, LeafPlan

# Description sentences. {brand}, {line}, {noun} and {category} are filled per product; the
# specification sentence and the closing sentence follow. Written for shopgen.
_OPENERS = (
    "The {brand} {line} {noun} is made for everyday use in {category}.",
    "Meet the {line} {noun} from {brand}, a dependable pick in {category}.",
    "{brand} designed the {line} {noun} for shoppers who want quality without fuss.",
    "Built by {brand}, the {line} {noun} balances performance and value.",
    "Looking for {category}? The {brand} {line} {noun} covers the essentials.",
)
_CLOSERS = (
    "Backed by {brand} customer support.",
    "Check the specifications above to make sure it fits your needs.",
    "A practical choice for home, work or gifting.",
    "Designed and quality-checked by {brand}.",
    "Easy to set up and built to last.",
)


def fmt(template: str, *exprs: pl.Expr) -> pl.Expr:
    """``template`` with each ``{}`` replaced by the next expression (braces elsewhere are literal)."""
    pieces = template.split("{}")
    if len(pieces) != len(exprs) + 1:
        raise ValueError(f"{template!r} has {len(pieces) - 1} slots for {len(exprs)} values")
    parts: list[pl.Expr] = []
    for literal, expr in zip(pieces, [*exprs, None], strict=True):
        if literal:
            parts.append(pl.lit(literal))
        if expr is not None:
            parts.append(expr)
    return pl.concat_str(parts)


def sample_values(attr: AttrPlan, u: np.ndarray) -> np.ndarray:
    """Value indices of ``attr`` for uniforms ``u``."""
    if attr.kind == "enum":
        return np.searchsorted(attr.cum_weights, u, side="right").clip(max=len(attr.display) - 1)
    if attr.kind == "numeric":
        return (u * int(attr.cum_weights[0])).astype(np.intp)
    return (u < attr.p_true).astype(np.intp)


def render_attrs(leaf: LeafPlan, base: pl.DataFrame, uniforms: np.ndarray) -> pl.DataFrame:
    """Add ``attributes`` (JSON), ``key_attrs`` and ``title`` to a leaf's product frame."""
    shown, literals = {}, {}
    for slot, attr in enumerate(leaf.attrs):
        values = sample_values(attr, uniforms[:, slot])
        shown[f"_a_{attr.name}"] = pl.Series(attr.display).gather(values)
        literals[f"_j_{attr.name}"] = pl.Series(attr.json_value).gather(values)
    frame = base.with_columns(pl.Series(name, s) for name, s in (shown | literals).items())
    pairs = ", ".join(f'"{a.name}": {{}}' for a in leaf.attrs)
    attributes = fmt("{" + pairs + "}", *(pl.col(c) for c in literals))
    title_cols = [
        pl.col(f if f in ("brand", "line", "noun") else f"_a_{f}") for f in leaf.title_fields
    ]
    key_cols = [pl.col(f"_a_{leaf.attrs[k].name}") for k in leaf.key_attrs]
    return frame.with_columns(
        attributes.alias("attributes"),
        _tidy(fmt(leaf.title_format, *title_cols)).alias("title"),
        pl.concat_list(key_cols)
        .list.eval(pl.element().filter(pl.element() != ""))
        .alias("key_attrs"),
    ).drop(list(literals))


def _tidy(text: pl.Expr) -> pl.Expr:
    """Close the gaps a false boolean leaves in a title: ", ,", trailing commas, double spaces."""
    return (
        text.str.replace_all(r"(,\s*)+,", ",")
        .str.replace_all(r"\s{2,}", " ")
        .str.replace_all(r"\s+,", ",")
        .str.replace_all(r"[\s,]+$", "")
        .str.strip_chars()
    )


def describe(leaf: LeafPlan, frame: pl.DataFrame, choice: np.ndarray) -> pl.DataFrame:
    """Add a several-sentence ``description`` and drop the temporary attribute columns."""
    specs = []
    for attr in leaf.attrs:
        label = attr.name.replace("_", " ").capitalize()
        col = pl.col(f"_a_{attr.name}")
        if attr.kind == "boolean":
            col = pl.when(col != "").then(pl.lit("yes")).otherwise(pl.lit("no"))
        specs.append(fmt(f"{label}: {{}}", col))
    opener = _pick(_OPENERS, choice[:, 0], leaf)
    closer = _pick(_CLOSERS, choice[:, 2], leaf)
    description = pl.concat_str(
        [
            opener,
            pl.lit(" Specifications: "),
            pl.concat_str(specs, separator="; "),
            pl.lit(". "),
            closer,
        ]
    )
    return frame.with_columns(description.alias("description")).drop(
        f"_a_{a.name}" for a in leaf.attrs
    )


def _pick(sentences: tuple[str, ...], u: np.ndarray, leaf: LeafPlan) -> pl.Expr:
    """One sentence per product, chosen by ``u``, with its product fields filled in."""
    which = pl.Series((u * len(sentences)).astype(np.int32))
    expr = pl.lit(None, dtype=pl.String)
    for i, sentence in enumerate(sentences):
        expr = pl.when(which == i).then(_fill(sentence, leaf)).otherwise(expr)
    return expr


def _fill(sentence: str, leaf: LeafPlan) -> pl.Expr:
    fields = sorted(
        (f for f in ("brand", "line", "noun", "category") if f"{{{f}}}" in sentence),
        key=sentence.index,
    )
    template = sentence
    for f in fields:
        template = template.replace(f"{{{f}}}", "{}")
    return fmt(
        template, *(pl.lit(leaf.name.lower()) if f == "category" else pl.col(f) for f in fields)
    )
