"""The catalog plan: the taxonomy compiled into arrays that vectorised generation indexes.

Compiling once (leaf probabilities, brand subsets, attribute grids, title templates) keeps the
per-shard work to NumPy gathers and Polars string kernels, never a Python loop over rows.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from shopgen.gen.seeding import stream
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.gen.vocab import brand_pools
from shopgen.schemas.taxonomy import BoolAttr, EnumAttr, NumericAttr, Taxonomy

if TYPE_CHECKING:
    from shopgen.gen.catalog_tables import TextTables

#: Axes whose values have no natural order: a product offers a random subset of them and no
#: value costs more. Every other axis is sized (smallest first): a product offers a contiguous
#: run of sizes, and for numeric sizes ("256 GB", "6 ft") each step up costs more.
UNORDERED_AXES = frozenset({"color", "scent", "flavor", "pattern", "style", "finish"})


@dataclass(frozen=True)
class AttrPlan:
    """One attribute of a leaf, ready for vectorised sampling and rendering."""

    name: str
    kind: str  # "enum" | "numeric" | "boolean"
    cum_weights: np.ndarray  # enum: cumulative weights; numeric: grid size as one value
    display: np.ndarray  # value index → how the value reads ("" for a false boolean)
    json_value: np.ndarray  # value index → the value as a JSON literal
    p_true: float = 0.0


@dataclass(frozen=True)
class LeafPlan:
    """One leaf category, compiled."""

    code: int
    category_id: str
    name: str
    department_id: str
    department: str
    path: str
    brands: np.ndarray
    brand_cum: np.ndarray
    lines: np.ndarray
    nouns: np.ndarray
    attrs: tuple[AttrPlan, ...]
    key_attrs: tuple[int, ...]  # indices into attrs
    title_format: str  # Polars pl.format template
    title_fields: tuple[str, ...]  # "brand" | "line" | "noun" | attribute name, in order
    axes: tuple[str, ...]
    price_median: float
    price_sigma: float
    rating_mean: float
    rating_sd: float
    ship_days: np.ndarray
    ship_cum: np.ndarray
    stock_p_zero: float
    stock_median: float


@dataclass(frozen=True)
class LeafNumbers:
    """Per-leaf parameters as arrays indexed by leaf code, so a shard applies them at once."""

    price_median: np.ndarray
    price_sigma: np.ndarray
    rating_mean: np.ndarray
    rating_sd: np.ndarray
    stock_p_zero: np.ndarray
    stock_median: np.ndarray
    department: pl.Series
    category_id: pl.Series
    path: pl.Series

    @classmethod
    def of(cls, leaves: tuple[LeafPlan, ...]) -> LeafNumbers:
        """Collect the leaves' parameters column by column."""

        def col(name: str) -> np.ndarray:
            return np.array([getattr(leaf, name) for leaf in leaves], dtype=np.float64)

        def text(name: str) -> pl.Series:
            return pl.Series(name, [getattr(leaf, name) for leaf in leaves], dtype=pl.String)

        return cls(
            **{
                n: col(n)
                for n in (
                    "price_median",
                    "price_sigma",
                    "rating_mean",
                    "rating_sd",
                    "stock_p_zero",
                    "stock_median",
                )
            },
            department=text("department"),
            category_id=text("category_id"),
            path=text("path"),
        )


@dataclass(frozen=True)
class CatalogPlan:
    """Everything generation needs, fixed by (seed, taxonomy)."""

    seed: int
    taxonomy: Taxonomy
    leaves: tuple[LeafPlan, ...]
    leaf_cum: np.ndarray
    axis_values: dict[str, np.ndarray]
    numbers: LeafNumbers

    @cached_property
    def text(self) -> TextTables:
        """The interned text pieces of every leaf (built on first use, once per process)."""
        from shopgen.gen.catalog_tables import build_tables  # it reads this module's types

        return build_tables(self)

    def leaf(self, category_id: str) -> LeafPlan:
        """The compiled leaf with this id."""
        for leaf in self.leaves:
            if leaf.category_id == category_id:
                return leaf
        raise KeyError(category_id)


@lru_cache(maxsize=4)
def compile_plan(seed: int, taxonomy_path: str | None = None) -> CatalogPlan:
    """Compile the taxonomy at ``taxonomy_path`` (the packaged one if None) for ``seed``."""
    tax = load_taxonomy(taxonomy_path)
    pools = brand_pools(tax, seed)
    leaves, shares = [], []
    dept_total = sum(d.weight for d in tax.departments)
    for dept in tax.departments:
        leaf_total = sum(c.weight for c in dept.categories)
        for cat in dept.categories:
            shares.append(dept.weight / dept_total * cat.weight / leaf_total)
            leaves.append(_compile_leaf(tax, len(leaves), dept, cat, pools[dept.id], seed))
    cum = np.cumsum(shares)
    return CatalogPlan(
        seed=seed,
        taxonomy=tax,
        leaves=tuple(leaves),
        leaf_cum=cum / cum[-1],
        axis_values={k: np.array(v) for k, v in tax.variant_axes.items()},
        numbers=LeafNumbers.of(tuple(leaves)),
    )


def _compile_leaf(
    tax: Taxonomy, code: int, dept, cat, pool: tuple[str, ...], seed: int
) -> LeafPlan:
    rng = stream(seed, "leaf-brands", cat.id)
    n_brands = min(len(pool), int(rng.integers(6, 15)))
    brands = np.array(pool)[rng.choice(len(pool), n_brands, replace=False)]
    popularity = 1.0 / np.arange(1, n_brands + 1) ** 0.9  # a few brands dominate each shelf
    attrs = tuple(_compile_attr(name, tax.attribute(cat, name)) for name in cat.attributes)
    names = [a.name for a in attrs]
    fields = tuple(f for _, f, _, _ in string.Formatter().parse(cat.title) if f)
    template = "".join(
        lit + ("{}" if f else "") for lit, f, _, _ in string.Formatter().parse(cat.title)
    )
    price, rating = cat.price or dept.price, cat.rating or dept.rating
    ship, stock = cat.ship or dept.ship, cat.stock or dept.stock
    return LeafPlan(
        code=code,
        category_id=cat.id,
        name=cat.name,
        department_id=dept.id,
        department=dept.name,
        path=" > ".join(cat.path),
        brands=brands,
        brand_cum=np.cumsum(popularity) / popularity.sum(),
        lines=np.array(cat.lines or dept.lines),
        nouns=np.array(cat.nouns),
        attrs=attrs,
        key_attrs=tuple(names.index(k) for k in cat.key_attrs),
        title_format=template,
        title_fields=fields,
        axes=tuple(cat.variant_axes),
        price_median=price.median,
        price_sigma=price.sigma,
        rating_mean=rating.mean,
        rating_sd=rating.sd,
        ship_days=np.array(ship.days, dtype=np.int8),
        ship_cum=np.cumsum(ship.weights) / np.sum(ship.weights),
        stock_p_zero=stock.p_zero,
        stock_median=stock.median,
    )


def _compile_attr(name: str, spec: EnumAttr | NumericAttr | BoolAttr) -> AttrPlan:
    if isinstance(spec, EnumAttr):
        w = np.array(spec.weights or [1.0] * len(spec.values), dtype=float)
        return AttrPlan(
            name=name,
            kind="enum",
            cum_weights=np.cumsum(w) / w.sum(),
            display=np.array(spec.values),
            json_value=np.array([json.dumps(v) for v in spec.values]),
        )
    if isinstance(spec, NumericAttr):
        grid = spec.grid()
        shown = [format_number(v) for v in grid]
        return AttrPlan(
            name=name,
            kind="numeric",
            cum_weights=np.array([len(grid)]),
            display=np.array(
                [spec.fmt.replace("{v}", s).replace("{unit}", spec.unit) for s in shown]
            ),
            json_value=np.array(shown),
        )
    return AttrPlan(
        name=name,
        kind="boolean",
        cum_weights=np.array([1.0]),
        display=np.array(["", spec.label]),
        json_value=np.array(["false", "true"]),
        p_true=spec.p_true,
    )


def format_number(value: float) -> str:
    """A grid value as shoppers read it: ``65`` not ``65.0``, ``2.5`` stays ``2.5``."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
