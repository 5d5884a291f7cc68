"""Task generation split into shards that run on any executor (local processes or Ray).

A shard is a range of task indices ``k`` for one (environment, difficulty). Task ``k`` draws
only from the streams ``(seed, "task", env, d, k, …)`` (DESIGN §4), so a shard makes exactly
the tasks :meth:`TaskFactory.batch` makes for those ``k``; the shards' rows are chained back in
job order, which is ``batch``'s order (environment-major, then ``d``, then ``k``). The result
is the same dataset, row for row, whatever the backend.

Each worker opens the catalog (store, runtime, factory) once and keeps it for every later
shard with the same catalog and settings (:func:`_factory` is a per-process cache: Ray and
``ProcessPoolExecutor`` both reuse their worker processes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import SkippedDraw, TaskFactory

#: Tasks per shard: big enough to amortise a job's overhead, small enough to balance.
SHARD_TASKS = 50


@dataclass(frozen=True)
class TaskShard:
    """Tasks ``start`` ≤ k < ``stop`` of ``env`` at difficulty ``d``, from one catalog."""

    catalog: str
    seed: int
    overrides: str  # JSON, sorted keys: hashable for the per-worker cache
    prompt: str | None
    skip_failed_oracles: bool
    env: str
    d: int
    start: int
    stop: int


def task_shards(
    catalog: str | Path,
    *,
    envs: list[str],
    ds: list[int],
    n: int,
    seed: int,
    overrides: dict[str, Any] | None = None,
    prompt: str | None = None,
    skip_failed_oracles: bool = False,
    shard_tasks: int = SHARD_TASKS,
) -> list[TaskShard]:
    """The shards of a run, in the order their rows go into the dataset.

    Raises:
        ConfigError: ``n`` or ``shard_tasks`` below 1.
    """
    if n < 1:
        raise ConfigError(f"n={n} must be > 0")
    if shard_tasks < 1:
        raise ConfigError(f"shard_tasks={shard_tasks} must be > 0")
    root = str(Path(catalog).resolve())
    axes = json.dumps(dict(overrides or {}), sort_keys=True)
    return [
        TaskShard(
            root,
            seed,
            axes,
            prompt,
            skip_failed_oracles,
            env,
            d,
            start,
            min(start + shard_tasks, n),
        )
        for env in envs
        for d in ds
        for start in range(0, n, shard_tasks)
    ]


@dataclass(frozen=True)
class ShardResult:
    """A shard's proven tasks in ``k`` order, and the draws it passed over (``SkippedDraw``)."""

    rows: list[TaskRow]
    skipped: list[SkippedDraw]


def run_shard(shard: TaskShard) -> ShardResult:
    """The proven tasks of one shard (runs inside a worker)."""
    factory = _factory(
        shard.catalog, shard.seed, shard.overrides, shard.prompt, shard.skip_failed_oracles
    )
    before = len(factory.skipped)  # the worker's factory outlives the shard
    rows = [factory.make(shard.env, shard.d, k).row for k in range(shard.start, shard.stop)]
    return ShardResult(rows, factory.skipped[before:])


def generate_sharded(
    executor: Executor, shards: list[TaskShard], skipped: list[SkippedDraw] | None = None
) -> Iterator[TaskRow]:
    """Every task of ``shards`` made on ``executor``, yielded in job order.

    The draws the shards passed over are appended to ``skipped`` as their shards finish.
    """
    for result in executor.map(run_shard, shards):
        if skipped is not None:
            skipped.extend(result.skipped)
        yield from result.rows


@lru_cache(maxsize=2)
def _factory(
    catalog: str, seed: int, overrides: str, prompt: str | None, skip_failed_oracles: bool
) -> TaskFactory:
    env = ShopEnv(CatalogStore(catalog))
    return TaskFactory(
        env,
        seed=seed,
        overrides=json.loads(overrides),
        prompt=prompt,
        freeze_heap=True,
        skip_failed_oracles=skip_failed_oracles,
    )
