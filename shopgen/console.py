"""Terminal output shared by commands: a progress bar on a terminal, silence in pipes and CI."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from shopgen.schemas.manifest import Manifest

T = TypeVar("T")


def interactive() -> bool:
    """True when stderr is a terminal (progress bars are for people, not logs)."""
    return sys.stderr.isatty()


@contextmanager
def progress_bar(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a bar on a terminal and does nothing elsewhere."""
    if not interactive():
        yield lambda n: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)


def counted(items: Iterable[T], advance: Callable[[int], None]) -> Iterator[T]:
    """``items``, advancing a progress bar as each is handed on."""
    for item in items:
        yield item
        advance(1)


def human_bytes(n: float) -> str:
    """``1536`` → ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def print_summary(out: Path, manifest: Manifest, seconds: float) -> None:
    """One line per table, then the total: rows, files, size and time."""
    tables: dict[str, list[int]] = {}
    for entry in manifest.files.values():
        t = tables.setdefault(entry.table, [0, 0, 0])
        t[0] += entry.rows
        t[1] += 1
        t[2] += entry.bytes
    for name, (rows, files, size) in sorted(tables.items()):
        click.echo(f"  {name:<12} {rows:>12,} rows  {files:>3} files  {human_bytes(size):>10}")
    total = sum(t[2] for t in tables.values())
    click.echo(f"wrote {manifest.dataset_id} to {out} ({human_bytes(total)}) in {seconds:.1f} s")
