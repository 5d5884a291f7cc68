"""Writing a catalog dataset: shards in parallel, then manifest and card, atomically."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from shopgen.gen.catalog import BLOCK, generate_rows
from shopgen.gen.dataset import finalize, shard_name, staging_dir
from shopgen.gen.plan import compile_plan
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.tables import TABLES, TAXONOMY, polars_empty
from shopgen.schemas.validation import check_positive, check_range

#: Products per shard file. Fixed (not derived from the worker count) so the files, not just
#: the rows, are identical whatever ``workers`` is.
SHARD_ROWS = 64 * BLOCK
#: Ids hold 40 bits and each product reserves 32 variant ids.
MAX_PRODUCTS = (1 << 40) // 32


@dataclass(frozen=True, kw_only=True)
class CatalogConfig:
    """What a catalog is made of; every field lands in the manifest."""

    size: int
    seed: int = 0
    taxonomy: str | None = None

    def __post_init__(self) -> None:
        check_positive("size", self.size)
        check_range("size", self.size, 1, MAX_PRODUCTS)
        check_range("seed", self.seed, 0, 2**63 - 1)


Progress = Callable[[int], None]


def write_catalog(
    config: CatalogConfig,
    out: Path,
    *,
    workers: int = 1,
    force: bool = False,
    progress: Progress | None = None,
) -> Manifest:
    """Generate the catalog described by ``config`` into the dataset directory ``out``.

    Args:
        config: size, seed and taxonomy.
        out: the dataset directory; must not exist or be empty unless ``force``.
        workers: processes generating shards in parallel; the output does not depend on it.
        force: replace an existing ``out``.
        progress: called with the number of products finished after each shard.

    Returns:
        The manifest written beside the data.
    """
    check_positive("workers", workers)
    shards = [
        (i, s, min(s + SHARD_ROWS, config.size))
        for i, s in enumerate(range(0, config.size, SHARD_ROWS))
    ]
    with staging_dir(Path(out), force=force) as tmp:
        jobs = [
            (config.seed, config.taxonomy, start, stop, i, len(shards), str(tmp))
            for i, start, stop in shards
        ]
        if workers == 1 or len(shards) == 1:
            results = map(_write_shard, jobs)
            for rows in results:
                progress and progress(rows)
        else:
            ctx = multiprocessing.get_context("spawn")  # polars is not fork-safe
            with ProcessPoolExecutor(max_workers=min(workers, len(shards)), mp_context=ctx) as pool:
                for rows in pool.map(_write_shard, jobs):
                    progress and progress(rows)
        _write_taxonomy(config, tmp)
        return finalize(
            tmp,
            kind="catalog",
            seed=config.seed,
            config=asdict(config),
            title=f"shopgen catalog: {config.size:,} products",
            summary="A synthetic retail catalog of products with variants, drawn from the shopgen taxonomy.",
        )


def _write_shard(job: tuple) -> int:
    seed, taxonomy, start, stop, index, count, root = job
    products, variants = generate_rows(compile_plan(seed, taxonomy), start, stop)
    for table, frame in (("products", products), ("variants", variants)):
        path = Path(root) / shard_name(table, index, count)
        path.parent.mkdir(parents=True, exist_ok=True)
        if frame is None:
            frame = polars_empty(TABLES[table])
        frame.write_parquet(path, compression="zstd", statistics=True)
    return stop - start


def _write_taxonomy(config: CatalogConfig, root: Path) -> None:
    plan = compile_plan(config.seed, config.taxonomy)
    tax = plan.taxonomy
    rows = []
    for dept, cat in tax.leaves():
        spec = {name: tax.attribute(cat, name).model_dump() for name in cat.attributes}
        rows.append(
            {
                "category_id": cat.id,
                "name": cat.name,
                "department_id": dept.id,
                "department": dept.name,
                "path": " > ".join(cat.path),
                "attributes": json.dumps(spec, sort_keys=True),
                "variant_axes": list(cat.variant_axes),
                "compat": list(cat.compat),
                "complements": list(cat.complements),
                "tags": list(cat.tags),
            }
        )
    path = root / shard_name("taxonomy", 0, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.from_arrow(pa.Table.from_pylist(rows, schema=TAXONOMY)).write_parquet(path)
