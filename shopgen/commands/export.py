"""``shopgen export``: turn a task dataset into a training stack's dataset (issue #8)."""

from __future__ import annotations

from pathlib import Path

import click

from shopgen.exports import FORMATS, export_tasks


@click.command()
@click.option(
    "--tasks", required=True, type=click.Path(path_type=Path), help="Task dataset to export."
)
@click.option("--format", "fmt", required=True, type=click.Choice(FORMATS), help="Target stack.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output dataset.")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="The tasks' catalog: needed by sft (oracle replay); recorded in verl's configs.",
)
@click.option("--force", is_flag=True, help="Replace an existing output directory.")
def export(tasks: Path, fmt: str, out: Path, catalog: Path | None, force: bool) -> None:
    """Export TASKS for TRL, verl, verifiers, plain JSONL chat, or SFT transcripts."""
    manifest = export_tasks(tasks, out, fmt=fmt, catalog=catalog, force=force)
    rows = sum(e.rows for e in manifest.files.values())
    click.echo(f"wrote {rows:,} {fmt} rows to {out} ({manifest.dataset_id})")
