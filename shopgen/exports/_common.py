"""What every export shares: reading the source tasks, the public view of a row, the writer.

An export is itself a versioned dataset (DESIGN §10): Parquet rows under ``data/`` (or, for
verl's per-environment layout, one table per environment) in Hugging Face layout, plus
format-specific side files (a JSONL copy, verl's YAML configs), all listed in the manifest,
with the task dataset as its parent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from shopgen.gen.dataset import add_files, finalize, read_manifest, shard_name, staging_dir
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow
from shopgen.task_writer import read_tasks

#: Rows per Parquet file, as for task datasets: bounded memory whatever the size.
ROWS_PER_FILE = 20_000

#: The row fields the model must never see (DESIGN §7): ground truth and the solving plan.
HIDDEN_FIELDS: tuple[str, ...] = ("goal", "episode", "user_script", "oracle")


def load_source(tasks: Path) -> tuple[list[TaskRow], Manifest]:
    """The rows of a task dataset and its manifest (for the export's parent id)."""
    return read_tasks(Path(tasks)), read_manifest(Path(tasks))


def public_messages(row: TaskRow) -> list[dict[str, str]]:
    """The opening the agent sees: system prompt and first customer message, nothing else."""
    return [{"role": m.role, "content": m.content} for m in row.messages]


def public_tools(row: TaskRow) -> list[dict[str, Any]]:
    """The OpenAI function schemas the task offers."""
    return json.loads(row.tools)


def task_json(row: TaskRow) -> str:
    """The whole row as one JSON string: what a runtime adapter hands to ``ShopEnv.reset``."""
    return json.dumps(row.to_row(), ensure_ascii=False, separators=(",", ":"), sort_keys=True)


#: The table of a one-table export, as in every other shopgen dataset.
DATA = "data"

#: One Parquet table of an export: its rows (any iterable, consumed once) and their schema.
TableRows = tuple[Iterable[dict[str, Any]], pa.Schema]


def write_export(
    tables: Mapping[str, TableRows],
    out: Path,
    *,
    fmt: str,
    source: Manifest,
    config: dict[str, Any] | None = None,
    side_files: dict[str, str] | None = None,
    layout: str = " for training",
    force: bool = False,
) -> Manifest:
    """Write an export dataset atomically; side files are listed in the manifest as ``fmt``.

    Every format goes through here, so all share one layout, one shard size and one manifest
    shape; verl's per-environment export is just several tables.

    Args:
        tables: table name → (rows, schema); one :data:`DATA` table for most formats, one per
            environment for verl's per-environment layout (its files go under ``<name>/``).
        out: the output directory.
        fmt: the export format's name (recorded in the config and the card).
        source: the manifest of the task dataset (its id becomes the parent).
        config: format options to record after ``format`` and ``tasks``.
        side_files: relative path → text of extra files (configs, JSONL copies); a table's
            own files go in its folder (``<name>/tool_config.yaml``).
        layout: the card summary's words after "in the `fmt` layout" (verl's
            per-environment export says how its tables split).
        force: replace an existing ``out``.
    """
    out = Path(out)
    side_files = side_files or {}
    with staging_dir(out, force=force) as tmp:
        for name, (rows, schema) in tables.items():
            _write_table(tmp, name, rows, schema)
        for rel, text in side_files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
        manifest = finalize(
            tmp,
            kind="export",
            seed=source.seed,
            config={"format": fmt, "tasks": source.dataset_id, **(config or {})},
            parents=[source.dataset_id],
            title=f"shopgen export ({fmt}) of {source.dataset_id}",
            summary=f"shopgen tasks in the `{fmt}` layout{layout}; hidden "
            "ground truth is kept out of every column the model is shown.",
        )
    if side_files:
        manifest = add_files(out, dict.fromkeys(side_files, fmt))
    return manifest


def _write_table(root: Path, name: str, rows: Iterable[dict[str, Any]], schema: pa.Schema) -> None:
    """Write ``rows`` as ``name``'s shards, holding at most :data:`ROWS_PER_FILE` rows at once.

    A shard's name carries the shard count, unknown until the rows run out: each shard is
    written under a staging name first and renamed at the end. No rows still make one (empty)
    shard, so the table and its schema exist.
    """
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    staged: list[Path] = []
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        path = folder / f".shard-{len(staged)}"
        pq.write_table(pa.Table.from_pylist(batch, schema=schema), path, compression="zstd")
        staged.append(path)
        batch.clear()

    for row in rows:
        batch.append(row)
        if len(batch) == ROWS_PER_FILE:
            flush()
    if batch or not staged:
        flush()
    for i, path in enumerate(staged):
        path.rename(root / shard_name(name, i, len(staged)))
