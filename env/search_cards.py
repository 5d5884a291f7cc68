"""Product cards: what one search hit shows the agent, built once per catalog row.

A card is a pure function of its catalog row, so :class:`CardBook` makes each row's compact
JSON once and keeps it. A search result is then a join of kept texts: no pydantic
validation, no ``model_dump``, no JSON encoding per call, and the token budget is summed from
the texts' lengths (issue #7: encoding was ~1.8 ms of a 3.5 ms search at 100k products, and
building each new row's card, then re-encoding the whole result, ~0.2 ms of a 1.1 ms one).
:class:`ProductCard` stays the documented schema of a card; :meth:`CardBook.dicts` returns
exactly its ``model_dump()``.
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

    A :class:`CardBook`'s dicts are parsed from typed catalog columns' JSON and hold exactly
    the model's fields, fresh for each call, so the models may own them.
    """
    return [ProductCard.model_construct(**c) for c in cards]


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

    def take(self, rows: np.ndarray) -> list[str]:
        """The strings of ``rows`` (an int64 array), in that order."""
        data, offsets = self.data, self.offsets
        starts, ends = offsets[rows].tolist(), offsets[rows + 1].tolist()
        return [data[a:b].decode() for a, b in zip(starts, ends, strict=True)]


#: One card's compact JSON with its values as JSON literals, in :data:`CARD_COLUMNS` order.
_CARD_JSON = (
    '{"product_id":%s,"title":%s,"brand":%s,"category":%s,"price":%s,"rating":%s,'
    '"ship_days":%s,"stock_qty":%s,"key_attrs":[%s]}'
)
_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes a str as


def _number(value: float) -> str:
    # json.dumps writes a finite float as float.__repr__ and the others as NaN/Infinity.
    return float.__repr__(value) if math.isfinite(value) else json.dumps(value)


def card_text(card: dict[str, Any]) -> str:
    """One card's compact JSON, exactly ``json.dumps(card, ensure_ascii=False, separators=(",", ":"))``.

    Formatting the known fields straight into a template costs half of ``json.dumps``
    walking the dict, and the card book builds the text of every row it shows.
    ``card`` holds :class:`ProductCard`'s fields, in its order, with ``model_dump()``'s types.
    """
    return _CARD_JSON % (
        _string(card["product_id"]),
        _string(card["title"]),
        _string(card["brand"]),
        _string(card["category"]),
        _number(card["price"]),
        _number(card["rating"]),
        int.__repr__(card["ship_days"]),
        int.__repr__(card["stock_qty"]),
        ",".join(map(_string, card["key_attrs"])),
    )


class _CardColumns:
    """The card columns of every catalog row, as flat buffers any rows are gathered from."""

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

        # NumPy arrays, not lists: at 1M rows Python lists of the offsets and numbers would
        # hold ~0.3 GB; a gather and ``tolist`` reads a batch as Python scalars.
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

    def cards(self, rows: list[int], *, out_of_stock: bool = False) -> list[dict[str, Any]]:
        """The cards of ``rows``, with exactly ``ProductCard(**rec).model_dump()``'s values.

        Gathered column by column for the whole batch (a search's new rows at once), so the
        per-row Python work is one dict. ``out_of_stock`` shows every one with stock 0.
        """
        at = np.asarray(rows, dtype=np.int64)
        first, last = self.attr_offsets[at], self.attr_offsets[at + 1]
        counts = last - first
        # Every row's attribute values in one gather: value j of row i is first[i] + j.
        flat = np.arange(int(counts.sum()), dtype=np.int64)
        flat += np.repeat(first - np.cumsum(counts) + counts, counts)
        values = self.attrs.take(flat)
        ends = np.cumsum(counts).tolist()
        stock = [0] * len(rows) if out_of_stock else self.stock[at].tolist()
        columns = zip(
            self.pid.take(at),
            self.title.take(at),
            self.brand.take(at),
            self.category.take(at),
            self.price[at].tolist(),
            self.rating[at].tolist(),
            self.ship[at].tolist(),
            stock,
            ends,
            counts.tolist(),
            strict=True,
        )
        return [
            {
                "product_id": pid,
                "title": title,
                "brand": brand,
                "category": path.rsplit(" > ", 1)[-1],
                "price": price,
                "rating": rating,
                "ship_days": ship,
                "stock_qty": qty,
                "key_attrs": values[end - n : end],
            }
            for pid, title, brand, path, price, rating, ship, qty, end, n in columns
        ]


class CardBook:
    """Every catalog row's card as its compact JSON text, built on first use.

    The text is all the ``catalog_search`` tool sends, so a result is a join of kept texts:
    no dict walked and no JSON encoded per call, and the token budget is read off the
    texts' lengths. :meth:`dicts` parses the texts back for callers that want values (the
    floats' shortest repr round-trips exactly, so they equal the catalog's). At most
    ``limit`` rows are kept; past that the book starts over, since a rollout's searches
    keep returning the same popular products.

    Args:
        products: returns a Polars frame holding the catalog's card columns
            (:data:`CARD_COLUMNS`), called once, on first use.
        limit: rows kept before the book is cleared.
    """

    __slots__ = ("_columns", "_oos", "_products", "_rows", "limit")

    def __init__(self, products: Callable[[], Any], *, limit: int = CARD_CACHE) -> None:
        self._products = products
        self._columns: _CardColumns | None = None
        #: row -> (card JSON, product id, stock shown when in stock)
        self._rows: dict[int, tuple[str, str, int]] = {}
        #: row -> card JSON with stock 0, for rows some episode marked out of stock
        self._oos: dict[int, str] = {}
        self.limit = limit

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def columns(self) -> _CardColumns:
        """The catalog's card columns, read on first use."""
        if self._columns is None:
            self._columns = _CardColumns(self._products())
        return self._columns

    def _build(self, rows: list[int]) -> None:
        """Make sure every row of ``rows`` is in the book (starting it over when full)."""
        book = self._rows
        missing = {r for r in rows if r not in book}
        if not missing:
            return
        if len(book) + len(missing) > self.limit:
            book.clear()
            self._oos.clear()
            missing = set(rows)  # the rows that were kept went too
        ordered = sorted(missing)
        for row, card in zip(ordered, self.columns.cards(ordered), strict=True):
            book[row] = (card_text(card), card["product_id"], card["stock_qty"])

    def texts(self, rows: list[int], oos_ids: Collection[str] = ()) -> tuple[list[str], list[str]]:
        """The cards of ``rows`` in order as compact JSON, and their product ids.

        Products in ``oos_ids`` show stock_qty 0.
        """
        self._build(rows)
        book = self._rows
        got = [book[r] for r in rows]
        texts = [text for text, _, _ in got]
        ids = [pid for _, pid, _ in got]
        if oos_ids:
            oos = oos_ids if isinstance(oos_ids, set | frozenset) else set(oos_ids)
            for i, (_, pid, stock) in enumerate(got):
                if stock and pid in oos:
                    texts[i] = self._out_of_stock(rows[i])
        return texts, ids

    def _out_of_stock(self, row: int) -> str:
        marked = self._oos.get(row)
        if marked is None:
            (card,) = self.columns.cards([row], out_of_stock=True)
            marked = self._oos[row] = card_text(card)
        return marked

    def dicts(self, rows: list[int], oos_ids: Collection[str] = ()) -> list[dict[str, Any]]:
        """The cards of ``rows`` in order, as fresh dicts (``ProductCard.model_dump()``'s)."""
        return [json.loads(text) for text in self.texts(rows, oos_ids)[0]]
