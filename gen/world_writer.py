"""Writing the world beside a catalog: users, orders, lines, visits and the policy rules.

Called by :func:`shopgen.gen.catalog_writer.write_catalog` inside the catalog's staging
directory, after the product shards, so one manifest covers products and world. User shards
are whole random blocks, so the files do not depend on the worker count.
"""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import Executor, ProcessPoolExecutor
from datetime import date
from functools import lru_cache
from pathlib import Path

import polars as pl

from shopgen.gen.dataset import shard_name
from shopgen.gen.policy import PolicyEngine
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.gen.users import USER_BLOCK, users_frame
from shopgen.gen.vocab import brand_pools
from shopgen.gen.world import generate_history
from shopgen.gen.world_products import ProductContext, product_context
from shopgen.schemas.tables import CATALOG_TABLES, POLICY_RULES, polars_empty

#: Users per shard file: whole random blocks (~160k orders, ~1.6M visits per file).
USER_SHARD_ROWS = 4 * USER_BLOCK
WORLD_TABLES = ("users", "orders", "order_lines", "visits")


def world_shards(users: int) -> int:
    """How many user shard files a world of ``users`` users is written as."""
    return -(-users // USER_SHARD_ROWS)


def write_world(
    root: Path,
    *,
    seed: int,
    users: int,
    today: date,
    taxonomy: str | None,
    workers: int = 1,
    pool: Executor | None = None,
) -> None:
    """Generate the world of the catalog staged at ``root`` into the same directory.

    ``pool``, when given, runs the user shards (``workers`` is then ignored): the catalog
    writer passes the processes that just wrote the product shards, so they start warm.
    """
    shards = [
        (i, s, min(s + USER_SHARD_ROWS, users))
        for i, s in enumerate(range(0, users, USER_SHARD_ROWS))
    ]
    jobs = [
        (str(root), seed, taxonomy, today.isoformat(), start, stop, i, len(shards))
        for i, start, stop in shards
    ]
    if pool is not None and len(jobs) > 1:
        list(pool.map(_write_shard, jobs))
    elif workers == 1 or len(jobs) == 1:
        for job in jobs:
            _write_shard(job)
    else:
        mp = multiprocessing.get_context("spawn")  # polars is not fork-safe
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=mp) as pool:
            list(pool.map(_write_shard, jobs))
    engine = PolicyEngine.for_store(seed, taxonomy=taxonomy)
    _write(root, "policy_rules", 0, 1, policy_rules_frame(engine))


def policy_rules_frame(engine: PolicyEngine) -> pl.DataFrame:
    """The store's rules with their drawn values and sentences, one row per rule."""
    rows = []
    for topic, order in engine.order.items():
        for rank, rid in enumerate(order):
            rule = engine.rules[rid]
            decision = engine._decision(rule, (rid,))
            rows.append(
                {
                    "rule_id": rid,
                    "topic": topic,
                    "clauses": json.dumps([c.model_dump() for c in rule.when]),
                    "n_clauses": len(rule.when),
                    "precedence": rank,
                    "kind": rule.answer.kind,
                    "unit": rule.answer.unit,
                    "value": json.dumps(engine.value(rid)),
                    "text": decision.explanation,
                }
            )
    return pl.from_arrow(__import__("pyarrow").Table.from_pylist(rows, schema=POLICY_RULES))


@lru_cache(maxsize=2)
def _context(
    root: str, seed: int, taxonomy: str | None
) -> tuple[ProductContext, PolicyEngine, tuple, dict]:
    tax = load_taxonomy(taxonomy)
    leaves = [(d.id, c.id, list(c.tags)) for d, c in tax.leaves()]
    products = pl.read_parquet(
        f"{root}/products/*.parquet",
        columns=["product_id", "category_id", "price", "rating_count", "n_variants"],
    )
    variants = pl.read_parquet(
        f"{root}/variants/*.parquet", columns=["variant_id", "product_id", "price_delta"]
    )
    ctx = product_context(products, variants, leaves)
    engine = PolicyEngine.for_store(seed, taxonomy=taxonomy)
    return ctx, engine, ctx.departments, brand_pools(tax, seed)


def _write_shard(job: tuple) -> int:
    root, seed, taxonomy, today_iso, start, stop, index, count = job
    today = date.fromisoformat(today_iso)
    ctx, engine, departments, pools = _context(root, seed, taxonomy)
    users, draws = users_frame(
        seed, start, stop, today=today, departments=departments, brand_pools=pools
    )
    orders, lines, visits = generate_history(
        seed, draws, users["user_id"], ctx, engine, today=today
    )
    for table, frame in zip(WORLD_TABLES, (users, orders, lines, visits), strict=True):
        _write(Path(root), table, index, count, frame)
    return stop - start


@lru_cache(maxsize=16)
def _dtypes(table: str) -> dict[str, pl.DataType]:
    """The Polars dtypes of a world table (a cast in Polars, not a round trip through Arrow)."""
    return dict(polars_empty(CATALOG_TABLES[table]).schema)


def _write(root: Path, table: str, index: int, count: int, frame: pl.DataFrame) -> None:
    path = root / shard_name(table, index, count)
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = CATALOG_TABLES[table]
    if frame.height == 0:
        frame = polars_empty(schema)
    frame = frame.cast(_dtypes(table))
    # zstd level 1 writes ~25% faster than the default level for ~4% larger files.
    frame.write_parquet(path, compression="zstd", compression_level=1, statistics=True)
