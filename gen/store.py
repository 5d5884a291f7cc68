"""Read access to a catalog dataset, shared read-only by task generation and the runtime.

Lookups by id are O(log n) binary searches over a sorted array of fixed-width id bytes (10 MB
per million products), not a Python dict of a million strings. Analytical questions (feasible
sets, integrity checks) go to DuckDB over the Parquet files, which never loads a table whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from shopgen.gen.dataset import is_parquet, read_manifest, table_files
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.manifest import Manifest, a_dataset

T = TypeVar("T")


def _storable_key(key: object, width: int) -> bytes | None:
    r"""``key`` as bytes when a fixed-width id array could hold it exactly, else None.

    A NumPy ``S`` array drops trailing NULs, so ``"ID"`` and ``"ID\0"`` compare equal in it;
    no generated id holds a NUL, so a key holding one names nothing (an agent that padded a
    product id would otherwise get a second, distinct-looking name for the same product), nor
    does a key UTF-8 cannot encode (a lone surrogate).
    """
    try:
        raw = key.encode() if isinstance(key, str) else b""
    except UnicodeEncodeError:  # a lone surrogate ("\ud800"): no id is written so
        return None
    if not raw or len(raw) > width or b"\0" in raw:
        return None
    return raw


class IdIndex:
    """Sorted ids with their row numbers: ``row(id)`` in O(log n), ``-1`` when absent.

    Only a key equal to a stored id is found (see ``_storable_key``: ids hold no NUL).
    """

    def __init__(self, ids: pl.Series, *, width: int = 16) -> None:
        raw = ids.cast(pl.Binary).to_numpy().astype(f"S{width}")
        self._width = width
        self._order = np.argsort(raw, kind="stable")
        self._sorted = raw[self._order]

    def row(self, key: str) -> int:
        """Row number of ``key``, or -1."""
        raw = _storable_key(key, self._width)
        if raw is None:
            return -1
        # A probe of the array's own dtype and the method form: a third of np.searchsorted's
        # cost, which converts a bare bytes scalar first (generators look ids up in loops).
        probe = np.array(raw, self._sorted.dtype)
        at = int(self._sorted.searchsorted(probe))
        # The element is bytes (a bytes comparison costs a twentieth of comparing it with the
        # NumPy probe); neither it nor ``raw`` has trailing NULs to strip.
        if at < self._sorted.size and self._sorted[at] == raw:
            return int(self._order[at])
        return -1

    def rows(self, keys: list[str]) -> np.ndarray:
        """Row numbers of many keys at once (-1 where absent)."""
        return np.array([self.row(k) for k in keys], dtype=np.int64)


class BoundedCache:
    """A dict that forgets its oldest entries past ``limit``: decoded rows reused across calls.

    Values are shared between callers, so they must be treated as read-only.
    """

    __slots__ = ("data", "limit")

    def __init__(self, limit: int) -> None:
        self.data: dict[Any, Any] = {}
        self.limit = limit

    def get(self, key: Any) -> Any:
        """The cached value or None."""
        return self.data.get(key)

    def items(self) -> Any:
        """The remembered (key, value) pairs."""
        return self.data.items()

    def clear(self) -> None:
        """Forget everything."""
        self.data.clear()

    def remember(self, key: Any, make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, else ``make()`` remembered (it must not be None)."""
        hit = self.data.get(key)
        return self.put(key, make()) if hit is None else hit

    def put(self, key: Any, value: Any) -> Any:
        """Remember ``value`` (evicting the oldest eighth when full) and return it."""
        data = self.data
        if len(data) >= self.limit:
            for old in list(data)[: max(1, self.limit // 8)]:
                del data[old]
        data[key] = value
        return value


#: Decoded product / variant records kept per store (a few MB at most).
RECORD_CACHE = 8192
#: Order-id width in bytes (``659-0005725-1139123``), for the order id index.
ORDER_ID_WIDTH = 24


def _sorted_slice(keys: np.ndarray, key: str) -> tuple[int, int]:
    """The [lo, hi) rows of ``key`` in sorted fixed-width ``keys`` (empty when it cannot fit)."""
    raw = _storable_key(key, keys.itemsize)  # a longer key would be truncated by the cast
    if raw is None:
        return 0, 0
    probe = np.array(raw, keys.dtype)  # see IdIndex.row: the fast form of the search
    return int(keys.searchsorted(probe, "left")), int(keys.searchsorted(probe, "right"))


def _record(frame: pl.DataFrame, names: tuple[str, ...], row: int) -> dict[str, Any]:
    """``frame.row(row, named=True)`` given the frame's column ``names``.

    Polars asks the frame for its names on every named row (a third of the call); an order
    has one or two lines, for which a row each also beats slicing out a frame for
    ``to_dicts``. The values are the row's own, so the record is the same.
    """
    return dict(zip(names, frame.row(row), strict=True))


def _shared_list(column: pl.Series) -> list[Any]:
    """``column.to_list()``, with one object per distinct string (see line_list)."""
    values = column.to_list()
    if column.dtype != pl.String:
        return values
    shared: dict[Any, Any] = {}
    return [shared.setdefault(v, v) for v in values]


# What CatalogStore.derived makes (module-level functions: each is its own memo key).


def _product_array(store: CatalogStore, column: str) -> np.ndarray:
    return store.products[column].to_numpy()


def _product_list(store: CatalogStore, column: str) -> list[Any]:
    return _shared_list(store.products[column])


def _order_list(store: CatalogStore, column: str) -> list[Any]:
    return _shared_list(store.order_table[column])


def _line_list(store: CatalogStore, column: str) -> list[Any]:
    return _shared_list(store.line_table[column])


def _line_product_list(store: CatalogStore, column: str) -> list[Any]:
    fields = store.products.select("product_id", column).unique(
        "product_id", keep="first", maintain_order=True
    )
    joined = store.line_table.select("product_id").join(
        fields, on="product_id", how="left", maintain_order="left"
    )
    return _shared_list(joined[column])


class CatalogStore:
    """One catalog dataset, opened once and shared; nothing here mutates it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.manifest: Manifest = read_manifest(self.root)
        if self.manifest.kind != "catalog":
            raise DatasetError(f"{self.root} is {a_dataset(self.manifest.kind)}, not a catalog")

    @property
    def catalog_id(self) -> str:
        """The dataset id every task and index built from this catalog records."""
        return self.manifest.dataset_id

    def files(self, table: str) -> list[Path]:
        """The Parquet files of ``table``."""
        return table_files(self.root, self.manifest, table)

    def has_table(self, table: str) -> bool:
        """Whether the dataset holds ``table``."""
        return any(e.table == table for e in self.manifest.files.values())

    def read(self, table: str, columns: list[str] | None = None) -> pl.DataFrame:
        """A whole table (memory-mapped Parquet reads)."""
        return pl.read_parquet(self.files(table), columns=columns, memory_map=True)

    @cached_property
    def products(self) -> pl.DataFrame:
        """All products in row order."""
        return self.read("products")

    @cached_property
    def _product_index(self) -> IdIndex:
        return IdIndex(self.products["product_id"])

    @cached_property
    def variants(self) -> pl.DataFrame:
        """All variants, grouped by product for slicing."""
        return self.read("variants").sort("product_id", maintain_order=True)

    @cached_property
    def _variant_keys(self) -> np.ndarray:
        return self.variants["product_id"].cast(pl.Binary).to_numpy().astype("S16")

    @cached_property
    def _variant_index(self) -> IdIndex:
        return IdIndex(self.variants["variant_id"])

    def product_row(self, product_id: str) -> int:
        """Row of a product, or -1 for an unknown id.

        Remembered per id (bounded): scoring and generation look the same recommended products
        up again and again, and the binary search with its byte probe costs ~6 µs in a busy
        process where a look-up costs under one.
        """
        rows = self._product_rows
        row = rows.get(product_id)
        if row is None:
            row = rows.put(product_id, self._product_index.row(product_id))
        return row

    @cached_property
    def _product_rows(self) -> BoundedCache:
        return BoundedCache(RECORD_CACHE)

    @cached_property
    def _records(self) -> BoundedCache:
        return BoundedCache(RECORD_CACHE)

    @cached_property
    def _arrow_columns(self) -> dict[tuple[str, str], pa.Array]:
        return {}

    def _arrow(self, frame: pl.DataFrame, table: str, column: str) -> pa.Array:
        """One column of a loaded table as an Arrow array (zero-copy for a single chunk)."""
        key = (table, column)
        found = self._arrow_columns.get(key)
        if found is None:
            found = self._arrow_columns[key] = frame[column].rechunk().to_arrow()
        return found

    def product_field(self, product_id: str, column: str) -> Any:
        """One column of one product (None for an unknown id), without building the record.

        What ``product(product_id)[column]`` gives for a plain column, for loops that read
        only a title or a category: a record costs a row decode and a JSON parse, a field a
        row look-up and one Arrow element.
        """
        row = self.product_row(product_id)
        return None if row < 0 else self.product_field_at(row, column)

    def product_field_at(self, row: int, column: str) -> Any:
        """:meth:`product_field` of the product at ``row`` (from :meth:`product_row`, not -1)."""
        return self._arrow(self.products, "products", column)[row].as_py()

    def product_array(self, column: str) -> np.ndarray:
        """A numeric column of :attr:`products` as a NumPy array (row-aligned), made once.

        For tools that read a number or two of a product they do not otherwise need the record
        of (:func:`shopgen.env.tools.recommend.recommend_products`): an element costs a tenth
        of a microsecond where a record costs ~50 µs in a busy process (row decode, cache
        misses), and the column costs its raw width per product (a Python list of floats
        would cost four times that).
        """
        return self.derived(_product_array, column)

    def product_list(self, column: str) -> list[Any]:
        """A string column of :attr:`products` as a Python list, made once (see :meth:`line_list`).

        Meant for columns with few distinct values (category, brand), which share one object
        each: 8 bytes a product. Per-product texts (titles, attribute JSON) would cost their
        whole text per product: read those with :meth:`product_field`.
        """
        return self.derived(_product_list, column)

    def variant_field(self, variant_id: str, column: str) -> Any:
        """One column of one variant (None for an unknown id): :meth:`product_field`'s twin.

        What ``variant(variant_id)[column]`` gives for a plain column (an order's details
        show each line's variant label), without the row decode and the attributes' parse.
        """
        row = self._variant_index.row(variant_id)
        return None if row < 0 else self._arrow(self.variants, "variants", column)[row].as_py()

    def product(self, product_id: str) -> dict[str, Any] | None:
        """One product as a dict (``attributes`` decoded), or None for an unknown id.

        The record is cached and shared: read it, never mutate it.
        """
        cache = self._records
        key = ("p", product_id)
        hit = cache.get(key)
        if hit is not None:
            return hit
        row = self.product_row(product_id)
        if row < 0:
            return None
        record = self.products.row(row, named=True)
        record["attributes"] = json.loads(record["attributes"])
        return cache.put(key, record)

    def variants_of(self, product_id: str) -> list[dict[str, Any]]:
        """A product's variants (empty for a product without variants or an unknown id).

        The list is cached and shared: read it, never mutate it.
        """
        cache = self._records
        key = ("vs", product_id)
        hit = cache.get(key)
        if hit is not None:
            return hit
        if not isinstance(product_id, str) or not product_id:
            return []
        lo, hi = _sorted_slice(self._variant_keys, product_id)
        out = self.variants.slice(lo, hi - lo).to_dicts()
        for v in out:
            v["attributes"] = json.loads(v["attributes"])
        return cache.put(key, out)

    def variant(self, variant_id: str) -> dict[str, Any] | None:
        """One variant by id, or None (cached and shared: never mutate it)."""
        cache = self._records
        key = ("v", variant_id)
        hit = cache.get(key)
        if hit is not None:
            return hit
        row = self._variant_index.row(variant_id)
        if row < 0:
            return None
        record = self.variants.row(row, named=True)
        record["attributes"] = json.loads(record["attributes"])
        return cache.put(key, record)

    # -- world: users, orders, order lines, visits (issue #6) ---------------------------------

    @cached_property
    def _users(self) -> pl.DataFrame:
        return self._world_table("users")

    @cached_property
    def _user_index(self) -> IdIndex:
        return IdIndex(self._users["user_id"])

    @cached_property
    def _orders(self) -> pl.DataFrame:
        return self._world_table("orders").sort(["user_id", "placed_at"], maintain_order=True)

    @property
    def order_table(self) -> pl.DataFrame:
        """All orders, by customer then time: the rows :meth:`orders_of` slices (read-only)."""
        return self._orders

    @property
    def line_table(self) -> pl.DataFrame:
        """All order lines, by order then line number: the rows :meth:`lines_of` slices."""
        return self._lines

    @cached_property
    def _order_user_keys(self) -> np.ndarray:
        return self._orders["user_id"].cast(pl.Binary).to_numpy().astype("S16")

    @cached_property
    def _order_index(self) -> IdIndex:
        return IdIndex(self._orders["order_id"], width=ORDER_ID_WIDTH)

    @cached_property
    def _lines(self) -> pl.DataFrame:
        return self._world_table("order_lines").sort(["order_id", "line_no"])

    @cached_property
    def _order_names(self) -> tuple[str, ...]:
        return tuple(self._orders.columns)

    @cached_property
    def _line_names(self) -> tuple[str, ...]:
        return tuple(self._lines.columns)

    @cached_property
    def _line_keys(self) -> np.ndarray:
        return self._lines["order_id"].cast(pl.Binary).to_numpy().astype(f"S{ORDER_ID_WIDTH}")

    @cached_property
    def _visits(self) -> pl.DataFrame:
        return self._world_table("visits").sort(["user_id", "ts"], maintain_order=True)

    @cached_property
    def _visit_keys(self) -> np.ndarray:
        return self._visits["user_id"].cast(pl.Binary).to_numpy().astype("S16")

    def _world_table(self, table: str) -> pl.DataFrame:
        if not self.has_table(table):
            raise DatasetError(
                f"catalog {self.root} has no {table} table (build it with the world: "
                "shopgen catalog writes users, orders, order_lines and visits)"
            )
        return self.read(table)

    def user(self, user_id: str) -> dict[str, Any] | None:
        """One customer as a dict, or None for an unknown id (cached: never mutate it)."""
        hit = self._records.get(("u", user_id))
        if hit is not None:
            return hit
        row = self._user_index.row(user_id)
        return (
            None if row < 0 else self._records.put(("u", user_id), self._users.row(row, named=True))
        )

    def orders_of(self, user_id: str) -> list[dict[str, Any]]:
        """A customer's orders, oldest first (empty for an unknown id); O(log n), cached."""
        if not isinstance(user_id, str) or not user_id or len(user_id) > 16:
            return []
        hit = self._records.get(("os", user_id))
        if hit is not None:
            return hit
        lo, hi = _sorted_slice(self._order_user_keys, user_id)
        return self._records.put(("os", user_id), self._orders.slice(lo, hi - lo).to_dicts())

    def order_row(self, order_id: str) -> int:
        """Row of an order in :attr:`order_table`, or -1 for an unknown id."""
        return self._order_index.row(order_id)

    def order(self, order_id: str) -> dict[str, Any] | None:
        """One order by id (whoever it belongs to), or None; O(log n), cached."""
        hit = self._records.get(("o", order_id))
        if hit is not None:
            return hit
        row = self._order_index.row(order_id)
        if row < 0:
            return None
        return self._records.put(("o", order_id), _record(self._orders, self._order_names, row))

    def lines_of(self, order_id: str) -> list[dict[str, Any]]:
        """An order's lines by line number (empty for an unknown id); O(log n), cached."""
        if not isinstance(order_id, str) or not order_id or len(order_id) > ORDER_ID_WIDTH:
            return []
        hit = self._records.get(("ls", order_id))
        if hit is not None:
            return hit
        lines, names = self._lines, self._line_names
        rows = range(*_sorted_slice(self._line_keys, order_id))
        return self._records.put(("ls", order_id), [_record(lines, names, r) for r in rows])

    def line_rows(self, order_id: str) -> range:
        """The rows of :attr:`line_table` holding an order's lines (empty for an unknown id)."""
        if not isinstance(order_id, str) or not order_id or len(order_id) > ORDER_ID_WIDTH:
            return range(0)
        return range(*_sorted_slice(self._line_keys, order_id))

    def lines_columns(self, order_id: str, *columns: str) -> tuple[list[Any], ...]:
        """Columns of an order's lines by line number, without building their records.

        ``lines_columns(o, "product_id", "status")`` equals the lists
        ``[ln["product_id"] for ln in lines_of(o)]`` and ``[ln["status"] for …]``: for
        generators that scan many orders and keep one (~2 µs a column).
        """
        rows = self.line_rows(order_id)
        return tuple(
            self._arrow(self._lines, "order_lines", c).slice(rows.start, len(rows)).to_pylist()
            for c in columns
        )

    @cached_property
    def _derived(self) -> dict[tuple[Any, ...], Any]:
        return {}

    def derived(self, make: Callable[..., T], *args: Hashable) -> T:
        """``make(self, *args)``, made the first time and then shared for the store's lifetime.

        For what tools and generators derive from the whole catalog once (a column as a list,
        a customer's tier map, the policy index): it lives and goes with the store, and every
        caller gets the same object, so read it, never change it. Keyed by ``make`` itself, so
        two modules never collide.
        """
        key = (make, *args)
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = make(self, *args)
        return found

    def order_rows_of(self, user_id: str) -> range:
        """The rows of :attr:`order_table` holding a customer's orders, oldest first."""
        if not isinstance(user_id, str) or not user_id or len(user_id) > 16:
            return range(0)
        return range(*_sorted_slice(self._order_user_keys, user_id))

    def order_list(self, column: str) -> list[Any]:
        """A column of :attr:`order_table` as a Python list, made once (see :meth:`line_list`)."""
        return self.derived(_order_list, column)

    def line_list(self, column: str) -> list[Any]:
        """A column of :attr:`line_table` as a Python list (row-aligned), made once per store.

        For tools and generators that read a field or two of a few lines per call, with the
        rows from :meth:`line_rows`: a list element costs tens of nanoseconds where an Arrow
        element or a record costs microseconds (~20 µs in a busy process, mostly cache
        misses). Equal strings share one object (lines repeat products), so a column costs
        8 bytes a line plus its distinct values.
        """
        return self.derived(_line_list, column)

    def line_product_list(self, column: str) -> list[Any]:
        """``product_field(product_id, column)`` of every line's product, as :meth:`line_list`.

        A product id found twice reads as its first row there (the id index's stable sort), so
        the join keeps the first; a product the catalog lacks reads as None.
        """
        return self.derived(_line_product_list, column)

    def visits_of(self, user_id: str) -> list[dict[str, Any]]:
        """A customer's visit events, oldest first (empty for an unknown id); O(log n)."""
        if not isinstance(user_id, str) or not user_id or len(user_id) > 16:
            return []
        lo, hi = _sorted_slice(self._visit_keys, user_id)
        return self._visits.slice(lo, hi - lo).to_dicts()

    @cached_property
    def policy_engine(self) -> Any:
        """The store's :class:`~shopgen.gen.policy.PolicyEngine`, built once per store."""
        from shopgen.gen.policy import PolicyEngine  # the taxonomy loads only when needed

        return PolicyEngine.from_catalog(self)

    @cached_property
    def category_facts(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Leaf category id → (department id, policy tags): the facts policy rules test."""
        engine = self.policy_engine
        return {c.id: (d.id, tuple(sorted(c.tags))) for d, c in engine.taxonomy.leaves()}

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A fresh in-memory DuckDB connection with one view per table of the dataset."""
        con = duckdb.connect()
        for table in sorted({e.table for r, e in self.manifest.files.items() if is_parquet(r)}):
            paths = ", ".join(f"'{p.as_posix()}'" for p in self.files(table))
            con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet([{paths}])')
        return con
