"""Constraints, feasible sets and preference utility: what discovery and substitution share.

A recommendation task is a hard filter (:class:`Constraints`: a category, price ceiling, rating
floor, shipping days, brand, attribute values) and a soft order (:class:`Preference`: the
customer's weights over price, rating, ship speed and brand loyalty, as they state them: the
users table's fine weights mapped to strength words by rank, :func:`stated_weights`).
Generation computes the feasible set exactly with boolean NumPy masks over one category's
products (:class:`Columns`: attribute JSON decoded, values factorised, once per category and
cached on the :class:`GenContext`, :func:`tables`); :meth:`Constraints.expr` is the same filter
in Polars, the reference the masks are tested against. The verifier re-checks each recommended product with
:meth:`Constraints.holds` and :meth:`Preference.utility` on the facts the runtime recorded; both
sides use the same float arithmetic in the same order, rounded to :data:`UTILITY_DIGITS`.

Ranking is graded by nDCG@k with gains shifted by a floor (:func:`gain`, :func:`gain_floor`):
a product's gain is its utility above the lowest utility of the task's in-stock feasible set
(the worst product the customer would still accept), plus :data:`GAIN_MARGIN`. Utilities
within one task's feasible set bunch closely (0.24–0.36, say), so with raw utilities as gains
nDCG barely depended on the order: the feasible products worst first were still correct in
40% of tasks, and an agent ignoring the stated preference in 65–75%. The margin keeps every
stored gain, and so the ideal DCG, positive.

A ranking must depend on the stated preference (discovery 1.7, substitution 1.6): a task
leaves at least :func:`pool_min` (2k) feasible products in stock, so which k are picked
counts; the anchors are the feasible products' own range (:func:`anchors_over`), so each
factor spreads over 0–1 and weighs what its strength word says; and a list must reach
nDCG ≥ 0.95. Before, the best order of the feasible products by one factor alone (cheapest,
best-rated or fastest first) passed on 58–88% of tasks at each d (5k products, 50 tasks at
each of d = 0/4/8/12), mostly because a feasible set of exactly k left only the order to
grade, and delivery days, spread over the whole category's range, outweighed ratings that
within a set differ by tenths of a star. Now 8–30%, a random order 0–6%, and the stated
order 100% (of every feasible product; the oracle's searches find a passing list or the task
is redrawn). Nor may a guess of what customers usually want pass: a customer names two
factors, the top "very much" and the next "quite a lot" (:data:`RANK_WEIGHTS`), so price,
rating and delivery weighed alike passes 19–36% of tasks at d ≥ 4, not 56–69%.

Decidable from cards (issue #7): every constraint refers to a fact a search card shows (price,
rating, ship days, brand, key attribute values; :func:`visible_attrs` keeps only attribute
values a card names unambiguously), and a utility is a function of card facts and the stated
preference (:meth:`Preference.statement`), which names the anchors the normalisation uses
(the feasible products' price range rounded outwards to whole dollars, their ratings and
shipping days), so an agent computes every card's utility exactly. The category itself is
not on a card: titles name the product kind, and ``catalog_get_product`` shows the category.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.tasks.base import GenContext, Redraw, per_root, spoken_list
from shopgen.gen.tasks.kinds import kind_of
from shopgen.schemas.taxonomy import Category

#: Utilities are rounded to this many digits on both sides (generator and verifier).
UTILITY_DIGITS = 6
#: Feasible products stored in a goal (best first); the size of the whole set is stored too.
FEASIBLE_CAP = 50
#: nDCG@k a recommendation list must reach to be correct (the oracle's list always does), on
#: gains above the goal's floor (:func:`gain`). Measured on 5k products (40 tasks at each of
#: d = 0/4/8/12 per env, every feasible in-stock product given, a pool of 2k and feasible-set
#: anchors): the best order by one factor alone is correct on 48–70% of tasks at 0.85, 38–52%
#: at 0.9 and 22–30% at 0.95; the stated order always. Redraws per task at d = 5/10/12 stay
#: near 0.85's (discovery 0.07/0.20/0.38 against 0.05/0.17/0.42 before discovery 1.7; the
#: findability check alone redraws 0–2 of 40 tasks at each d, against 1–10 before).
NDCG_THRESHOLD = 0.95
#: The nDCG a list must reach at d ≤ 1 (:func:`ndcg_threshold`): where an agent has one
#: search, the best order by one factor alone passes 20–60% of tasks (100k products, 15 at
#: each of d = 0 and 1), which is the price of keeping those tasks findable.
NDCG_THRESHOLD_ONE_SEARCH = 0.85
#: A ranking task's feasible in-stock products number at least this many times its k
#: (:func:`pool_min`): choosing which k counts, not only their order.
POOL_PER_PICK = 2
#: Floor added to every utility so a feasible product's utility is never zero.
UTILITY_FLOOR = 0.05
#: Gain of the lowest-utility product of a goal's in-stock feasible set (:func:`gain_floor`):
#: a hundredth of the utility scale, so a list of one product (or of ties) has a positive
#: ideal DCG while the order of distinct utilities still decides nDCG.
GAIN_MARGIN = 0.01
_PREF_KEYS = ("price", "rating", "ship_speed", "brand_loyalty")
#: How the customer names each preference factor (the brand factor names the liked brands).
FACTOR_WORDS = {
    "price": "a low price",
    "rating": "a high rating",
    "ship_speed": "fast delivery",
    "brand_loyalty": "the brand",
}
#: Strength words and the weight each one means, strongest first; the stated weight is what
#: the ranking uses. A customer says them by rank (:data:`RANK_WEIGHTS`); "a little" is no
#: longer said, and stays for the goals drawn before (and agents reading them).
LEVELS = (("very much", 4.0), ("quite a lot", 2.0), ("a little", 1.0), ("not at all", 0.0))
#: The stated weight of a customer's factors by the rank of their raw weight in the users
#: table, largest first (:func:`stated_weights`): the top factor "very much", the next "quite
#: a lot", the other two "not at all". Raw shares (gamma(2, 1) draws normalised) mostly lie
#: within a factor of two of each other, and mapped through fixed floors (0.4/0.25/0.1) they
#: said 2/2/1/1 or 4/2/1/1 on most customers: price, rating and delivery weighed alike, which
#: an agent that never asks the preference assumes anyway, was correct on 56–69% of tasks at
#: d = 4/8/12 (5k products, 150 tasks each, every feasible in-stock product). Two named
#: factors, one twice the other, leave that guess 19–36%; one factor alone passes 19–35%
#: (13–28% before) and the stated order 100%.
RANK_WEIGHTS = (4.0, 2.0, 0.0, 0.0)


@dataclass(frozen=True, kw_only=True)
class Constraints:
    """A hard filter over one category's products.

    Attributes:
        category: the leaf category id.
        price_max: highest price accepted, or None.
        rating_min: lowest rating accepted, or None.
        ship_days_max: most shipping days accepted, or None.
        brand: the only brand accepted, or None.
        attrs: attribute name → the value it must have (string attributes only).
        exclude: product ids never feasible (a substitute is not the original).
        kind: nouns of the one kind of product accepted, when the category holds several
            (``gen.tasks.kinds``: a title's longest noun among ``kind`` and ``other_kinds``
            must be one of ``kind``); empty: any.
        other_kinds: the category's nouns of the other kinds.
    """

    category: str
    price_max: float | None = None
    rating_min: float | None = None
    ship_days_max: int | None = None
    brand: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    kind: tuple[str, ...] = ()
    other_kinds: tuple[str, ...] = ()

    def expr(self) -> pl.Expr:
        """The filter as a Polars expression: the reference :meth:`mask` is tested against.

        Over a frame of one category's products with each string attribute as a column
        ``a.<name>`` (null where a product lacks it or its value is not a string).
        """
        e = pl.lit(True)
        if self.price_max is not None:
            e &= pl.col("price") <= self.price_max
        if self.rating_min is not None:
            e &= pl.col("rating") >= self.rating_min
        if self.ship_days_max is not None:
            e &= pl.col("ship_days") <= self.ship_days_max
        if self.brand is not None:
            e &= pl.col("brand") == self.brand
        for name, value in self.attrs.items():
            e &= pl.col(f"a.{name}").fill_null("") == value
        if self.exclude:
            e &= ~pl.col("product_id").is_in(list(self.exclude))
        if self.kind:
            e &= pl.col("title").map_elements(self._of_kind, return_dtype=pl.Boolean)
        return e

    def _of_kind(self, title: str | None) -> bool:
        return kind_of(title or "", self.kind, self.other_kinds)

    def mask(self, cols: Columns) -> np.ndarray:
        """:meth:`expr` over one category's :class:`Columns`: which rows meet every constraint.

        Generation filters many times per task and a Polars filter costs ~100–300 µs whatever
        the size, so it compares NumPy columns instead (a Hypothesis property holds this equal
        to :meth:`expr`). The category itself is not compared: the columns are one category's.
        """
        m = np.ones(len(cols), dtype=bool)
        if self.price_max is not None:
            m &= cols.price <= self.price_max
        if self.rating_min is not None:
            m &= cols.rating >= self.rating_min
        if self.ship_days_max is not None:
            m &= cols.ship_days <= self.ship_days_max
        if self.brand is not None:
            m &= cols.equal("brand", self.brand)
        for name, value in self.attrs.items():
            m &= cols.equal(f"a.{name}", value)
        for pid in self.exclude:
            row = cols.position.get(pid)
            if row is not None:
                m[row] = False
        if self.kind:
            m &= cols.of_kind(self.kind, self.other_kinds)
        return m

    def broken(self, product_id: str, fact: dict[str, Any]) -> list[str]:
        """The constraints a product breaks (empty when it is feasible), by slot name."""
        out = []
        if fact["category_id"] != self.category:
            out.append("category")
        if self.price_max is not None and fact["price"] > self.price_max:
            out.append("price_max")
        if self.rating_min is not None and fact["rating"] < self.rating_min:
            out.append("rating_min")
        if self.ship_days_max is not None and fact["ship_days"] > self.ship_days_max:
            out.append("ship_days_max")
        if self.brand is not None and fact["brand"] != self.brand:
            out.append("brand")
        attrs = fact.get("attributes") or {}
        out += [f"attrs.{n}" for n, v in self.attrs.items() if str(attrs.get(n)) != v]
        if product_id in self.exclude:
            out.append("original")
        if self.kind and not self._of_kind(fact.get("title")):
            out.append("kind")
        return out

    def holds(self, product_id: str, fact: dict[str, Any]) -> bool:
        """Whether a product (its recorded facts) meets every constraint."""
        return not self.broken(product_id, fact)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form stored in the goal (the kind only when one is required)."""
        out = {
            "category": self.category,
            "price_max": self.price_max,
            "rating_min": self.rating_min,
            "ship_days_max": self.ship_days_max,
            "brand": self.brand,
            "attrs": dict(self.attrs),
            "exclude": list(self.exclude),
        }
        if self.kind:
            out.update(kind=list(self.kind), other_kinds=list(self.other_kinds))
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Constraints:
        """Inverse of :meth:`to_dict`."""
        return cls(
            category=d["category"],
            price_max=d.get("price_max"),
            rating_min=d.get("rating_min"),
            ship_days_max=d.get("ship_days_max"),
            brand=d.get("brand"),
            attrs=dict(d.get("attrs") or {}),
            exclude=tuple(d.get("exclude") or ()),
            kind=tuple(d.get("kind") or ()),
            other_kinds=tuple(d.get("other_kinds") or ()),
        )


@dataclass(frozen=True, kw_only=True)
class Preference:
    """The customer's soft order: a weighted sum of normalised price, rating, speed, brand.

    Price, rating and shipping are normalised over the anchors (``price_lo``…``price_hi``,
    ``rating_lo``…``rating_hi``, ``ship_lo``…``ship_hi``): the range of the task's feasible
    products (:func:`anchors_over`), so each factor spans 0–1 over the choice at hand and
    its stated weight is its share of the spread. The customer says these anchors
    (:meth:`statement`); the price range is rounded outwards to whole dollars, so the values
    said are the values used. Goals before discovery 1.7 / substitution 1.6 anchored price
    and shipping on the whole category and rating on 1–5 stars (the defaults here).
    """

    weights: dict[str, float]
    brands: tuple[str, ...]
    price_lo: float
    price_hi: float
    ship_lo: int
    ship_hi: int
    rating_lo: float = 1.0
    rating_hi: float = 5.0

    def _parts(self, price: Any, rating: Any, ship: Any, loyal: Any) -> Any:
        w = self.weights
        total = sum(w[k] for k in _PREF_KEYS) or 1.0
        p_span = (self.price_hi - self.price_lo) or 1.0
        r_span = (self.rating_hi - self.rating_lo) or 1.0
        s_span = (self.ship_hi - self.ship_lo) or 1
        s = (
            w["price"] * ((self.price_hi - price) / p_span)
            + w["rating"] * ((rating - self.rating_lo) / r_span)
            + w["ship_speed"] * ((self.ship_hi - ship) / s_span)
            + w["brand_loyalty"] * loyal
        )
        return UTILITY_FLOOR + (1.0 - UTILITY_FLOOR) * s / total

    def utilities(self, cols: Columns, rows: np.ndarray) -> np.ndarray:
        """Utilities of some rows of a category's :class:`Columns` (vectorised, same arithmetic)."""
        codes, index = cols.codes("brand")
        loyal = np.zeros(len(index), dtype=np.float64)  # brand code → 1.0 for a liked brand
        loyal[[index[b] for b in self.brands if b in index]] = 1.0
        u = self._parts(
            cols.price[rows],
            cols.rating[rows],
            cols.ship_days[rows].astype(np.float64),
            loyal[codes[rows]],
        )
        return np.round(u, UTILITY_DIGITS)

    def utility(self, fact: dict[str, Any]) -> float:
        """One product's utility from its recorded facts."""
        u = self._parts(
            np.float64(fact["price"]),
            np.float64(fact["rating"]),
            np.float64(fact["ship_days"]),
            np.float64(fact["brand"] in self.brands),
        )
        return float(np.round(u, UTILITY_DIGITS))

    def order(self) -> list[str]:
        """The four factors, most important first (ties by the fixed factor order)."""
        return sorted(_PREF_KEYS, key=lambda k: (-self.weights[k], _PREF_KEYS.index(k)))

    def statement(self) -> str:
        """The whole preference in words: every factor in weight order, strength and anchors.

        ``"a low price (very much: $19 is ideal, $80 the worst), then a high rating (quite a
        lot: 4.8 stars is ideal, 3.9 stars the worst), then fast delivery (not at all), then
        the brand (not at all)"``. The strength words name the
        weights exactly (:data:`LEVELS`) and each weighed factor names the values its score
        runs between (0 at the worst, 1 at the ideal, linear), the very numbers
        :meth:`utility` normalises with, so an agent that reads them computes each card's
        utility as the verifier does. Before 1.4 the price and shipping anchors were unsaid
        (the whole category's range) and an agent could only estimate them from cards.
        The ideal and worst values are those of the feasible products (:func:`anchors_over`),
        not the best and worst the whole category offers.
        """
        words = {w: say for say, w in LEVELS}
        parts = []
        for k in self.order():
            w = self.weights[k]
            said = words[w] + (f": {self.anchors(k)}" if w > 0 and k != "brand_loyalty" else "")
            parts.append(f"{_factor_words(k, self.brands, liked=w > 0)} ({said})")
        return ", then ".join(parts)

    def anchors(self, key: str) -> str:
        """A factor's ideal and worst values in words, as :meth:`utility` normalises with them."""
        if key == "price":
            return f"{dollars(self.price_lo)} is ideal, {dollars(self.price_hi)} the worst"
        if key == "rating":
            return f"{_stars(self.rating_hi)} is ideal, {_stars(self.rating_lo)} the worst"
        if key == "ship_speed":
            return f"{_days(self.ship_lo)} is ideal, {_days(self.ship_hi)} the worst"
        raise ValueError(f"factor {key!r} has no anchors")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form stored in the goal."""
        return {
            "weights": dict(self.weights),
            "brands": list(self.brands),
            "price_lo": self.price_lo,
            "price_hi": self.price_hi,
            "ship_lo": self.ship_lo,
            "ship_hi": self.ship_hi,
            "rating_lo": self.rating_lo,
            "rating_hi": self.rating_hi,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Preference:
        """Inverse of :meth:`to_dict`."""
        return cls(
            weights={k: float(d["weights"][k]) for k in _PREF_KEYS},
            brands=tuple(d["brands"]),
            price_lo=float(d["price_lo"]),
            price_hi=float(d["price_hi"]),
            ship_lo=int(d["ship_lo"]),
            ship_hi=int(d["ship_hi"]),
            rating_lo=float(d.get("rating_lo", 1.0)),  # goals before discovery 1.7: 1–5 stars
            rating_hi=float(d.get("rating_hi", 5.0)),
        )


def dollars(x: float) -> str:
    """A price as the customer says it: ``$19`` for whole dollars, else ``$19.99``."""
    return f"${int(x)}" if float(x).is_integer() else f"${x:.2f}"


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def _stars(x: float) -> str:
    """A rating as the customer says it: ``1 star``, ``5 stars``, ``4.7 stars``."""
    return "1 star" if x == 1 else f"{x:g} stars"


def gain_floor(utilities: Sequence[float]) -> float:
    """The floor gains are measured from: the lowest utility less :data:`GAIN_MARGIN`.

    ``utilities``: a goal's whole in-stock feasible set. Its lowest product gains
    :data:`GAIN_MARGIN` (> 0, so the ideal DCG is positive). The whole set, not the stored
    best :data:`FEASIBLE_CAP`: the cap is a storage limit, and its 50th product as the floor
    made every pick below it worth nothing — at d = 5 on 100k products the findability check
    then redrew 0.56 (discovery) and 1.15 (substitution) draws per task, 0.47 and 0.93 from
    the whole set (0.19 and 0.42 on raw utilities).

    Raises:
        ValueError: no utilities (a goal without feasible products).
    """
    if not utilities:
        raise ValueError("no feasible utilities to take a gain floor from")
    return round(min(utilities) - GAIN_MARGIN, UTILITY_DIGITS)


def gain(utility: float, floor: float) -> float:
    """A feasible in-stock product's nDCG gain: its utility above ``floor``, never negative.

    The generator's findability check (``recsearch.play``) and the verifier
    (``verifiers.ranking``) both call this, so they compute the same floats.
    """
    return max(0.0, round(utility - floor, UTILITY_DIGITS))


def ndcg(gains: Iterable[float], ideal: Iterable[float]) -> float:
    """NDCG of ``gains`` in list order against the ``ideal`` gains (best first).

    Raises:
        ValueError: when the ideal DCG is not positive (a goal without feasible products).
    """
    gains, ideal = list(gains), list(ideal)
    idcg = dcg(ideal, discounts(len(ideal)))
    if idcg <= 0:
        raise ValueError("ideal DCG must be positive")
    return dcg(gains, discounts(len(gains))) / idcg


@lru_cache(maxsize=64)
def discounts(k: int) -> tuple[float, ...]:
    """The DCG discounts of the first ``k`` positions, ``log2(i + 2)``."""
    return tuple(math.log2(i + 2) for i in range(k))


def dcg(gains: Sequence[float], by: Sequence[float]) -> float:
    """DCG of ``gains`` in list order, position i divided by ``by[i]`` (:func:`discounts`).

    Gains past the discounts are not counted. Verifiers keep a goal's discounts and ideal DCG
    and divide, the same floats as :func:`ndcg`.
    """
    return sum(g / d for g, d in zip(gains, by, strict=False))


# --- the per-context cache -------------------------------------------------------------------


class Columns:
    """One category's products as NumPy columns and lists, in catalog order.

    What generation draws from and filters: a category holds a few hundred to a few thousand
    products and a task filters it a dozen times, so masks over these arrays
    (:meth:`Constraints.mask`) replace Polars filters, whose fixed cost dominated. Brand and
    attribute values are factorised into integer codes on first use (:meth:`codes`), so an
    equality or a count per value is one vectorised operation.

    Attributes:
        category: the category id.
        product_id, brand: per-row values (lists).
        price, rating, ship_days, stock_qty: per-row NumPy arrays (the catalog's dtypes).
        in_stock: ``stock_qty > 0``.
        attrs: attribute name → per-row string value (None where the product lacks it or its
            value is not a string), for every attribute some product of the category has.
        position: product id → row.
    """

    def __init__(self, raw: pl.DataFrame) -> None:
        self.category: str = raw["category_id"][0]
        self.product_id: list[str] = raw["product_id"].to_list()
        self._title = raw["title"]  # only drawn rows need theirs: no list of every title
        # Likewise only goals need the key attribute values (see :meth:`key_attrs`).
        self._key_attrs = raw["key_attrs"]
        self.brand: list[str] = raw["brand"].to_list()
        self.price: np.ndarray = raw["price"].to_numpy()
        self.rating: np.ndarray = raw["rating"].to_numpy()
        self.ship_days: np.ndarray = raw["ship_days"].to_numpy()
        self.stock_qty: np.ndarray = raw["stock_qty"].to_numpy()
        self.in_stock: np.ndarray = self.stock_qty > 0
        # One parse of a JSON array, not one per row: a third of the cost on a new category.
        decoded = json.loads("[" + raw["attributes"].str.join(",").item() + "]")
        names = sorted({k for d in decoded for k in d})
        # Constraints compare strings only: other values (numbers, booleans) count as missing.
        self.attrs = {
            n: [v if isinstance(v := d.get(n), str) else None for d in decoded] for n in names
        }
        self.position = {pid: i for i, pid in enumerate(self.product_id)}
        self._codes: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        self._kinds: dict[tuple[tuple[str, ...], tuple[str, ...]], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.product_id)

    @cached_property
    def id_rank(self) -> np.ndarray:
        """Each row's place in the category's sorted product ids (equal ids share one).

        Ranking breaks utility ties by id; with these ranks it is one ``np.lexsort``.
        """
        return np.unique(np.array(self.product_id), return_inverse=True)[1]

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a dict of plain Python values (``a.<name>`` for attributes)."""
        out = {
            "product_id": self.product_id[i],
            "title": self._title[i],
            "brand": self.brand[i],
            "category_id": self.category,
            "price": float(self.price[i]),
            "rating": float(self.rating[i]),
            "ship_days": int(self.ship_days[i]),
            "stock_qty": int(self.stock_qty[i]),
        }
        out.update((f"a.{n}", values[i]) for n, values in self.attrs.items())
        return out

    @cached_property
    def _key_attr_lists(self) -> list[list[str]]:
        return self._key_attrs.to_list()

    def key_attrs(self, rows: list[int]) -> list[list[str]]:
        """The key attribute values of ``rows`` as their search cards show them (fresh lists).

        The category's column becomes Python lists on its first goal (~50 µs for 500 rows),
        then a goal's ~50 rows are list copies: an Arrow gather per goal cost 80–270 µs in a
        generation process (~3% of a discovery task), though ~25 µs alone.
        """
        lists = self._key_attr_lists
        return [lists[r].copy() for r in rows]

    def of_kind(self, kind: tuple[str, ...], others: tuple[str, ...]) -> np.ndarray:
        """Rows whose title names a product of ``kind`` (:func:`~shopgen.gen.tasks.kinds.kind_of`).

        Read from every title once per kind and remembered: a task filters its category many
        times with the same kind.
        """
        hit = self._kinds.get((kind, others))
        if hit is None:
            titles = self._title.to_list()
            hit = np.fromiter((kind_of(t, kind, others) for t in titles), bool, len(titles))
            self._kinds[kind, others] = hit
        return hit

    def codes(self, column: str) -> tuple[np.ndarray, dict[Any, int]]:
        """``brand`` or ``a.<name>`` factorised: per-row codes and value → code.

        An attribute's missing values count as ``""``, as :meth:`Constraints.expr` fills them
        (an attribute no product of the category has is missing everywhere).
        """
        hit = self._codes.get(column)
        if hit is not None:
            return hit
        if column == "brand":
            values: list[Any] = self.brand
        else:
            values = self.attrs.get(column[2:]) or [None] * len(self)
            values = ["" if v is None else v for v in values]
        index: dict[Any, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), np.int64, len(self))
        self._codes[column] = (codes, index)
        return codes, index

    def equal(self, column: str, value: Any) -> np.ndarray:
        """Rows whose ``brand`` or ``a.<name>`` is ``value`` (see :meth:`codes`)."""
        codes, index = self.codes(column)
        return codes == index.get(value, -1)

    def counts(self, column: str, rows: np.ndarray) -> dict[Any, int]:
        """How many of the masked ``rows`` take each value of a column (values that occur)."""
        codes, index = self.codes(column)
        n = np.bincount(codes[rows], minlength=len(index))
        return {v: int(n[c]) for v, c in index.items() if n[c]}


class Tables:
    """One catalog's products split by category, as :class:`Columns` built lazily per category."""

    def __init__(self, ctx: GenContext) -> None:
        self.ctx = ctx
        self._groups: dict[str, pl.DataFrame] | None = None
        self._columns: dict[str, Columns] = {}
        self._visible: dict[str, dict[str, frozenset[str]]] = {}
        self._leaves: dict[str, Category] | None = None
        self._name_counts: dict[str, int] | None = None  # lower-cased leaf name → leaves

    def _group(self) -> dict[str, pl.DataFrame]:
        if self._groups is None:
            cols = ["product_id", "title", "brand", "category_id", "price", "rating"]
            cols += ["ship_days", "stock_qty", "attributes", "key_attrs"]
            parts = self.ctx.products.select(cols).partition_by("category_id", as_dict=True)
            self._groups = {k[0]: v for k, v in parts.items()}
        return self._groups

    def columns(self, category: str) -> Columns:
        """The category's :class:`Columns` (its raw partition is dropped once they are built)."""
        hit = self._columns.get(category)
        if hit is None:
            hit = self._columns[category] = Columns(self._group().pop(category))
        return hit

    def leaf(self, category: str) -> Category:
        """The taxonomy's leaf category with this id."""
        if self._leaves is None:
            self._leaves = {c.id: c for _, c in self.ctx.store_taxonomy.leaves()}
        return self._leaves[category]

    def said_name(self, category: str) -> str:
        """What a customer calls a category: its lower-cased leaf name, qualified if shared.

        A leaf name another leaf also has is said with the department ("jeans from men's
        clothing"). Cards show only the leaf name, so "jeans" said for Men's Jeans let an agent
        pick Women's Jeans, which the verifier counts as the wrong category: the customer must
        name the kind of product so that one category fits.
        """
        leaf = self.leaf(category)
        name = leaf.name.lower()
        if self._name_counts is None:
            self._name_counts = {}
            for c in self._leaves.values():  # filled by self.leaf
                key = c.name.lower()
                self._name_counts[key] = self._name_counts.get(key, 0) + 1
        return name if self._name_counts[name] == 1 else f"{name} from {leaf.path[0].lower()}"

    def visible(self, category: str) -> dict[str, frozenset[str]]:
        """Attributes a search card shows, each with the values that name it unambiguously.

        A card lists the values of the leaf's key attributes without their names, so a value
        says which attribute it is only when no other key attribute of the category takes it
        too; such values (and non-key attributes) are never drawn as constraints.
        """
        hit = self._visible.get(category)
        if hit is not None:
            return hit
        attrs = self.columns(category).attrs
        keys = [a for a in self.leaf(category).key_attrs if a in attrs]
        values = {a: {v for v in attrs[a] if v is not None} for a in keys}
        seen: dict[str, int] = {}
        for vs in values.values():
            for v in vs:
                seen[v] = seen.get(v, 0) + 1
        out = {a: frozenset(v for v in vs if seen[v] == 1) for a, vs in values.items()}
        self._visible[category] = out
        return out


def tables(ctx: GenContext) -> Tables:
    """The context's :class:`Tables`, made once and cached on the context's root."""
    return per_root(ctx, Tables)


def _stated_preferences(
    ctx: GenContext,
) -> dict[str, tuple[dict[str, float], tuple[str, ...]]]:
    """Every customer's stated weights (:func:`stated_weights`) and liked brands, by user id.

    Decoded once per catalog: reading one customer's row from the users frame and parsing its
    JSON cost ~60 µs a task, a dictionary look-up nothing.
    """
    users = ctx.users
    out = {}
    for user_id, text in zip(users["user_id"], users["preferences"], strict=True):
        prefs = json.loads(text)
        weights = stated_weights({k: float(prefs.get(k, 0.0)) for k in _PREF_KEYS})
        out[user_id] = (weights, tuple(prefs.get("brands") or ()))
    return out


def preference(ctx: GenContext, user_id: str, cons: Constraints) -> Preference:
    """A customer's :class:`Preference` over the products meeting ``cons``, as they state it.

    The users table holds fine weights; the customer says each factor's strength in words
    (:func:`stated_weights`), and those words *are* the preference the ranking is graded by,
    so what the customer tells the agent decides the ideal list (issue #7: solvable from what
    the customer gives). The anchors are the range of the products meeting ``cons`` that the
    catalog has in stock (:func:`anchors_over`; before the episode's out-of-stock marks,
    which fall on the best of them by this very preference).

    Raises:
        Redraw: no product of the category meets ``cons`` in stock.
    """
    stated = per_root(ctx, _stated_preferences).get(user_id)
    if stated is None:
        raise KeyError(f"no customer {user_id!r}")
    weights, brands = stated
    cols = tables(ctx).columns(cons.category)
    rows = np.flatnonzero(cons.mask(cols) & cols.in_stock)
    if not len(rows):
        raise Redraw("no feasible product in stock to anchor the preference on")
    return Preference(weights=dict(weights), brands=brands, **anchors_over(cols, rows))


def anchors_over(cols: Columns, rows: np.ndarray) -> dict[str, Any]:
    """The utility's anchors over some rows: their price (whole dollars, outwards), rating, days.

    Over the feasible products rather than the whole category, so every factor spans 0–1
    over the choice the customer grades (discovery 1.7): on category anchors price and
    shipping spread over 0.4–1.0 of the scale within a feasible set, rating (a price
    ceiling's and a rating floor's products all rated 4–5 stars) over 0.2–0.26, so a stated
    "very much" on rating weighed less than "a little" on delivery, and ordering by
    delivery days alone passed the nDCG check on 54–88% of tasks (5k products, 50 tasks
    at each of d = 0/4/8/12).
    """
    price, rating, ship = cols.price[rows], cols.rating[rows], cols.ship_days[rows]
    return {
        "price_lo": float(math.floor(price.min())),
        "price_hi": float(math.ceil(price.max())),
        "rating_lo": round(float(rating.min()), 1),
        "rating_hi": round(float(rating.max()), 1),
        "ship_lo": int(ship.min()),
        "ship_hi": int(ship.max()),
    }


#: Words that ask the customer about their preference (the ``priority`` fact); the simulated
#: customer also answers the fact's label ("priority order") and "what matters".
PRIORITY_WORDS = [
    "priority",
    "priorities",
    "matters most",
    "what matters",
    "most important",
    "prefer",
    "preference",
    "care about",
]


def preference_fact(pref: Preference) -> dict[str, Any]:
    """The ``priority`` fact (``Draft.facts``): the whole preference, said when asked.

    Of kind ``preference``, which typo noise leaves byte-for-byte (``gen.slots``): its
    numbers, strength words and brands decide the ranking ("$115 is ideal" must not reach the
    agent as "$1155 is iddeal").
    """
    return {
        "value": pref.statement(),
        "kind": "preference",
        "label": "priority order",
        "keywords": PRIORITY_WORDS,
    }


def stated_weights(raw: dict[str, float]) -> dict[str, float]:
    """The weights of the strength words a customer uses for raw weight shares, by rank.

    ``raw``: factor → the users table's weight (a missing factor weighs 0). The largest gets
    :data:`RANK_WEIGHTS`'s first, and so on; equal raw weights (stored to two digits) rank
    in the fixed factor order, so the words depend on the customer alone.
    """
    order = sorted(_PREF_KEYS, key=lambda k: (-float(raw.get(k, 0.0)), _PREF_KEYS.index(k)))
    return {k: RANK_WEIGHTS[order.index(k)] for k in _PREF_KEYS}


def _factor_words(key: str, brands: tuple[str, ...], *, liked: bool = True) -> str:
    """How the customer names a factor: ``a low price``, ``my favourite brands "A" and "B"``.

    Brand names are quoted: some hold "and" or "&" themselves.
    """
    if key == "brand_loyalty":
        if not (liked and brands):
            return FACTOR_WORDS[key]
        names = spoken_list([f'"{b}"' for b in brands])
        return f"my favourite brands {names}"
    return FACTOR_WORDS[key]


# --- drawing constraints from a real product -------------------------------------------------


def visible_attrs(ctx: GenContext, row: dict[str, Any]) -> list[str]:
    """Attribute names of ``row`` a customer may require: decidable from search cards.

    Only key attributes (the values a card lists) whose value names that attribute alone in
    the category (:meth:`Tables.visible`), so an agent that sees a card can tell whether the
    product meets the requirement without looking up its details (issue #7).
    """
    shown = tables(ctx).visible(row["category_id"])
    return [a for a, values in shown.items() if row.get(f"a.{a}") in values]


def draw_category(ctx: GenContext, rng: np.random.Generator) -> str:
    """The category of a product drawn uniformly (so categories weigh by their size).

    One integer draw over the catalog's rows, read from the store's category list (a list
    element, where an element of the Polars column costs microseconds).
    """
    categories = ctx.store.product_list("category_id")
    return categories[int(rng.integers(len(categories)))]


def draw_values(
    target: dict[str, Any],
    kinds: list[str],
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Constraint values the ``target`` product meets, one per kind (slot name).

    Numeric bounds get a random slack past the target's own value, so the target is feasible
    and the set is not a singleton by construction.
    """
    out: dict[str, Any] = {}
    for kind in kinds:
        if kind == "price_max":
            out[kind] = float(math.ceil(target["price"] * (1.0 + rng.uniform(0.0, 0.4))))
        elif kind == "rating_min":
            floor = math.floor(target["rating"] * 2) / 2
            out[kind] = max(1.0, floor - 0.5 * int(rng.integers(0, 2)))
        elif kind == "ship_days_max":
            out[kind] = int(target["ship_days"]) + int(rng.integers(0, 3))
        elif kind == "brand":
            out[kind] = target["brand"]
        elif kind.startswith("attrs."):
            out[kind] = target[f"a.{kind[6:]}"]
    return out


def choose_constraints(
    cols: Columns,
    target: dict[str, Any],
    pool: list[str],
    n: int,
    k: int,
    rng: np.random.Generator,
    *,
    base: Constraints | None = None,
) -> dict[str, Any]:
    """Up to ``n`` constraint values the target meets that leave ≥ ``k`` in-stock products.

    Kinds are tried in a random order; one that would leave fewer than ``k`` feasible in-stock
    products (also meeting ``base``) is skipped, so small catalogs still give solvable tasks
    (m(d) is then a ceiling, reached whenever the category is large enough).
    """
    order = rng.permutation(len(pool)).tolist()
    values: dict[str, Any] = {}
    live = cols.in_stock if base is None else cols.in_stock & base.mask(cols)
    for i in order:
        if len(values) >= n:
            break
        kind = pool[i]
        value = draw_values(target, [kind], rng)[kind]
        trial = live & constraints_from(cols.category, {kind: value}).mask(cols)
        if np.count_nonzero(trial) >= k:
            values[kind] = value
            live = trial
    return {kind: values[kind] for kind in pool if kind in values}


def constraints_from(category: str, values: dict[str, Any], **extra: Any) -> Constraints:
    """:class:`Constraints` from slot-named values (``attrs.color`` → ``attrs["color"]``)."""
    attrs = {k[6:]: v for k, v in values.items() if k.startswith("attrs.")}
    return Constraints(
        category=category,
        price_max=values.get("price_max"),
        rating_min=values.get("rating_min"),
        ship_days_max=values.get("ship_days_max"),
        brand=values.get("brand"),
        attrs={**attrs, **extra.pop("attrs", {})},
        **extra,
    )


@dataclass(frozen=True)
class FeasibleSet:
    """The feasible products of a goal, ranked by utility.

    Attributes:
        ranked: (product_id, utility) of the in-stock feasible products, best first.
        out_of_stock: feasible products the episode marks out of stock.
        size: number of feasible products in the catalog (before episode stock).
    """

    ranked: list[tuple[str, float]]
    out_of_stock: list[str]
    size: int


def rank(cols: Columns, pref: Preference, rows: np.ndarray) -> list[tuple[str, float]]:
    """(product_id, utility) of some rows of a category, best first, ties by product id.

    One NumPy sort on (−utility, id rank) (:attr:`Columns.id_rank`): the order of
    ``sorted(key=(−utility, product_id))`` (both stable), without a Python key per product.
    """
    u = pref.utilities(cols, rows)
    order = np.lexsort((cols.id_rank[rows], -u))
    best = rows[order].tolist()
    return list(zip([cols.product_id[i] for i in best], u[order].tolist(), strict=True))


def pool_min(k: int) -> int:
    """The fewest feasible in-stock products a ranking task of ``k`` picks may have.

    :data:`POOL_PER_PICK` × k: with only k (at d ≥ 8 on 5k products, 70–78% of tasks, the
    out-of-stock marks taking every spare product) the task graded only the order of the
    products every agent had to recommend, and any order of them passed nDCG ≥ 0.85 on
    35–47% of tasks, an order by one factor (price, rating or delivery) on 55–88%.
    """
    return POOL_PER_PICK * k


def feasible_set(
    ctx: GenContext,
    cons: Constraints,
    pref: Preference,
    *,
    k: int,
    p_oos: float,
    rng: np.random.Generator,
) -> FeasibleSet:
    """The exact feasible set, with some of its best products marked out of stock (p_oos).

    At least :func:`pool_min` of ``k`` stay in stock, so the ranking picks k of them.

    Raises:
        Redraw: fewer than :func:`pool_min` of ``k`` feasible products would stay in stock.
    """
    cols = tables(ctx).columns(cons.category)
    feasible = cons.mask(cols)
    size = int(np.count_nonzero(feasible))
    rows = np.flatnonzero(feasible & cols.in_stock)
    need = pool_min(k)
    if len(rows) < need:
        raise Redraw(f"only {len(rows)} feasible in-stock products, need {need}")
    ranked = rank(cols, pref, rows)
    # Out-of-stock marks fall on the products an agent is most likely to pick, while at least
    # pool_min(k) stay in stock (one draw per position, always drawn: positions do not
    # interact).
    draws = rng.random(min(len(ranked), FEASIBLE_CAP))
    spare = len(ranked) - need
    oos = []
    for (pid, _), x in zip(ranked, draws, strict=False):
        if x < p_oos and len(oos) < spare:
            oos.append(pid)
    marked = set(oos)
    kept = [r for r in ranked if r[0] not in marked]
    return FeasibleSet(ranked=kept, out_of_stock=oos, size=size)


def ndcg_threshold(d: int) -> float:
    """The nDCG a recommendation list must reach at difficulty ``d``.

    At d ≤ 1 an agent has T_max = 4 turns of B_tool = 1 call each: after asking for what
    matters it searches once and then recommends. Picking the exact best k of the 60–190
    feasible products a 100k catalog holds there is luck at 0.95: substitution redrew 25.6
    and 18 draws a task at d = 0 and 1 (8 tasks each, up to 46; a 200-attempt run-out about
    once in 3,000 tasks), 2.4 and 1.4 at 0.85. From d = 2 (four searches) 0.95 holds.
    """
    return NDCG_THRESHOLD_ONE_SEARCH if d <= 1 else NDCG_THRESHOLD


def goal_fields(
    ctx: GenContext, cons: Constraints, fs: FeasibleSet, k: int, d: int
) -> dict[str, Any]:
    """The ranking part of a goal: the ideal list, capped feasible set, sizes, threshold.

    ``feasible`` rows are ``[product_id, utility, brand, key_attrs]``, best first (the brand
    and the key attribute values as a card shows them: what the oracle aims its searches
    with, ``recsearch.play``); ``gain_floor``
    (:func:`gain_floor` of every in-stock feasible utility) is what nDCG gains are measured
    from.
    """
    cols = tables(ctx).columns(cons.category)
    stored = fs.ranked[:FEASIBLE_CAP]
    rows = [cols.position[pid] for pid, _ in stored]
    return {
        "product_ids": [pid for pid, _ in fs.ranked[:k]],
        "feasible": [
            [pid, u, cols.brand[row], values]
            for (pid, u), row, values in zip(stored, rows, cols.key_attrs(rows), strict=True)
        ],
        "gain_floor": gain_floor([u for _, u in fs.ranked]),
        "feasible_size": fs.size,
        "feasible_in_stock": len(fs.ranked),
        "out_of_stock": fs.out_of_stock,
        "k_rec": k,
        "ndcg_threshold": ndcg_threshold(d),
    }
