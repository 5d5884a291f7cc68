"""Read access to a catalog dataset, shared read-only by task generation and the runtime.

Lookups by id are O(log n) binary searches over a sorted array of fixed-width id bytes (10 MB
per million products), not a Python dict of a million strings. Analytical questions (feasible
sets, integrity checks) go to DuckDB over the Parquet files, which never loads a table whole.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl

from shopgen.gen.dataset import read_manifest, table_files
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.manifest import Manifest


class IdIndex:
    """Sorted ids with their row numbers: ``row(id)`` in O(log n), ``-1`` when absent."""

    def __init__(self, ids: pl.Series) -> None:
        raw = ids.cast(pl.Binary).to_numpy().astype("S16")
        self._order = np.argsort(raw, kind="stable")
        self._sorted = raw[self._order]

    def row(self, key: str) -> int:
        """Row number of ``key``, or -1."""
        raw = key.encode() if isinstance(key, str) else b""
        if not raw or len(raw) > 16:
            return -1
        probe = np.bytes_(raw)
        at = int(np.searchsorted(self._sorted, probe))
        if at < self._sorted.size and self._sorted[at] == probe:
            return int(self._order[at])
        return -1

    def rows(self, keys: list[str]) -> np.ndarray:
        """Row numbers of many keys at once (-1 where absent)."""
        return np.array([self.row(k) for k in keys], dtype=np.int64)


class CatalogStore:
    """One catalog dataset, opened once and shared; nothing here mutates it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.manifest: Manifest = read_manifest(self.root)
        if self.manifest.kind != "catalog":
            raise DatasetError(f"{self.root} is a {self.manifest.kind} dataset, not a catalog")

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
        """Row of a product, or -1 for an unknown id."""
        return self._product_index.row(product_id)

    def product(self, product_id: str) -> dict[str, Any] | None:
        """One product as a dict (``attributes`` decoded), or None for an unknown id."""
        row = self.product_row(product_id)
        if row < 0:
            return None
        record = self.products.row(row, named=True)
        record["attributes"] = json.loads(record["attributes"])
        return record

    def variants_of(self, product_id: str) -> list[dict[str, Any]]:
        """A product's variants (empty for a product without variants or an unknown id)."""
        keys = self._variant_keys
        probe = np.bytes_(product_id.encode())
        lo, hi = np.searchsorted(keys, probe, "left"), np.searchsorted(keys, probe, "right")
        out = self.variants.slice(int(lo), int(hi - lo)).to_dicts()
        for v in out:
            v["attributes"] = json.loads(v["attributes"])
        return out

    def variant(self, variant_id: str) -> dict[str, Any] | None:
        """One variant by id, or None."""
        row = self._variant_index.row(variant_id)
        if row < 0:
            return None
        record = self.variants.row(row, named=True)
        record["attributes"] = json.loads(record["attributes"])
        return record

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A fresh in-memory DuckDB connection with one view per table of the dataset."""
        con = duckdb.connect()
        for table in sorted({e.table for e in self.manifest.files.values()}):
            paths = ", ".join(f"'{p.as_posix()}'" for p in self.files(table))
            con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet([{paths}])')
        return con
