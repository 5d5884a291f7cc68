"""``shopgen export``: turn a task dataset into a training stack's dataset (issue #8)."""

from __future__ import annotations

from pathlib import Path

import click

from shopgen.commands.catalogs import catalog_of_tasks, check_output, task_manifest
from shopgen.exports import FORMATS, export_tasks

#: Formats that open the catalog: sft replays the oracles, verl records it in its configs.
USES_CATALOG = {"sft": True, "verl": False}  # format → whether it cannot do without one


@click.command()
@click.option(
    "--tasks", required=True, type=click.Path(path_type=Path), help="Task dataset to export."
)
@click.option("--format", "fmt", required=True, type=click.Choice(FORMATS), help="Target stack.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output dataset.")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="The tasks' catalog (default: the one they were made from): sft replays the "
    "oracles in it; verl records it in its configs.",
)
@click.option("--force", is_flag=True, help="Replace an existing output directory.")
def export(tasks: Path, fmt: str, out: Path, catalog: Path | None, force: bool) -> None:
    """Export TASKS for TRL, verl, verifiers, plain JSONL chat, or SFT transcripts."""
    if fmt in USES_CATALOG:
        store = catalog_of_tasks(catalog, [tasks], required=USES_CATALOG[fmt])
        catalog = store.root if store is not None else None
    else:
        task_manifest(tasks)
    check_output(out, {"--tasks": tasks, "--catalog": catalog}, force=force)
    manifest = export_tasks(tasks, out, fmt=fmt, catalog=catalog, force=force)
    rows = sum(e.rows for e in manifest.files.values())
    click.echo(f"wrote {rows:,} {fmt} rows to {out} ({manifest.dataset_id})")
