"""``shopgen validate``: a dataset checked against its manifest, its schemas and its invariants.

Checks run from cheapest to most thorough and all of them run, so one report lists every
problem. Integrity rules are SQL over the Parquet files (DuckDB), so a 10M-row table is
checked without loading it into Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from shopgen.gen.dataset import read_manifest, sha256_file
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.tables import TABLES, polars_schema


@dataclass(frozen=True)
class Rule:
    """An integrity rule: a query that counts violating rows, and what a violation means."""

    tables: tuple[str, ...]
    problem: str
    sql: str


#: Catalog rules; other table families append theirs to RULES.
RULES: list[Rule] = [
    Rule(
        ("products",),
        "duplicate product_id",
        "SELECT count(*) - count(DISTINCT product_id) FROM products",
    ),
    Rule(
        ("variants",),
        "duplicate variant_id",
        "SELECT count(*) - count(DISTINCT variant_id) FROM variants",
    ),
    Rule(
        ("products", "variants"),
        "variant whose product does not exist",
        "SELECT count(*) FROM variants v ANTI JOIN products p USING (product_id)",
    ),
    Rule(
        ("products",),
        "price not > 0 or above list price",
        "SELECT count(*) FROM products WHERE price <= 0 OR list_price < price",
    ),
    Rule(
        ("products",),
        "rating outside [1, 5]",
        "SELECT count(*) FROM products WHERE rating < 1 OR rating > 5",
    ),
    Rule(
        ("products",),
        "negative stock or rating_count",
        "SELECT count(*) FROM products WHERE stock_qty < 0 OR rating_count < 0",
    ),
    Rule(("products",), "ship_days < 1", "SELECT count(*) FROM products WHERE ship_days < 1"),
    Rule(
        ("products",),
        "attributes not a JSON object",
        "SELECT count(*) FROM products WHERE json_type(attributes) <> 'OBJECT'",
    ),
    Rule(
        ("products", "taxonomy"),
        "product in a category the taxonomy lacks",
        "SELECT count(*) FROM products ANTI JOIN taxonomy USING (category_id)",
    ),
    Rule(
        ("products", "variants"),
        "n_variants differs from the variants table",
        "SELECT count(*) FROM products p LEFT JOIN (SELECT product_id, count(*) n FROM variants GROUP BY 1) v "
        "USING (product_id) WHERE p.n_variants <> coalesce(v.n, 0)",
    ),
    Rule(
        ("variants",), "negative variant stock", "SELECT count(*) FROM variants WHERE stock_qty < 0"
    ),
]


def validate_dataset(root: Path, *, checksums: bool = True) -> list[str]:
    """Every problem found in the dataset at ``root`` (an empty list means valid).

    Raises:
        DatasetError: when ``root`` is not a dataset at all (no readable manifest).
    """
    manifest = read_manifest(root)
    problems = list(_file_problems(root, manifest, checksums))
    if problems:
        return problems  # integrity queries over broken files would only repeat the news
    problems += list(_schema_problems(root, manifest))
    if not problems:
        problems += list(_rule_problems(root, manifest))
    return problems


def _file_problems(root: Path, manifest: Manifest, checksums: bool):
    listed = set(manifest.files)
    present = {p.relative_to(root).as_posix() for p in root.rglob("*.parquet")}
    for rel in sorted(present - listed):
        yield f"{rel}: not listed in the manifest"
    for rel, entry in manifest.files.items():
        path = root / rel
        if not path.is_file():
            yield f"{rel}: missing"
            continue
        if path.stat().st_size != entry.bytes:
            yield f"{rel}: {path.stat().st_size} bytes, manifest says {entry.bytes}"
        elif checksums and sha256_file(path) != entry.sha256:
            yield f"{rel}: checksum mismatch (file changed or corrupted)"


def _schema_problems(root: Path, manifest: Manifest):
    for rel, entry in manifest.files.items():
        try:
            frame = pl.scan_parquet(root / rel)
            schema, rows = frame.collect_schema(), frame.select(pl.len()).collect().item()
        except Exception as exc:  # any reader failure means an unreadable file
            yield f"{rel}: not readable as Parquet ({type(exc).__name__})"
            continue
        if rows != entry.rows:
            yield f"{rel}: {rows} rows, manifest says {entry.rows}"
        expected = TABLES.get(entry.table)
        if expected is None:
            continue
        want = polars_schema(expected)
        if dict(schema) != dict(want):
            diff = sorted(set(want.items()) ^ set(schema.items()), key=str)[:3]
            yield f"{rel}: schema differs from {entry.table!r} ({', '.join(f'{k}: {v}' for k, v in diff)})"


def _rule_problems(root: Path, manifest: Manifest):
    tables = {e.table for e in manifest.files.values()}
    con = duckdb.connect()
    for table in sorted(tables):
        paths = ", ".join(
            f"'{(root / rel).as_posix()}'" for rel, e in manifest.files.items() if e.table == table
        )
        con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet([{paths}])')
    for rule in RULES:
        if set(rule.tables) <= tables:
            bad = con.execute(rule.sql).fetchone()[0]
            if bad:
                yield f"{bad:,} rows: {rule.problem}"
