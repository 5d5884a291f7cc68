"""``shopgen validate``: a dataset checked against its manifest, its schemas and its invariants.

Checks run from cheapest to most thorough and all of them run, so one report lists every
problem. Integrity rules are SQL over the Parquet files (DuckDB), so a 10M-row table is
checked without loading it into Python.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
from pydantic import ValidationError

from shopgen.gen.dataset import is_parquet, read_manifest, sha256_file, table_files
from shopgen.gen.policy import PolicyEngine
from shopgen.gen.policy_text import rule_sentence
from shopgen.gen.row_checks import (
    PLAY_AXES,
    SEARCH_AXES,
    episode_problem,
    first_error,
    theta_problem,
    user_script_problem,
)
from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.errors import DatasetError, ShopgenError
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.tables import expected_schema, polars_schema
from shopgen.schemas.task import TaskRow


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


def _world_rule(tables: tuple[str, ...], problem: str, sql: str) -> Rule:
    return Rule(tables, problem, sql)


#: World rules (issue #3): referential integrity, lifecycle and date order, visits ↔ orders.
RULES += [
    _world_rule(
        ("users",), "duplicate user_id", "SELECT count(*) - count(DISTINCT user_id) FROM users"
    ),
    _world_rule(
        ("orders",), "duplicate order_id", "SELECT count(*) - count(DISTINCT order_id) FROM orders"
    ),
    _world_rule(
        ("orders", "users"),
        "order whose user does not exist",
        "SELECT count(*) FROM orders ANTI JOIN users USING (user_id)",
    ),
    _world_rule(
        ("orders", "users"),
        "order placed before its user signed up",
        "SELECT count(*) FROM orders o JOIN users u USING (user_id) WHERE o.placed_at::DATE < u.signup_date",
    ),
    _world_rule(
        ("order_lines", "orders"),
        "order line whose order does not exist",
        "SELECT count(*) FROM order_lines ANTI JOIN orders USING (order_id)",
    ),
    _world_rule(
        ("order_lines", "products"),
        "order line whose product does not exist",
        "SELECT count(*) FROM order_lines ANTI JOIN products USING (product_id)",
    ),
    _world_rule(
        ("order_lines", "variants"),
        "order line whose variant does not exist or belongs to another product",
        "SELECT count(*) FROM order_lines l WHERE l.variant_id IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM variants v WHERE v.variant_id = l.variant_id AND v.product_id = l.product_id)",
    ),
    _world_rule(
        ("order_lines", "products"),
        "order line without a variant for a product that has variants",
        "SELECT count(*) FROM order_lines l JOIN products p USING (product_id) "
        "WHERE l.variant_id IS NULL AND p.n_variants > 0",
    ),
    _world_rule(
        ("orders",),
        "status outside the lifecycle",
        "SELECT count(*) FROM orders WHERE status NOT IN "
        "('placed', 'processing', 'shipped', 'in_transit', 'delivered', 'cancelled')",
    ),
    _world_rule(
        ("orders",),
        "dates out of order (placed ≤ shipped ≤ delivered)",
        "SELECT count(*) FROM orders WHERE shipped_at < placed_at OR delivered_at < shipped_at "
        "OR cancelled_at < placed_at",
    ),
    _world_rule(
        ("orders", "clock"),
        "event after the simulated today",
        "SELECT count(*) FROM orders, clock WHERE placed_at::DATE > today "
        "OR delivered_at::DATE > today OR shipped_at::DATE > today",
    ),
    _world_rule(
        ("orders",),
        "delivered order without a delivery date, or a delivery date on another status",
        "SELECT count(*) FROM orders WHERE (status = 'delivered') <> (delivered_at IS NOT NULL)",
    ),
    _world_rule(
        ("orders",),
        "cancelled order with shipping or delivery",
        "SELECT count(*) FROM orders WHERE status = 'cancelled' AND "
        "(shipped_at IS NOT NULL OR delivered_at IS NOT NULL OR cancelled_at IS NULL)",
    ),
    _world_rule(
        ("orders",),
        "shipped order without carrier and tracking (or unshipped with them)",
        "SELECT count(*) FROM orders WHERE (status IN ('shipped', 'in_transit', 'delivered')) "
        "<> (carrier IS NOT NULL AND tracking_number IS NOT NULL AND shipped_at IS NOT NULL)",
    ),
    _world_rule(
        ("orders",),
        "undelivered open order without an ETA",
        "SELECT count(*) FROM orders WHERE (status NOT IN ('delivered', 'cancelled')) <> (eta IS NOT NULL)",
    ),
    _world_rule(
        ("order_lines", "orders"),
        "returned line of an undelivered order, or returned before delivery",
        "SELECT count(*) FROM order_lines l JOIN orders o USING (order_id) WHERE l.status = 'returned' "
        "AND (o.status <> 'delivered' OR l.returned_at IS NULL OR l.returned_at < o.delivered_at)",
    ),
    _world_rule(
        ("order_lines", "orders"),
        "subtotal differs from the sum of its lines",
        "SELECT count(*) FROM orders o JOIN (SELECT order_id, sum(line_total) s FROM order_lines "
        "GROUP BY 1) l USING (order_id) WHERE abs(o.subtotal - l.s) > 0.011",
    ),
    _world_rule(
        ("visits", "order_lines"),
        "purchase event without a matching order line",
        "SELECT count(*) FROM visits v WHERE v.event = 'purchase' AND NOT EXISTS (SELECT 1 FROM "
        "order_lines l WHERE l.order_id = v.order_id AND l.product_id = v.product_id "
        "AND l.variant_id IS NOT DISTINCT FROM v.variant_id)",
    ),
    _world_rule(
        ("visits", "order_lines"),
        "order line without a purchase event",
        "SELECT count(*) FROM order_lines l WHERE NOT EXISTS (SELECT 1 FROM visits v WHERE "
        "v.event = 'purchase' AND v.order_id = l.order_id AND v.product_id = l.product_id "
        "AND v.variant_id IS NOT DISTINCT FROM l.variant_id)",
    ),
    _world_rule(
        ("visits", "products"),
        "visit to a product that does not exist",
        "SELECT count(*) FROM visits ANTI JOIN products USING (product_id)",
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
    if not problems:
        problems += list(_policy_problems(root, manifest))
    if not problems and manifest.kind == "tasks":
        problems += list(_task_problems(root, manifest))
    return problems


#: Rows of a task dataset named one by one before the rest are only counted.
TASK_PROBLEMS_SHOWN = 20


def _task_problems(root: Path, manifest: Manifest) -> Iterator[str]:
    """Rows play could not read: as ``TaskRow``, or by :mod:`~shopgen.gen.row_checks`.

    What ``ShopEnv.reset`` would refuse, found before a trainer or ``shopgen score`` meets it
    mid-run. The catalog-bound checks (the row's catalog, ids it names) need the catalog.
    """
    bad = 0
    for path in table_files(root, manifest, "data"):
        for i, raw in enumerate(pq.read_table(path).to_pylist()):
            problem = _row_problem(raw)
            if problem is None:
                continue
            bad += 1
            if bad <= TASK_PROBLEMS_SHOWN:
                rel = path.relative_to(root).as_posix()
                yield f"{rel}: row {i} ({raw.get('task_id')!r}): {problem}"
    if bad > TASK_PROBLEMS_SHOWN:
        yield f"... and {bad - TASK_PROBLEMS_SHOWN:,} more rows play could not read"


def _row_problem(raw: dict) -> str | None:
    """Why one stored task row cannot be played, or None."""
    try:
        row = TaskRow.from_row(raw)
    except ValidationError as exc:
        return first_error(exc)
    if row.env not in ENV_NAMES:
        return f"env {row.env!r} is none of {', '.join(ENV_NAMES)}"
    try:
        offered = {t["function"]["name"] for t in json.loads(row.tools)}
        episode, goal = json.loads(row.episode), json.loads(row.goal)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        return f"tools, episode or goal is unreadable ({type(exc).__name__}: {exc})"
    axes = PLAY_AXES + (SEARCH_AXES if "catalog_search" in offered else ())
    if not isinstance(goal, dict):
        return "goal must be a JSON object"
    return (
        theta_problem(row.theta, axes)
        or episode_problem(episode)
        or user_script_problem(row.user_script)
    )


def _policy_problems(root: Path, manifest: Manifest) -> Iterator[str]:
    """A world's stored rules that differ from the rule file the runtime evaluates.

    The runtime builds its policy engine from the packaged rule file
    (:meth:`PolicyEngine.from_catalog`), never from the ``policy_rules`` table: its tools,
    ground truth and policy text agree with one another, but a catalog generated under another
    rule file keeps orders priced, shipped and returned under that one. Such a catalog still
    works; this names the difference, so that it is regenerated knowingly.
    """
    paths = [root / rel for rel, e in manifest.files.items() if e.table == "policy_rules"]
    if not paths:
        return
    config = manifest.config
    try:
        engine = PolicyEngine.for_store(
            manifest.seed, policies=config.get("policies"), taxonomy=config.get("taxonomy")
        )
    except ShopgenError as exc:
        yield f"policy_rules: the runtime cannot build this catalog's policy engine: {exc}"
        return
    stored = pl.read_parquet(paths, columns=["rule_id", "value", "text"])
    was = {r["rule_id"]: (r["value"], r["text"]) for r in stored.iter_rows(named=True)}
    now = {
        r.id: (json.dumps(engine.value(r.id)), rule_sentence(engine, r))
        for r in engine.policies.rules
    }
    added = sorted(now.keys() - was.keys())
    removed = sorted(was.keys() - now.keys())
    changed = sorted(rid for rid in was.keys() & now.keys() if was[rid] != now[rid])
    if added or removed or changed:
        first = (added or removed or changed)[0]
        yield (
            f"policy_rules: the stored rules are not the rule file the runtime uses (version "
            f"{engine.policies.version}: {len(added)} new, {len(removed)} gone, {len(changed)} "
            f"changed, e.g. {first!r}); the orders were generated under other rules: regenerate "
            "the catalog"
        )


def _file_problems(root: Path, manifest: Manifest, checksums: bool):
    listed = set(manifest.files)
    present = {p.relative_to(root).as_posix() for p in root.rglob("*.parquet")}
    # Derived non-Parquet files (a search index) live in their own top-level folders; every
    # file in such a folder must be listed too.
    for folder in {rel.split("/")[0] for rel in listed if not is_parquet(rel) and "/" in rel}:
        present |= {
            p.relative_to(root).as_posix() for p in (root / folder).rglob("*") if p.is_file()
        }
    for rel in sorted(present - listed):
        yield f"{rel}: not listed in the manifest"
    yield from listed_file_problems(root, manifest, checksums=checksums)


def listed_file_problems(root: Path, manifest: Manifest, *, checksums: bool) -> Iterator[str]:
    """Files the manifest lists that are missing, of another size or (``checksums``) changed.

    Without checksums it is stat calls only: what commands check before they start work.
    """
    for rel, entry in manifest.files.items():
        path = root / rel
        if not path.is_file():
            yield f"{rel}: missing"
            continue
        if path.stat().st_size != entry.bytes:
            yield f"{rel}: {path.stat().st_size} bytes, manifest says {entry.bytes}"
        elif checksums and sha256_file(path) != entry.sha256:
            yield f"{rel}: checksum mismatch (file changed or corrupted)"


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic surfacing from polars (pyo3's ``PanicException``).

    It derives from ``BaseException``, not ``Exception``: ``except Exception`` misses it.
    """
    return any(
        cls.__name__ == "PanicException" and cls.__module__.startswith("pyo3")
        for cls in type(exc).__mro__
    )


def parquet_problem(path: Path) -> str | None:
    """Why the Parquet file at ``path`` cannot be read in full, or None when it can.

    The footer, the schema and every row group's pages are decoded (one row group at a time,
    so memory stays bounded). Same-sized damage inside a file passes the size check, and
    without checksums only this finds it; a reader's panic counts as a failure too.
    """
    try:
        parquet = pq.ParquetFile(path)
        for group in range(parquet.num_row_groups):
            parquet.read_row_group(group)
    except Exception as exc:  # any reader failure means an unreadable file
        return _reader_message(exc)
    except BaseException as exc:
        if not is_panic(exc):
            raise
        return _reader_message(exc)
    return None


def _reader_message(exc: BaseException) -> str:
    first = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def unreadable_file(roots: Iterable[Path], *, max_bytes: int = 1 << 30) -> tuple[Path, str] | None:
    """The first Parquet file of the datasets at ``roots`` that cannot be read, and why.

    For naming the culprit once a command's read has failed; a root that is not a readable
    dataset is skipped. Datasets holding more than ``max_bytes`` of Parquet in all are not
    searched (the answer would take too long; ``shopgen validate`` finds it).
    """
    manifests: list[tuple[Path, Manifest]] = []
    for root in roots:
        try:
            manifests.append((Path(root), read_manifest(Path(root))))
        except (ShopgenError, OSError):
            continue
    files = [
        (root, root / rel, entry.bytes)
        for root, manifest in manifests
        for rel, entry in manifest.files.items()
        if is_parquet(rel)
    ]
    if sum(size for _, _, size in files) > max_bytes:
        return None
    for _root, path, _size in files:
        if path.is_file():
            problem = parquet_problem(path)
            if problem is not None:
                return path, problem
    return None


def _schema_problems(root: Path, manifest: Manifest):
    fmt = manifest.config.get("format") if manifest.kind == "export" else None
    for rel, entry in manifest.files.items():
        if not is_parquet(rel):
            continue  # checked by size and checksum only
        unreadable = parquet_problem(root / rel)
        if unreadable is not None:
            yield f"{rel}: not readable as Parquet ({unreadable})"
            continue
        try:
            frame = pl.scan_parquet(root / rel)
            schema, rows = frame.collect_schema(), frame.select(pl.len()).collect().item()
            found = pq.read_schema(root / rel)
        except Exception as exc:  # any reader failure means an unreadable file
            yield f"{rel}: not readable as Parquet ({type(exc).__name__})"
            continue
        except BaseException as exc:
            if not is_panic(exc):
                raise
            yield f"{rel}: not readable as Parquet (the reader panicked)"
            continue
        if rows != entry.rows:
            yield f"{rel}: {rows} rows, manifest says {entry.rows}"
        try:
            expected = expected_schema(manifest.kind, entry.table, fmt=fmt, found=found)
        except DatasetError as exc:
            yield f"{rel}: {exc}"
            continue
        if expected is None:
            continue  # a table shopgen does not declare: files, rows and checksums only
        differences = _schema_differences(polars_schema(expected), schema)
        if differences:
            what = f"the {fmt} export's rows" if fmt else f"{manifest.kind} table {entry.table!r}"
            yield f"{rel}: schema differs from {what} ({'; '.join(differences[:3])})"


def _schema_differences(want: pl.Schema, got: pl.Schema) -> list[str]:
    """Missing, unexpected and retyped columns, in the expected column order."""
    out = [f"missing column {name}" for name in want if name not in got]
    out += [f"unexpected column {name}" for name in got if name not in want]
    out += [
        f"column {name} is {_short(got[name])}, expected {_short(dtype)}"
        for name, dtype in want.items()
        if name in got and got[name] != dtype
    ]
    if not out and list(want) != list(got):
        out.append(f"columns in another order ({', '.join(got)})")
    return out


def _short(dtype: pl.DataType, limit: int = 80) -> str:
    text = str(dtype)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rule_problems(root: Path, manifest: Manifest):
    tables = {e.table for rel, e in manifest.files.items() if is_parquet(rel)}
    con = duckdb.connect()
    for table in sorted(tables):
        paths = ", ".join(
            f"'{(root / rel).as_posix()}'" for rel, e in manifest.files.items() if e.table == table
        )
        con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet([{paths}])')
    if "today" in manifest.config:  # the simulated clock of a world (issue #3)
        con.execute(
            "CREATE TABLE clock AS SELECT CAST(? AS DATE) AS today", [manifest.config["today"]]
        )
        tables = tables | {"clock"}
    for rule in RULES:
        if set(rule.tables) <= tables:
            bad = con.execute(rule.sql).fetchone()[0]
            if bad:
                yield f"{bad:,} rows: {rule.problem}"
