"""Writing task datasets (DESIGN §7, §10): rows under ``data/``, manifest, card, atomically."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from shopgen.gen.dataset import finalize, read_manifest, shard_name, staging_dir, table_files
from shopgen.gen.row_checks import first_error
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.manifest import Manifest, a_dataset
from shopgen.schemas.tables import TASKS
from shopgen.schemas.task import TaskRow

#: Rows per Parquet file: bounded memory whatever ``n``.
ROWS_PER_FILE = 20_000


def write_tasks(
    rows: Iterable[TaskRow],
    out: Path,
    *,
    seed: int,
    config: dict[str, Any],
    parents: list[str],
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    outcome: Callable[[], dict[str, Any]] | None = None,
) -> Manifest:
    """Stream ``rows`` into the task dataset ``out`` (``data/train-0000i-of-0000n.parquet``).

    File names need the file count, which is known only at the end, so shards are written
    under temporary names and renamed once the stream is exhausted. ``outcome`` gives entries
    of the manifest's ``config`` known only then (the draws a run passed over).
    """
    with staging_dir(Path(out), force=force) as tmp:
        parts: list[Path] = []
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row.to_row())
            if progress:
                progress(1)
            if len(batch) == ROWS_PER_FILE:
                parts.append(_flush(tmp, batch, len(parts)))
                batch = []
        if batch or not parts:
            parts.append(_flush(tmp, batch, len(parts)))
        for i, part in enumerate(parts):
            final = tmp / shard_name("data", i, len(parts))
            final.parent.mkdir(parents=True, exist_ok=True)
            part.rename(final)
        return finalize(
            tmp,
            kind="tasks",
            seed=seed,
            config={**config, **(outcome() if outcome else {})},
            parents=parents,
            title=f"shopgen tasks: {', '.join(config['envs'])}",
            summary="Verifiable shopping-agent tasks: opening messages and tools for the agent, "
            "hidden goal, episode state, user script and a proven oracle trajectory per row.",
        )


def _flush(root: Path, batch: list[dict[str, Any]], index: int) -> Path:
    path = root / f".part-{index:05d}.parquet"
    pq.write_table(pa.Table.from_pylist(batch, schema=TASKS), path, compression="zstd")
    return path


def read_tasks(root: Path) -> list[TaskRow]:
    """Every task of a task dataset, validated.

    Raises:
        DatasetError: the dataset is not a task dataset, or a row is not a valid task.
    """
    manifest = read_manifest(root)
    if manifest.kind != "tasks":
        raise DatasetError(f"{root} is {a_dataset(manifest.kind)}, not a task dataset")
    rows: list[TaskRow] = []
    for path in table_files(root, manifest, "data"):
        for i, raw in enumerate(pq.read_table(path).to_pylist()):
            try:
                rows.append(TaskRow.from_row(raw))
            except ValidationError as exc:
                raise DatasetError(f"{path}: row {i}: {first_error(exc)}") from None
    return rows
