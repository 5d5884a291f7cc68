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


#: One card's compact JSON with its values as JSON literals, in :data:`CARD_COLUMNS` order:
#: the strings before the price (the card's "head"), its numbers, and its key attributes
#: (its "tail").
_HEAD = '{"product_id":%s,"title":%s,"brand":%s,"category":%s,"price":'
_NUMBERS = '%s,"rating":%s,"ship_days":%s,"stock_qty":%s'
_TAIL = ',"key_attrs":[%s]}'
#: A row's card from its head, numbers and tail when its floats are finite (``%r`` of a
#: float is ``float.__repr__``, ``%d`` of an int ``int.__repr__``: what json.dumps writes).
_CARD = '%s%r,"rating":%r,"ship_days":%d,"stock_qty":%d%s'
#: A row's text and numbers: where its text lies in the buffer, where its id and head end.
_RECORD = [
    ("price", "f8"),
    ("rating", "f8"),
    ("ship", "i8"),
    ("stock", "i8"),
    ("start", "i8"),
    ("end", "i8"),
    ("pid", "i4"),
    ("head", "i4"),
]
_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes a str as
#: Batches of fewer rows than this are read record by record (see :meth:`_CardColumns.cards`).
FEW_ROWS = 5
#: The characters ``_string`` escapes besides ``"`` and ``\`` (C0 controls), as a regex.
_CONTROL = r"[\x00-\x1f]"


def _number(value: float) -> str:
    # json.dumps writes a finite float as float.__repr__ and the others as NaN/Infinity.
    return float.__repr__(value) if math.isfinite(value) else json.dumps(value)


def _head(pid: str, title: str, brand: str, category: str) -> str:
    return _HEAD % (_string(pid), _string(title), _string(brand), _string(category))


def _tail(key_attrs: list[str]) -> str:
    return _TAIL % ",".join(map(_string, key_attrs))


def card_text(card: dict[str, Any]) -> str:
    """One card's compact JSON, exactly ``json.dumps(card, ensure_ascii=False, separators=(",", ":"))``.

    The reference :class:`_CardColumns`' pre-encoded texts equal. ``card`` holds
    :class:`ProductCard`'s fields, in its order, with ``model_dump()``'s types.
    """
    numbers = _NUMBERS % (
        _number(card["price"]),
        _number(card["rating"]),
        int.__repr__(card["ship_days"]),
        int.__repr__(card["stock_qty"]),
    )
    head = _head(card["product_id"], card["title"], card["brand"], card["category"])
    return head + numbers + _tail(card["key_attrs"])


def zero_stock(text: str) -> str:
    """A card's JSON (:func:`card_text`'s) showing stock_qty 0: its stock digits replaced.

    ``,"stock_qty":`` occurs once in a card, as its key: inside a JSON string every ``"`` is
    escaped with a backslash, so no encoded string holds ``,"``. Replacing the number costs a
    search and a join, where building the row's card again (a fresh, scattered catalog row
    read) cost ~20 µs of every page in a discovery task, and the episode's marks change
    from task to task, so the zero-stock cards were seldom asked for twice.
    """
    at = text.index(_STOCK_KEY) + len(_STOCK_KEY)
    return text[:at] + "0" + text[text.index(",", at) :]


#: The key before a card's stock number (followed by ``,"key_attrs":``).
_STOCK_KEY = ',"stock_qty":'


def _quoted(values: Any) -> Any:
    """A Polars string expression as JSON string literals (exact when it holds no C0 control)."""
    import polars as pl

    escaped = values.str.replace_all("\\", "\\\\", literal=True)
    escaped = escaped.str.replace_all('"', '\\"', literal=True)
    return pl.concat_str(pl.lit('"'), escaped, pl.lit('"'))


class _CardColumns:
    """Every catalog row's card, pre-encoded: its JSON but for its four numbers.

    A card's strings (id, title, brand, category, key attributes) are JSON-encoded once for
    the whole catalog by vectorised Polars string operations and kept, a row after another,
    in one UTF-8 buffer beside one record of numbers a row. Building a batch of rows' cards
    is then one record gather and, per row, one slice, one decode and one ``%`` of its
    numbers (floats need ``repr``, which Polars does not write). The rows a search misses
    are scattered over the catalog (distractors are random category rows) and read between
    FAISS and BM25 calls that evict every cache, so what a new row costs is mostly how many
    NumPy calls a batch makes and how many places a row is read from: here three calls and
    two places, against ~30 calls and nine columns of separate buffers before. The buffer is
    about the size of the columns it replaces (~250 bytes a row), so memory stays
    proportional to the catalog.
    """

    __slots__ = ("data", "finite", "records")

    def __init__(self, frame: Any) -> None:
        import polars as pl
        import pyarrow as pa

        frame = frame.select(CARD_COLUMNS)
        for name, nulls in frame.null_count().row(0, named=True).items():
            if nulls:
                raise DatasetError(f"products.{name} has nulls; a product card needs a value")
        attrs = pl.col("key_attrs").list
        if frame.select(attrs.eval(pl.element().is_null()).list.any().any()).item():
            raise DatasetError("products.key_attrs has null values; a product card needs a value")
        # Brands and category paths repeat: each distinct one is encoded by the reference.
        brands = frame["brand"].unique().to_list()
        paths = frame["category_path"].unique().to_list()
        parts = frame.select(
            head=pl.concat_str(
                pl.lit('{"product_id":'),
                _quoted(pl.col("product_id")),
                pl.lit(',"title":'),
                _quoted(pl.col("title")),
                pl.lit(',"brand":'),
                pl.col("brand").replace_strict(brands, [_string(b) for b in brands]),
                pl.lit(',"category":'),
                pl.col("category_path").replace_strict(
                    paths, [_string(p.rsplit(" > ", 1)[-1]) for p in paths]
                ),
                pl.lit(',"price":'),
            ),
            tail=pl.concat_str(
                pl.lit(',"key_attrs":['),
                attrs.eval(_quoted(pl.element())).list.join(","),
                pl.lit("]}"),
            ),
            control=pl.col("product_id").str.contains(_CONTROL)
            | pl.col("title").str.contains(_CONTROL)
            | attrs.eval(pl.element().str.contains(_CONTROL)).list.any(),
        )
        # The rare rows whose id, title or attributes hold a control character (written as
        # \n, \u001f, …) are encoded by the reference instead.
        odd = parts["control"].arg_true()
        if len(odd):
            rows = list(frame[odd].iter_rows())
            parts = parts.with_columns(
                parts["head"].scatter(
                    odd, [_head(p, t, b, c.rsplit(" > ", 1)[-1]) for p, t, b, c, *_ in rows]
                ),
                parts["tail"].scatter(odd, [_tail(row[-1]) for row in rows]),
            )
        # A row's text is its product id, head and tail; the record says where each ends.
        pid_chars = frame["product_id"].str.len_chars().to_numpy()
        head_chars = parts["head"].str.len_chars().to_numpy()
        text = parts.select(pl.concat_str(frame["product_id"], "head", "tail")).to_series()
        del parts
        array = text.rechunk().to_arrow().cast(pa.large_string())
        del text
        _, offsets, data = array.buffers()
        # A view of the Arrow buffer, not a copy: it is the one large thing the book holds.
        self.data = memoryview(data) if data is not None else memoryview(b"")
        ends = np.frombuffer(offsets, dtype=np.int64)[array.offset :][: len(array) + 1]
        self.records = np.empty(frame.height, dtype=_RECORD)
        self.records["start"] = ends[:-1]
        self.records["end"] = ends[1:]
        self.records["pid"] = pid_chars
        self.records["head"] = pid_chars + head_chars
        for field, name, kind in (
            ("price", "price", pl.Float64),
            ("rating", "rating", pl.Float64),
            ("ship", "ship_days", pl.Int64),
            ("stock", "stock_qty", pl.Int64),
        ):
            self.records[field] = frame[name].cast(kind).to_numpy()
        self.finite = bool(
            np.isfinite(self.records["price"]).all() and np.isfinite(self.records["rating"]).all()
        )

    def cards(self, rows: list[int]) -> list[tuple[str, str, int]]:
        """Each row's (card JSON, product id, stock shown); the JSON is :func:`card_text`'s.

        A few rows (a page's new distractors,
        most batches once the book is warm) are read one record at a time: a fancy-indexed
        gather costs ~5 µs whatever its size, a record's ``item()`` ~0.7 µs.
        """
        data, finite = self.data, self.finite
        records = self.records
        if len(rows) < FEW_ROWS:
            picked = [records[r].item() for r in rows]
        else:
            picked = records[rows].tolist()
        built = []
        for price, rating, ship, stock, start, end, pid, head in picked:
            text = str(data[start:end], "utf-8")
            if finite:
                card = _CARD % (text[pid:head], price, rating, ship, stock, text[head:])
            else:
                numbers = _NUMBERS % (_number(price), _number(rating), ship, stock)
                card = text[pid:head] + numbers + text[head:]
            built.append((card, text[:pid], stock))
        return built


class CardBook:
    """Every catalog row's card as its compact JSON text, built on first use.

    The text is all the ``catalog_search`` tool sends, so a result is a join of kept texts:
    no dict walked and no JSON encoded per call, and the token budget is read off the
    texts' lengths. :meth:`dicts` parses the texts back for callers that want values (the
    floats' shortest repr round-trips exactly, so they equal the catalog's). At most
    ``limit`` rows are kept; past that the book starts over, since a rollout's searches
    keep returning the same popular products.

    Built cards sit in a list indexed by row rather than a dict: a page reads ~15 scattered
    rows of a book of up to 100k, and a list slot is one pointer read where a dict probe
    also hashes the row and compares keys (in a steady bundle profile the dict's two passes
    over each page were ~30 µs a task). The list costs 8 bytes a catalog row (8 MB at 1M
    products), made with the columns.

    Args:
        products: returns a Polars frame holding the catalog's card columns
            (:data:`CARD_COLUMNS`), called once, on first use.
        limit: rows kept before the book is cleared.
    """

    __slots__ = ("_columns", "_kept", "_products", "_slots", "limit")

    def __init__(self, products: Callable[[], Any], *, limit: int = CARD_CACHE) -> None:
        self._products = products
        self._columns: _CardColumns | None = None
        #: row -> (card JSON, product id, stock shown when in stock), None while not built;
        #: made (one slot per catalog row) with the columns.
        self._slots: list[tuple[str, str, int] | None] = []
        #: How many slots hold a card.
        self._kept = 0
        self.limit = limit

    def __len__(self) -> int:
        return self._kept

    @property
    def columns(self) -> _CardColumns:
        """The catalog's card columns, read on first use."""
        return self._open() if self._columns is None else self._columns

    def _open(self) -> _CardColumns:
        """Read the card columns and make one empty slot per catalog row."""
        self._columns = _CardColumns(self._products())
        self._slots = [None] * len(self._columns.records)
        return self._columns

    def _cards(self, rows: list[int]) -> list[tuple[str, str, int]]:
        """The book's entries for ``rows`` in order, building those not in it yet."""
        if self._columns is None:
            self._open()
        got = [self._slots[r] for r in rows]
        if None in got:
            self._build(rows)
            got = [self._slots[r] for r in rows]
        return got  # type: ignore[return-value]  (every row is built now)

    def _build(self, rows: list[int]) -> None:
        """Make sure every row of ``rows`` is in the book (starting it over when full)."""
        slots = self._slots
        missing = {r for r in rows if slots[r] is None}
        if len(self) + len(missing) > self.limit:
            slots = self._slots = [None] * len(slots)
            self._kept = 0
            missing = set(rows)  # the rows that were kept went too
        ordered = sorted(missing)
        for row, card in zip(ordered, self.columns.cards(ordered), strict=True):
            slots[row] = card
        self._kept += len(ordered)

    def texts(self, rows: list[int], oos_ids: Collection[str] = ()) -> tuple[list[str], list[str]]:
        """The cards of ``rows`` in order as compact JSON, and their product ids.

        Products in ``oos_ids`` show stock_qty 0.
        """
        got = self._cards(rows)
        texts = [text for text, _, _ in got]
        ids = [pid for _, pid, _ in got]
        if oos_ids:
            oos = oos_ids if isinstance(oos_ids, set | frozenset) else set(oos_ids)
            for i, (_, pid, stock) in enumerate(got):
                if stock and pid in oos:
                    texts[i] = zero_stock(texts[i])
        return texts, ids

    def dicts(self, rows: list[int], oos_ids: Collection[str] = ()) -> list[dict[str, Any]]:
        """The cards of ``rows`` in order, as fresh dicts (``ProductCard.model_dump()``'s)."""
        return [json.loads(text) for text in self.texts(rows, oos_ids)[0]]
