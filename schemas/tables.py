"""Arrow schemas of every table shopgen writes.

The catalog is columns, not a pydantic model per row (STYLE §4): a 1M-product table is
validated by comparing Arrow schemas and by SQL checks, not by building a million objects.
Nested free-form values (attribute maps) are JSON strings: Parquet structs whose keys differ
between rows read back with nulls (DESIGN §10).
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa

PRODUCTS = pa.schema(
    [
        pa.field("product_id", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("brand", pa.string(), nullable=False),
        pa.field("department", pa.string(), nullable=False),
        pa.field("category_id", pa.string(), nullable=False),
        pa.field("category_path", pa.string(), nullable=False),
        pa.field("price", pa.float64(), nullable=False),
        pa.field("list_price", pa.float64(), nullable=False),
        pa.field("rating", pa.float64(), nullable=False),
        pa.field("rating_count", pa.int32(), nullable=False),
        pa.field("stock_qty", pa.int32(), nullable=False),
        pa.field("ship_days", pa.int8(), nullable=False),
        pa.field("n_variants", pa.int16(), nullable=False),
        pa.field("attributes", pa.string(), nullable=False),
        pa.field("key_attrs", pa.list_(pa.string()), nullable=False),
        pa.field("description", pa.string(), nullable=False),
    ]
)

VARIANTS = pa.schema(
    [
        pa.field("variant_id", pa.string(), nullable=False),
        pa.field("product_id", pa.string(), nullable=False),
        pa.field("attributes", pa.string(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("price_delta", pa.float64(), nullable=False),
        pa.field("stock_qty", pa.int32(), nullable=False),
    ]
)

TAXONOMY = pa.schema(
    [
        pa.field("category_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("department_id", pa.string(), nullable=False),
        pa.field("department", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("attributes", pa.string(), nullable=False),
        pa.field("variant_axes", pa.list_(pa.string()), nullable=False),
        pa.field("compat", pa.list_(pa.string()), nullable=False),
        pa.field("complements", pa.list_(pa.string()), nullable=False),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
    ]
)

#: Table name → schema, for every table a dataset of any kind may hold.
TABLES: dict[str, pa.Schema] = {
    "products": PRODUCTS,
    "variants": VARIANTS,
    "taxonomy": TAXONOMY,
}


def polars_schema(schema: pa.Schema) -> pl.Schema:
    """The Polars schema a table reads back with (Polars maps Arrow strings to its own)."""
    return pl.from_arrow(schema.empty_table()).schema


def polars_empty(schema: pa.Schema) -> pl.DataFrame:
    """An empty frame with the table's columns, for a shard that has no rows."""
    return pl.from_arrow(schema.empty_table())
