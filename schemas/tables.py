"""Arrow schemas of every table shopgen writes.

The catalog is columns, not a pydantic model per row (STYLE §4): a 1M-product table is
validated by comparing Arrow schemas and by SQL checks, not by building a million objects.
Nested free-form values (attribute maps) are JSON strings: Parquet structs whose keys differ
between rows read back with nulls (DESIGN §10).
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from shopgen.schemas.axes import AXES, RATE_AXES
from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.exports import export_schema
from shopgen.schemas.manifest import DatasetKind

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

_TS = pa.timestamp("us")

USERS = pa.schema(
    [
        pa.field("user_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("email", pa.string(), nullable=False),
        pa.field("street", pa.string(), nullable=False),
        pa.field("city", pa.string(), nullable=False),
        pa.field("state", pa.string(), nullable=False),
        pa.field("zip", pa.string(), nullable=False),
        pa.field("tier", pa.string(), nullable=False),
        pa.field("signup_date", pa.date32(), nullable=False),
        pa.field("preferences", pa.string(), nullable=False),
    ]
)

ORDERS = pa.schema(
    [
        pa.field("order_id", pa.string(), nullable=False),
        pa.field("user_id", pa.string(), nullable=False),
        pa.field("placed_at", _TS, nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("ship_method", pa.string(), nullable=False),
        pa.field("ship_state", pa.string(), nullable=False),
        pa.field("subtotal", pa.float64(), nullable=False),
        pa.field("shipping_cost", pa.float64(), nullable=False),
        pa.field("total", pa.float64(), nullable=False),
        pa.field("shipped_at", _TS),
        pa.field("delivered_at", _TS),
        pa.field("eta", pa.date32()),
        pa.field("carrier", pa.string()),
        pa.field("tracking_number", pa.string()),
        pa.field("cancelled_at", _TS),
    ]
)

ORDER_LINES = pa.schema(
    [
        pa.field("order_id", pa.string(), nullable=False),
        pa.field("line_no", pa.int8(), nullable=False),
        pa.field("product_id", pa.string(), nullable=False),
        pa.field("variant_id", pa.string()),
        pa.field("quantity", pa.int16(), nullable=False),
        pa.field("unit_price", pa.float64(), nullable=False),
        pa.field("discount_pct", pa.float64(), nullable=False),
        pa.field("line_total", pa.float64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("returned_at", _TS),
    ]
)

VISITS = pa.schema(
    [
        pa.field("user_id", pa.string(), nullable=False),
        pa.field("session_id", pa.int64(), nullable=False),
        pa.field("ts", _TS, nullable=False),
        pa.field("event", pa.string(), nullable=False),
        pa.field("product_id", pa.string(), nullable=False),
        pa.field("variant_id", pa.string()),
        pa.field("order_id", pa.string()),
    ]
)

POLICY_RULES = pa.schema(
    [
        pa.field("rule_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("clauses", pa.string(), nullable=False),
        pa.field("n_clauses", pa.int8(), nullable=False),
        pa.field("precedence", pa.int16(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("unit", pa.string()),
        pa.field("value", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
    ]
)

_THETA = pa.struct(
    [pa.field(name, pa.float64() if name in RATE_AXES else pa.int64()) for name in AXES]
)
_MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])

#: A task dataset's rows (DESIGN §7); free-form fields are JSON strings (DESIGN §10).
TASKS = pa.schema(
    [
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("d", pa.int64(), nullable=False),
        pa.field("theta", _THETA, nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("messages", pa.list_(_MESSAGE), nullable=False),
        pa.field("tools", pa.string(), nullable=False),
        pa.field("goal", pa.string(), nullable=False),
        pa.field("episode", pa.string(), nullable=False),
        pa.field("user_script", pa.string(), nullable=False),
        pa.field("oracle", pa.string(), nullable=False),
        pa.field("shopgen_version", pa.string(), nullable=False),
        pa.field("catalog_id", pa.string(), nullable=False),
        pa.field("verifier_version", pa.string(), nullable=False),
    ]
)

#: Table name → schema of a catalog dataset's tables (the catalog and its world).
CATALOG_TABLES: dict[str, pa.Schema] = {
    "products": PRODUCTS,
    "variants": VARIANTS,
    "taxonomy": TAXONOMY,
    "users": USERS,
    "orders": ORDERS,
    "order_lines": ORDER_LINES,
    "visits": VISITS,
    "policy_rules": POLICY_RULES,
}


def expected_schema(
    kind: DatasetKind, table: str, *, fmt: str | None, found: pa.Schema
) -> pa.Schema | None:
    """The schema a Parquet file of ``table`` must have in a dataset of ``kind``.

    Args:
        kind: the manifest's ``kind``.
        table: the file's table (its top-level folder; an environment's name in a verl
            export of several environments).
        fmt: the manifest's ``config.format`` (export datasets only).
        found: the file's own schema (a verl export's columns depend on its tools).

    Returns:
        The schema, or None when ``table`` is not a table datasets of ``kind`` hold.

    Raises:
        DatasetError: an export names a format shopgen does not write.
    """
    if kind == "export":  # a verl export of several environments has a table per environment
        rows = table == "data" or (fmt == "verl" and table in ENV_NAMES)
        return export_schema(str(fmt), found) if rows else None
    if kind == "tasks":
        return TASKS if table == "data" else None
    return CATALOG_TABLES.get(table)


def polars_schema(schema: pa.Schema) -> pl.Schema:
    """The Polars schema a table reads back with (Polars maps Arrow strings to its own)."""
    return pl.from_arrow(schema.empty_table()).schema


def polars_empty(schema: pa.Schema) -> pl.DataFrame:
    """An empty frame with the table's columns, for a shard that has no rows."""
    return pl.from_arrow(schema.empty_table())
