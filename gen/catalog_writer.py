"""Writing a catalog dataset: shards in parallel, then manifest and card, atomically."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa

from shopgen.gen.backends import check_shared, open_executor
from shopgen.gen.catalog import BLOCK, generate_rows
from shopgen.gen.dataset import finalize, shard_name, staging_dir
from shopgen.gen.plan import compile_plan
from shopgen.gen.world_writer import world_shards, write_world
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.tables import CATALOG_TABLES, TAXONOMY, polars_empty
from shopgen.schemas.validation import check_positive, check_range

#: Products per shard file. Fixed (not derived from the worker count) so the files, not just
#: the rows, are identical whatever ``workers`` is.
SHARD_ROWS = 64 * BLOCK
#: Ids hold 40 bits and each product reserves 32 variant ids.
MAX_PRODUCTS = (1 << 40) // 32
#: Order ids reserve 64 slots per user in the same 40-bit space.
MAX_USERS = (1 << 40) // 64
DEFAULT_TODAY = "2026-03-02"


@dataclass(frozen=True, kw_only=True)
class CatalogConfig:
    """What a catalog is made of; every field lands in the manifest."""

    size: int
    seed: int = 0
    taxonomy: str | None = None
    #: Customers of the world; None means size // 10 (at least 1).
    users: int | None = None
    #: The simulated clock's date (ISO); every world date is relative to it (DESIGN §4).
    today: str = DEFAULT_TODAY

    def __post_init__(self) -> None:
        check_positive("size", self.size)
        check_range("size", self.size, 1, MAX_PRODUCTS)
        check_range("seed", self.seed, 0, 2**63 - 1)
        if self.users is not None:
            check_range("users", self.users, 1, MAX_USERS)
        try:
            date.fromisoformat(self.today)
        except (TypeError, ValueError):
            raise ConfigError(f"today={self.today!r} is not an ISO date (YYYY-MM-DD)") from None

    @property
    def n_users(self) -> int:
        """The number of users the world holds."""
        return self.users if self.users is not None else max(1, self.size // 10)


Progress = Callable[[int], None]


def write_catalog(
    config: CatalogConfig,
    out: Path,
    *,
    workers: int = 1,
    force: bool = False,
    progress: Progress | None = None,
    shard_rows: int = SHARD_ROWS,
    backend: str = "local",
    address: str | None = None,
    timings: dict[str, float] | None = None,
) -> Manifest:
    """Generate the catalog described by ``config`` into the dataset directory ``out``.

    Args:
        config: size, seed and taxonomy.
        out: the dataset directory; must not exist or be empty unless ``force``.
        workers: processes generating shards in parallel; the output does not depend on it.
        force: replace an existing ``out``.
        progress: called with the number of products finished after each shard.
        shard_rows: products per file; rows do not depend on it, file boundaries do.
        backend: where the shards run, ``local`` or ``ray`` (:mod:`shopgen.gen.backends`);
            the output does not depend on it.
        address: the Ray cluster to join (``ray`` only; None starts a local instance).
        timings: if given, filled with the wall seconds of each phase (``products`` including
            worker start-up, ``world``, ``manifest``): what a benchmark compares.

    Returns:
        The manifest written beside the data.
    """
    check_positive("workers", workers)
    check_positive("shard_rows", shard_rows)
    clock = _PhaseClock(timings)
    starts = range(0, config.size, shard_rows)
    shards = [(i, s, min(s + shard_rows, config.size)) for i, s in enumerate(starts)]
    with (
        staging_dir(Path(out), force=force) as tmp,
        _pool(
            workers,
            jobs=max(len(shards), world_shards(config.n_users)),
            backend=backend,
            address=address,
        ) as pool,
    ):
        check_shared(pool, tmp)
        jobs = [
            (config.seed, config.taxonomy, start, stop, i, len(shards), str(tmp))
            for i, start, stop in shards
        ]
        for rows in pool.map(_write_shard, jobs) if pool else map(_write_shard, jobs):
            progress and progress(rows)
        _write_taxonomy(config, tmp)
        clock.lap("products")
        # The world runs in the same worker processes: their imports, taxonomy and brand
        # pools are already warm.
        write_world(
            tmp,
            seed=config.seed,
            users=config.n_users,
            today=date.fromisoformat(config.today),
            taxonomy=config.taxonomy,
            workers=workers,
            pool=pool,
        )
        clock.lap("world")
        manifest = finalize(
            tmp,
            kind="catalog",
            seed=config.seed,
            config=asdict(config),
            title=f"shopgen catalog: {config.size:,} products",
            summary="A synthetic retail catalog of products with variants, drawn from the shopgen taxonomy.",
        )
        clock.lap("manifest")
        return manifest


class _PhaseClock:
    """Records the wall time of consecutive phases into a caller's dict (or nowhere)."""

    def __init__(self, sink: dict[str, float] | None) -> None:
        self._sink = sink
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        if self._sink is not None:
            self._sink[phase] = round(now - self._last, 3)
        self._last = now


@contextmanager
def _pool(
    workers: int, *, jobs: int, backend: str = "local", address: str | None = None
) -> Iterator[Executor]:
    """The executor for the product shards and then the world (:mod:`shopgen.gen.backends`)."""
    with open_executor(backend, workers=workers, address=address, jobs=jobs) as pool:
        yield pool


def _write_shard(job: tuple) -> int:
    seed, taxonomy, start, stop, index, count, root = job
    products, variants = generate_rows(compile_plan(seed, taxonomy), start, stop)
    for table, frame in (("products", products), ("variants", variants)):
        path = Path(root) / shard_name(table, index, count)
        path.parent.mkdir(parents=True, exist_ok=True)
        if frame is None:
            frame = polars_empty(CATALOG_TABLES[table])
        frame.write_parquet(path, compression="zstd", compression_level=1, statistics=True)
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
