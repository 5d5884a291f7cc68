"""Versioned datasets on disk: atomic writes, manifests, cards, checksums (DESIGN §10).

A dataset is a directory of Parquet files in Hugging Face layout
(``<table>/<split>-0000i-of-0000n.parquet``), a ``manifest.json`` and a ``README.md`` card.
It is written into a hidden temporary sibling and renamed into place only once complete, so
a run that dies leaves nothing that looks like a dataset.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
import pyarrow.parquet as pq
from pydantic import ValidationError

from shopgen.schemas.errors import DatasetError
from shopgen.schemas.manifest import SCHEMA_VERSION, DatasetKind, FileEntry, Manifest
from shopgen.schemas.version import SHOPGEN_VERSION

MANIFEST = "manifest.json"
CARD = "README.md"


def shard_name(table: str, index: int, count: int, *, split: str = "train") -> str:
    """The Hugging Face file name of shard ``index`` of ``count``."""
    return f"{table}/{split}-{index:05d}-of-{count:05d}.parquet"


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def default_modes() -> tuple[int, int]:
    """The modes a new directory and a new file get under this process's umask (0755, 0644).

    ``tempfile`` creates 0700 directories and 0600 files whatever the umask; a dataset staged
    with it is given these modes before it is renamed into place, so that other users (or
    Ray workers under another account) on a shared filesystem can read it.
    """
    mask = _umask()
    return 0o777 & ~mask, 0o666 & ~mask


def _umask() -> int:
    # Linux shows it in /proc without changing it; elsewhere set it and put it back at once.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def is_dataset(root: Path) -> bool:
    """Whether ``root`` holds a readable manifest written by shopgen."""
    try:
        read_manifest(root)
    except (DatasetError, OSError):
        return False
    return True


def check_replaceable(out: Path, *, force: bool) -> None:
    """Refuse an output that exists unless it is empty, or ``force`` and a shopgen dataset.

    A file is refused even with ``force``, and so is a non-empty directory that is not a
    shopgen dataset: ``force`` replaces a dataset, never some other directory (a project
    root, ``data/`` holding several datasets, someone's notes) named as the output.
    Nothing is changed.
    """
    if out.name in ("", ".", ".."):  # the working directory or a parent: never a dataset's own
        raise DatasetError(
            f"--out {out} names no directory of its own: give the dataset's directory, "
            "e.g. --out data/catalog"
        )
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out} is a file, not a dataset directory: choose another output")
    if not out.exists() or not any(out.iterdir()):
        return
    if not force:
        raise DatasetError(f"{out} already exists and is not empty (use --force to replace it)")
    if not is_dataset(out):
        raise DatasetError(
            f"{out} is not empty and not a shopgen dataset (no readable {MANIFEST}): --force "
            "only replaces a shopgen dataset or an empty directory; choose another output"
        )


def prepare_output(out: Path, *, force: bool) -> None:
    """:func:`check_replaceable`, then make sure the parent exists and is writable."""
    check_replaceable(out, force=force)
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"cannot create {parent}: {exc.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise DatasetError(f"{parent} is not writable")


@contextmanager
def staging_dir(out: Path, *, force: bool) -> Iterator[Path]:
    """A temporary sibling of ``out`` that becomes ``out`` when the block succeeds.

    On any exception the temporary directory is removed; on success an existing ``out``
    (allowed by ``force``, and only if it is a shopgen dataset or empty) is replaced. Without
    ``force``, a dataset that another run finished at ``out`` while this one was writing is
    kept and this run's output is dropped. The result has the umask's modes
    (:func:`default_modes`), not ``mkdtemp``'s 0700.
    """
    prepare_output(out, force=force)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.resolve().parent))
    try:
        tmp.chmod(default_modes()[0])
        yield tmp
        prepare_output(out, force=force)  # again: another run may have written it meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        trash = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(trash)
        tmp.rename(out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        tmp.rename(out)


def finalize(
    root: Path,
    *,
    kind: DatasetKind,
    seed: int,
    config: dict[str, Any],
    title: str,
    summary: str,
    parents: list[str] | None = None,
) -> Manifest:
    """Checksum every Parquet file under ``root`` and write its manifest and card.

    Called last inside :func:`staging_dir`, so a manifest exists only beside complete files.
    """
    files: dict[str, FileEntry] = {}
    for path in sorted(root.rglob("*.parquet")):
        rel = path.relative_to(root).as_posix()
        files[rel] = FileEntry(
            table=rel.split("/")[0],
            rows=pq.ParquetFile(path).metadata.num_rows,
            bytes=path.stat().st_size,
            sha256=sha256_file(path),
        )
    content = hashlib.sha256(
        "".join(f"{rel}\0{entry.sha256}\n" for rel, entry in files.items()).encode()
    ).hexdigest()
    manifest = Manifest(
        kind=kind,
        dataset_id=f"{kind}-{content[:12]}",
        shopgen_version=SHOPGEN_VERSION,
        schema_version=SCHEMA_VERSION,
        seed=seed,
        config=config,
        parents=parents or [],
        files=files,
        content_hash=content,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    (root / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (root / CARD).write_text(_render_card(manifest, title=title, summary=summary), encoding="utf-8")
    return manifest


def _render_card(manifest: Manifest, *, title: str, summary: str) -> str:
    tables: dict[str, dict[str, Any]] = {}
    for rel, entry in manifest.files.items():
        split = rel.split("/")[-1].split("-")[0]
        t = tables.setdefault(
            entry.table, {"name": entry.table, "split": split, "rows": 0, "files": 0}
        )
        t["rows"] += entry.rows
        t["files"] += 1
    source = (
        resources.files("shopgen.templates").joinpath("cards", "dataset.md.j2").read_text("utf-8")
    )
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(source).render(
        manifest=manifest,
        tables=list(tables.values()),
        title=title,
        summary=summary,
        config_json=json.dumps(manifest.config, indent=2, sort_keys=True),
    )


def read_manifest(root: Path) -> Manifest:
    """Load and schema-check ``root/manifest.json``."""
    path = Path(root) / MANIFEST
    if not Path(root).is_dir():
        raise DatasetError(f"{root} is not a directory")
    if not path.is_file():
        raise DatasetError(f"{root} has no {MANIFEST}: not a shopgen dataset, or an incomplete one")
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError) as exc:
        raise DatasetError(
            f"{path} is not a valid shopgen manifest ({str(exc).splitlines()[0]})"
        ) from None


def table_files(root: Path, manifest: Manifest, table: str) -> list[Path]:
    """The files of one table, in shard order."""
    paths = [Path(root) / rel for rel, e in manifest.files.items() if e.table == table]
    if not paths:
        raise DatasetError(f"{root} has no table {table!r}")
    return sorted(paths)


def add_files(root: Path, tables: dict[str, str]) -> Manifest:
    """List extra, non-Parquet files (e.g. a search index) in an existing dataset's manifest.

    ``dataset_id`` and ``content_hash`` stay as they are: they name the data, and a derived
    file such as an index does not change the data. The manifest is replaced atomically
    (temporary file + ``os.replace``), so a reader sees the old or the new one, never half.

    Args:
        root: the dataset directory.
        tables: relative path → table name of each file to add or refresh. Files listed
            before under these tables but absent from ``tables`` are dropped.

    Returns:
        The updated manifest.
    """
    root = Path(root)
    manifest = read_manifest(root)
    replaced = set(tables.values())
    files = {rel: e for rel, e in manifest.files.items() if e.table not in replaced}
    for rel, table in sorted(tables.items()):
        path = root / rel
        if rel.endswith(".parquet") or not path.is_file():
            raise DatasetError(f"{path}: not an existing non-Parquet file")
        files[rel] = FileEntry(
            table=table, rows=0, bytes=path.stat().st_size, sha256=sha256_file(path)
        )
    updated = manifest.model_copy(update={"files": files})
    dir_mode, file_mode = default_modes()
    _open_up_dirs(root, tables, dir_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(updated.model_dump_json(indent=2) + "\n")
        os.chmod(tmp, file_mode)  # mkstemp's 0600 would hide the manifest from other users
        os.replace(tmp, root / MANIFEST)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return updated


def _open_up_dirs(root: Path, rels: Iterable[str], mode: int) -> None:
    """Add ``mode``'s bits to the folders (inside ``root``) holding ``rels``.

    Derived files are often built in a ``mkdtemp`` folder renamed into the dataset (the
    search index): 0700 whatever the umask. Rights are only added, never taken away.
    """
    folders = {parent for rel in rels for parent in PurePosixPath(rel).parents} - {
        PurePosixPath(".")
    }
    for folder in sorted(folders):
        path = root / folder
        current = path.stat().st_mode & 0o7777
        if current | mode != current:
            path.chmod(current | mode)


def is_parquet(rel: str) -> bool:
    """Whether a manifest path is a Parquet table file (others are derived files)."""
    return rel.endswith(".parquet")
