"""What every export shares: reading the source tasks, the public view of a row, the writer.

An export is itself a versioned dataset (DESIGN §10): Parquet rows under ``data/`` in Hugging
Face layout, plus format-specific side files (a JSONL copy, verl's YAML configs), all listed in
the manifest, with the task dataset as its parent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def write_export(
    rows: Iterable[dict[str, Any]],
    out: Path,
    *,
    schema: pa.Schema,
    fmt: str,
    source: Manifest,
    config: dict[str, Any],
    side_files: dict[str, str] | None = None,
    force: bool = False,
) -> Manifest:
    """Write an export dataset atomically; side files are listed in the manifest as ``fmt``.

    Args:
        rows: the exported rows, matching ``schema``.
        out: the output directory.
        schema: the Parquet schema of ``data/``.
        fmt: the export format's name (recorded in the config and the card).
        source: the manifest of the task dataset (its id becomes the parent).
        config: format options to record.
        side_files: relative path → text of extra files (configs, JSONL copies).
        force: replace an existing ``out``.
    """
    out = Path(out)
    side_files = side_files or {}
    with staging_dir(out, force=force) as tmp:
        parts: list[pa.Table] = []
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == ROWS_PER_FILE:
                parts.append(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch or not parts:
            parts.append(pa.Table.from_pylist(batch, schema=schema))
        for i, table in enumerate(parts):
            path = tmp / shard_name("data", i, len(parts))
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, path, compression="zstd")
        for rel, text in side_files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
        manifest = finalize(
            tmp,
            kind="export",
            seed=source.seed,
            config={"format": fmt, "tasks": source.dataset_id, **config},
            parents=[source.dataset_id],
            title=f"shopgen export ({fmt}) of {source.dataset_id}",
            summary=f"shopgen tasks in the `{fmt}` layout for training; hidden ground truth "
            "is kept out of every column the model is shown.",
        )
    if side_files:
        manifest = add_files(out, {rel: fmt for rel in side_files})
    return manifest
