"""Product cards: what one search hit shows the agent, built once per catalog row.

A card is a pure function of its catalog row, so :class:`CardBook` builds each row's plain
``dict`` once and keeps it together with the length of its compact JSON. A search then costs
a list of look-ups: no pydantic validation, no ``model_dump``, and the token budget is summed
from the kept lengths instead of JSON-encoding every card on every call (issue #7: these were
~1.8 ms of a 3.5 ms search at 100k products). :class:`ProductCard` stays the documented
schema of a card; :meth:`CardBook.dicts` returns exactly its ``model_dump()``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shopgen.schemas.errors import DatasetError

#: Estimated tokens (characters / 4 of the compact JSON) one search result may use.
RESULT_TOKEN_BUDGET = 2048
#: Catalog rows whose cards a :class:`CardBook` keeps built (about 1 KB each).
CARD_CACHE = 100_000
#: The catalog columns a card is made of, in the card's key order.
CARD_COLUMNS = (
    "product_id",
    "title",
    "brand",
    "category_path",
    "price",
    "rating",
    "ship_days",
    "stock_qty",
    "key_attrs",
)


class ProductCard(BaseModel):
    """One search hit as the agent sees it: enough to choose, not the whole product.

    A card holds every fact a customer's hard constraints and stated preferences refer to
    (category, price, rating, shipping days, brand, key attribute values, stock), so an agent
    can tell a feasible product from a search result alone, as the oracle does: titles do not
    always name the category ("monitor" fits baby monitors too).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str = Field(description="product id to pass to other tools (not a variant_id)")
    title: str = Field(description="product title")
    brand: str = Field(description="brand")
    category: str = Field(description="the product's category (the last level of its path)")
    price: float = Field(description="price in USD")
    rating: float = Field(description="average rating, 1–5")
    ship_days: int = Field(description="days to deliver")
    stock_qty: int = Field(description="units in stock; 0 means out of stock")
    key_attrs: list[str] = Field(description="the product's key attribute values")


def cards_json(cards: list[ProductCard] | list[dict[str, Any]]) -> str:
    """The compact JSON a tool result carries (one list of card objects)."""
    items = [c if isinstance(c, dict) else c.model_dump() for c in cards]
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def to_models(cards: list[dict[str, Any]]) -> list[ProductCard]:
    """Card dicts as :class:`ProductCard` objects, built without validation.

    A :class:`CardBook`'s dicts come from typed catalog columns and hold exactly the model's
    fields. Each model gets its own ``key_attrs`` list, so editing one cannot reach the
    shared dicts.
    """
    return [ProductCard.model_construct(**{**c, "key_attrs": list(c["key_attrs"])}) for c in cards]


def card_json_chars(card: dict[str, Any]) -> int:
    """Characters of one card's compact JSON (what :func:`cards_json` writes for it)."""
    return len(json.dumps(card, ensure_ascii=False, separators=(",", ":")))


def estimate_tokens(text: str) -> int:
    """Tokens estimated as characters / 4 (rounded up): the budget's unit."""
    return math.ceil(len(text) / 4)


def fit_budget(chars: list[int], budget: int = RESULT_TOKEN_BUDGET) -> int:
    """How many leading cards fit ``budget``, given each card's JSON length in ``chars``.

    The same cut as dropping trailing cards while ``estimate_tokens(cards_json(cards))``
    exceeds the budget (never below one card): a JSON list of n ≥ 1 items is 2 brackets,
    the items and n − 1 commas long.
    """
    n = len(chars)
    total = 1 + sum(chars) + n
    while n > 1 and math.ceil(total / 4) > budget:
        n -= 1
        total -= chars[n] + 1
    return n


class _Strings:
    """A string column as one UTF-8 buffer and its offsets: row i is one slice and decode.

    Reading single rows from a Polars frame costs ~0.2 ms a gather whatever its size (the
    distractor rows of every search miss the card book); a slice of a kept buffer costs
    well under a microsecond, and the buffer is no bigger than the column itself.
    """

    __slots__ = ("data", "offsets")

    def __init__(self, array: Any) -> None:
        _, offsets, data = array.buffers()  # a large_string array: int64 offsets
        start = array.offset
        self.offsets = np.frombuffer(offsets, dtype=np.int64)[start : start + len(array) + 1]
        self.data = data.to_pybytes() if data is not None else b""

    def __getitem__(self, row: int) -> str:
        at = self.offsets.item
        return self.data[at(row) : at(row + 1)].decode()


class _CardColumns:
    """The card columns of every catalog row, readable one row at a time in O(1)."""

    __slots__ = (
        "attr_offsets",
        "attrs",
        "brand",
        "category",
        "pid",
        "price",
        "rating",
        "ship",
        "stock",
        "title",
    )

    def __init__(self, frame: Any) -> None:
        import pyarrow as pa

        table = frame.select(CARD_COLUMNS).to_arrow()
        for name in CARD_COLUMNS:
            if table.column(name).null_count:
                raise DatasetError(f"products.{name} has nulls; a product card needs a value")

        def column(name: str, kind: Any) -> Any:
            return table.column(name).cast(kind).combine_chunks()

        self.pid = _Strings(column("product_id", pa.large_string()))
        self.title = _Strings(column("title", pa.large_string()))
        self.brand = _Strings(column("brand", pa.large_string()))
        self.category = _Strings(column("category_path", pa.large_string()))
        self.price = column("price", pa.float64()).to_numpy()
        self.rating = column("rating", pa.float64()).to_numpy()
        self.ship = column("ship_days", pa.int64()).to_numpy()
        self.stock = column("stock_qty", pa.int64()).to_numpy()
        attrs = column("key_attrs", pa.large_list(pa.large_string()))
        self.attr_offsets = np.asarray(attrs.offsets, dtype=np.int64)
        self.attrs = _Strings(attrs.values)

    def card(self, row: int) -> dict[str, Any]:
        """Row ``row``'s card, with exactly the values ``ProductCard(**rec).model_dump()`` has."""
        # NumPy arrays, not lists: at 1M rows Python lists of the offsets and numbers would
        # hold ~0.3 GB; ``.item`` reads one value as a Python scalar in ~0.1 µs.
        attrs, first = self.attrs, self.attr_offsets.item
        return {
            "product_id": self.pid[row],
            "title": self.title[row],
            "brand": self.brand[row],
            "category": self.category[row].rsplit(" > ", 1)[-1],
            "price": self.price.item(row),
            "rating": self.rating.item(row),
            "ship_days": self.ship.item(row),
            "stock_qty": self.stock.item(row),
            "key_attrs": [attrs[i] for i in range(first(row), first(row + 1))],
        }


class CardBook:
    """Every catalog row's card as a plain dict plus its JSON length, built on first use.

    Kept dicts are shared between calls and episodes: read them, never change them (the tool
    runtime only JSON-encodes them). At most ``limit`` rows are kept; past that the book
    starts over, since a rollout's searches keep returning the same popular products.

    Args:
        products: returns a Polars frame holding the catalog's card columns
            (:data:`CARD_COLUMNS`), called once, on first use.
        limit: rows kept before the book is cleared.
    """

    __slots__ = ("_columns", "_oos", "_products", "_rows", "limit")

    def __init__(self, products: Callable[[], Any], *, limit: int = CARD_CACHE) -> None:
        self._products = products
        self._columns: _CardColumns | None = None
        self._rows: dict[int, tuple[dict[str, Any], int]] = {}
        self._oos: dict[int, dict[str, Any]] = {}
        self.limit = limit

    def __len__(self) -> int:
        return len(self._rows)

    def _build(self, rows: list[int]) -> None:
        if len(self._rows) + len(rows) > self.limit:
            self._rows.clear()
            self._oos.clear()
        if self._columns is None:
            self._columns = _CardColumns(self._products())
        for row in rows:
            card = self._columns.card(row)
            self._rows[row] = (card, card_json_chars(card))

    def entries(
        self, rows: list[int], oos_ids: Collection[str] = ()
    ) -> tuple[list[dict[str, Any]], list[int]]:
        """The cards of ``rows`` in order and their JSON lengths; ``oos_ids`` show stock 0."""
        book = self._rows
        missing = sorted({r for r in rows if r not in book})
        if missing:
            self._build(missing)
        got = [book[r] for r in rows]
        cards = [c for c, _ in got]
        chars = [n for _, n in got]
        if oos_ids:
            oos = oos_ids if isinstance(oos_ids, set | frozenset) else set(oos_ids)
            for i, (card, n) in enumerate(got):
                stock = card["stock_qty"]
                if stock and card["product_id"] in oos:
                    cards[i] = self._out_of_stock(rows[i], card)
                    chars[i] = n - len(str(stock)) + 1  # JSON writes ints as str() does
        return cards, chars

    def _out_of_stock(self, row: int, card: dict[str, Any]) -> dict[str, Any]:
        marked = self._oos.get(row)
        if marked is None:
            marked = self._oos[row] = {**card, "stock_qty": 0}
        return marked

    def dicts(self, rows: list[int], oos_ids: Collection[str] = ()) -> list[dict[str, Any]]:
        """The cards of ``rows`` in order, as shared read-only dicts."""
        return self.entries(rows, oos_ids)[0]
