"""The plan's text as one interned string table and per-leaf index matrices.

Product text (titles, attribute JSON, descriptions) and variant text are assembled from a few
hundred thousand short pieces that depend only on the plan. Interning them once, and giving
every leaf its pieces as rows of small integer matrices, lets a shard render the text of all
its products with NumPy fancy indexing and one Polars ``concat_str`` per column, instead of
dozens of small Polars queries per leaf (the per-query overhead dominated generation).
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

if TYPE_CHECKING:
    from shopgen.gen.plan import CatalogPlan, LeafPlan

#: Attribute slots drawn per product; a leaf uses the first ``len(attrs)`` of them.
ATTR_SLOTS = 8
#: Field codes of a template piece: the product's brand, line, noun and lower-case category
#: name, then its attribute slots (as displayed), then "nothing" (the empty string).
BRAND, LINE, NOUN, CATEGORY = range(4)
FIRST_ATTR = 4
NO_FIELD = FIRST_ATTR + ATTR_SLOTS

# Description sentences. {brand}, {line}, {noun} and {category} are filled per product; the
# specification sentence and the closing sentence follow. Written for shopgen.
OPENERS = (
    "The {brand} {line} {noun} is made for everyday use in {category}.",
    "Meet the {line} {noun} from {brand}, a dependable pick in {category}.",
    "{brand} designed the {line} {noun} for shoppers who want quality without fuss.",
    "Built by {brand}, the {line} {noun} balances performance and value.",
    "Looking for {category}? The {brand} {line} {noun} covers the essentials.",
)
CLOSERS = (
    "Backed by {brand} customer support.",
    "Check the specifications above to make sure it fits your needs.",
    "A practical choice for home, work or gifting.",
    "Designed and quality-checked by {brand}.",
    "Easy to set up and built to last.",
)
_FIELD_CODES = {"brand": BRAND, "line": LINE, "noun": NOUN, "category": CATEGORY}


class _Interner:
    """A growing string list: ``add`` shares equal strings, ``offset_of`` appends a run."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._index: dict[str, int] = {"": 0}

    def add(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.strings)
            self.strings.append(text)
        return self._index[text]

    def offset_of(self, texts: list[str]) -> int:
        """Append ``texts`` contiguously (so value ``k`` sits at offset + k); return the offset."""
        start = len(self.strings)
        self.strings.extend(texts)
        return start


@dataclass(frozen=True)
class Template:
    """A template as pieces: ``lit[0] field[0] lit[1] … field[-1] lit[-1]`` (field codes)."""

    lit: np.ndarray  # (rows, width + 1) string indices
    field: np.ndarray  # (rows, width) field codes


@dataclass(frozen=True)
class TextTables:
    """Everything product and variant text is assembled from, for one plan."""

    strings: pl.Series
    arrow: pa.Array
    nonempty: np.ndarray  # per string: not ""
    brand_off: np.ndarray  # per leaf: first index of its brands
    line_off: np.ndarray
    line_len: np.ndarray
    noun_off: np.ndarray
    noun_len: np.ndarray
    category: np.ndarray  # per leaf: index of its lower-case name
    display_off: np.ndarray  # (leaves, ATTR_SLOTS): first index of the slot's values, or 0
    json_off: np.ndarray  # ``{"name": value`` / ``, "name": value`` pieces
    spec_off: np.ndarray  # ``Label: value`` / ``; Label: value`` pieces
    key_slot: np.ndarray  # (leaves, max keys): attribute slot or -1
    title: Template  # one row per leaf
    opener: Template  # one row per sentence
    closer: Template
    axis_json0: dict[str, int]  # axis → first index of ``{"axis": value`` pieces
    axis_json1: dict[str, int]  # axis → first index of ``, "axis": value`` pieces
    axis_label0: dict[str, int]  # axis → first index of ``value``
    axis_label1: dict[str, int]  # axis → first index of `` / value``
    close_brace: int


def build_tables(plan: CatalogPlan) -> TextTables:
    """Intern every text piece of ``plan``; called once per plan (see ``CatalogPlan.text``)."""
    pool = _Interner()
    n = len(plan.leaves)
    per_leaf = {k: np.zeros(n, dtype=np.int64) for k in ("brand", "line", "noun", "category")}
    lens = {k: np.zeros(n, dtype=np.int64) for k in ("line", "noun")}
    slots = {k: np.zeros((n, ATTR_SLOTS), dtype=np.int64) for k in ("display", "json", "spec")}
    max_keys = max(len(leaf.key_attrs) for leaf in plan.leaves)
    key_slot = np.full((n, max(max_keys, 1)), -1, dtype=np.int64)
    for code, leaf in enumerate(plan.leaves):
        per_leaf["brand"][code] = pool.offset_of(list(leaf.brands))
        per_leaf["line"][code] = pool.offset_of(list(leaf.lines))
        per_leaf["noun"][code] = pool.offset_of(list(leaf.nouns))
        per_leaf["category"][code] = pool.add(leaf.name.lower())
        lens["line"][code], lens["noun"][code] = len(leaf.lines), len(leaf.nouns)
        for slot, attr in enumerate(leaf.attrs):
            label = attr.name.replace("_", " ").capitalize()
            shown = list(attr.display)
            spec_values = ["yes" if s else "no" for s in shown] if attr.kind == "boolean" else shown
            lead, sep = ("{", "; ") if slot == 0 else (", ", "; ")
            slots["display"][code, slot] = pool.offset_of(shown)
            slots["json"][code, slot] = pool.offset_of(
                [f'{lead}"{attr.name}": {v}' for v in attr.json_value]
            )
            slots["spec"][code, slot] = pool.offset_of(
                [(sep if slot else "") + f"{label}: {v}" for v in spec_values]
            )
        key_slot[code, : len(leaf.key_attrs)] = leaf.key_attrs
    axes = _axis_pieces(plan, pool)
    title = _templates(pool, [_title_pieces(leaf) for leaf in plan.leaves])
    opener = _templates(pool, [_sentence_pieces(s) for s in OPENERS])
    closer = _templates(pool, [_sentence_pieces(s) for s in CLOSERS])
    close_brace = pool.add("}")
    strings = pool.strings
    arrow = pa.array(strings, type=pa.large_string())
    return TextTables(
        strings=pl.Series("s", strings, dtype=pl.String),
        arrow=arrow,
        nonempty=np.array([bool(s) for s in strings]),
        brand_off=per_leaf["brand"],
        line_off=per_leaf["line"],
        line_len=lens["line"],
        noun_off=per_leaf["noun"],
        noun_len=lens["noun"],
        category=per_leaf["category"],
        display_off=slots["display"],
        json_off=slots["json"],
        spec_off=slots["spec"],
        key_slot=key_slot,
        title=title,
        opener=opener,
        closer=closer,
        **axes,
        close_brace=close_brace,
    )


def _axis_pieces(plan: CatalogPlan, pool: _Interner) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {
        k: {} for k in ("axis_json0", "axis_json1", "axis_label0", "axis_label1")
    }
    for axis, values in plan.axis_values.items():
        shown = [str(v) for v in values]
        quoted = [json.dumps(v) for v in shown]
        out["axis_json0"][axis] = pool.offset_of([f'{{"{axis}": {q}' for q in quoted])
        out["axis_json1"][axis] = pool.offset_of([f', "{axis}": {q}' for q in quoted])
        out["axis_label0"][axis] = pool.offset_of(shown)
        out["axis_label1"][axis] = pool.offset_of([f" / {v}" for v in shown])
    return out


def _title_pieces(leaf: LeafPlan) -> tuple[list[str], list[int]]:
    names = [a.name for a in leaf.attrs]
    codes = [
        _FIELD_CODES[f] if f in _FIELD_CODES else FIRST_ATTR + names.index(f)
        for f in leaf.title_fields
    ]
    return leaf.title_format.split("{}"), codes


def _sentence_pieces(sentence: str) -> tuple[list[str], list[int]]:
    lits, codes = [], []
    for literal, field, _, _ in string.Formatter().parse(sentence):
        lits.append(literal)
        if field:
            codes.append(_FIELD_CODES[field])
    if len(lits) == len(codes):  # the sentence ends with a field
        lits.append("")
    return lits, codes


def _templates(pool: _Interner, parsed: list[tuple[list[str], list[int]]]) -> Template:
    width = max(len(codes) for _, codes in parsed)
    lit = np.zeros((len(parsed), width + 1), dtype=np.int64)
    field = np.full((len(parsed), width), NO_FIELD, dtype=np.int64)
    for row, (lits, codes) in enumerate(parsed):
        # Pieces after the last field are padded with empty strings before the final literal.
        lit[row, : len(codes)] = [pool.add(s) for s in lits[: len(codes)]]
        lit[row, width] = pool.add(lits[len(codes)])
        field[row, : len(codes)] = codes
    return Template(lit=lit, field=field)
