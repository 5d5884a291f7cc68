"""Which datasets a command runs on, checked before any work starts.

A command that fails after minutes of work, or that builds a fresh catalog its task set was
never drawn from, wastes the user's time and says nothing useful. So every command opens its
datasets here: the catalog a task set was drawn from is found through the task manifest (its
parent id and the path it was made from) instead of by building a default one, and a missing
or truncated file, a missing search index, or a catalog that is not the task set's parent
stops the run with one line naming the fix. Where a command writes is checked here too
(:func:`check_output`): never one of its own inputs, never a directory ``--force`` may not
replace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import click

from shopgen.gen.dataset import check_replaceable, read_manifest
from shopgen.gen.store import CatalogStore
from shopgen.gen.validate import listed_file_problems
from shopgen.schemas.errors import ConfigError, DatasetError
from shopgen.schemas.manifest import Manifest, a_dataset

DEFAULT_CATALOG = Path("data/catalog")
DEFAULT_CATALOG_SIZE = 10_000


def check_files(root: Path, manifest: Manifest) -> None:
    """Stop when a file the manifest lists is missing or has another size (stat calls only).

    Raises:
        DatasetError: naming the first such file; ``shopgen validate`` lists every problem.
    """
    for problem in listed_file_problems(root, manifest, checksums=False):
        raise DatasetError(
            f"{root}: {problem} (incomplete or changed dataset; `shopgen validate {root}` "
            "lists every problem)"
        )


def check_output(
    out: Path,
    inputs: Mapping[str, Path | None],
    *,
    force: bool | None = None,
    option: str = "--out",
) -> None:
    """Refuse, before any work, an output that would destroy the command's inputs.

    ``out`` may not be, contain or sit inside any of ``inputs`` (paths resolved, symlinks
    followed; a hard link to an input file counts as the input). For a dataset output
    (``force`` given), an existing ``out`` must also be one ``--force`` may replace
    (:func:`shopgen.gen.dataset.check_replaceable`). Nothing is changed.

    Args:
        out: where the command writes.
        inputs: option name (``--tasks``) → the path it reads; None entries are skipped.
        force: the command's ``--force`` for a dataset output; None for a plain file.
        option: the option naming ``out``, for the message.

    Raises:
        ConfigError: ``out`` overlaps an input.
        DatasetError: ``out`` exists and may not be replaced.
    """
    target = Path(out).resolve()
    for name, path in inputs.items():
        if path is None:
            continue
        source = Path(path).resolve()
        if target == source or _same_file(Path(out), Path(path)):
            relation = "is"
        elif source.is_relative_to(target):
            relation = "contains"
        elif target.is_relative_to(source):
            relation = "is inside"
        else:
            continue
        raise ConfigError(
            f"{option} {out} {relation} the {name} input {path}: writing there would destroy "
            f"the input; choose another {option}"
        )
    if force is not None:
        check_replaceable(Path(out), force=force)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # either does not exist (yet)
        return False


def task_manifest(tasks_dir: Path) -> Manifest:
    """The manifest of a task dataset whose files are all present.

    Raises:
        DatasetError: when ``tasks_dir`` is not a complete task dataset.
    """
    manifest = read_manifest(tasks_dir)
    if manifest.kind != "tasks":
        raise DatasetError(f"{tasks_dir} is {a_dataset(manifest.kind)}, not a task dataset")
    check_files(tasks_dir, manifest)
    return manifest


def needs_search(envs: Iterable[str]) -> bool:
    """Whether any of ``envs`` offers ``catalog_search`` (so its catalog needs an index)."""
    from shopgen.env.tools import ENV_TOOLS

    return any("catalog_search" in ENV_TOOLS.get(name, ()) for name in envs)


def checked(store: CatalogStore, *, search: bool = False) -> CatalogStore:
    """``store`` once its files are all there and, if ``search``, its index opens."""
    check_files(store.root, store.manifest)
    if search:
        from shopgen.env.search import SearchIndex

        SearchIndex.open(store.root, store=store)
    return store


def default_catalog() -> CatalogStore:
    """``data/catalog``, built (10k products, with its index) when there is none yet."""
    if not (DEFAULT_CATALOG / "manifest.json").is_file():
        from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
        from shopgen.gen.index import build_index

        click.echo(
            f"no catalog given: building a {DEFAULT_CATALOG_SIZE:,}-product catalog in "
            f"{DEFAULT_CATALOG}"
        )
        write_catalog(CatalogConfig(size=DEFAULT_CATALOG_SIZE), DEFAULT_CATALOG, workers=2)
        build_index(DEFAULT_CATALOG)
    return CatalogStore(DEFAULT_CATALOG)


def open_catalog(catalog: Path | None, *, envs: Iterable[str] = ()) -> CatalogStore:
    """The catalog to generate tasks of ``envs`` from; the default one is built if missing."""
    store = CatalogStore(catalog) if catalog is not None else default_catalog()
    return checked(store, search=needs_search(envs))


def catalog_of_tasks(
    catalog: Path | None, task_dirs: Sequence[Path], *, required: bool = True
) -> CatalogStore | None:
    """The catalog the task datasets in ``task_dirs`` were drawn from.

    With ``catalog`` given, it must be that catalog. Without it, the path each task manifest
    recorded and then ``data/catalog`` are tried; nothing is built, since a new catalog can
    never be the one the tasks were drawn from.

    Args:
        catalog: the ``--catalog`` the user gave, if any.
        task_dirs: task datasets (all must come from one catalog).
        required: when False, return None instead of failing if no catalog was given and
            none of the candidates is the parent.

    Raises:
        ConfigError: when the catalog is not the tasks' parent, the task sets have different
            parents, or (``required``) no candidate is the parent.
        DatasetError: when a dataset is missing files or is not of the expected kind.
    """
    manifests = {Path(d): task_manifest(Path(d)) for d in task_dirs}
    parents = {p for m in manifests.values() for p in m.parents}
    if len(parents) > 1:
        raise ConfigError(
            f"the task datasets were drawn from different catalogs ({', '.join(sorted(parents))})"
            ": give task sets of one catalog"
        )
    envs = {e for m in manifests.values() for e in m.config.get("envs", ())}
    first, manifest = next(iter(manifests.items()))
    wanted = next(iter(parents), None)
    if catalog is not None:
        store = CatalogStore(catalog)
        if wanted is not None and store.catalog_id != wanted:
            raise ConfigError(
                f"{first} was drawn from catalog {wanted}, but {catalog} is "
                f"{store.catalog_id}: pass the --catalog the tasks were made from"
            )
        return checked(store, search=needs_search(envs))
    recorded = manifest.config.get("catalog")
    for candidate in dict.fromkeys(p for p in (recorded, DEFAULT_CATALOG) if p):
        path = Path(candidate)
        if not (path / "manifest.json").is_file():
            continue
        try:
            store = CatalogStore(path)
        except DatasetError:
            continue
        if wanted is None or store.catalog_id == wanted:
            return checked(store, search=needs_search(envs))
    if not required:
        return None
    where = f"made from {recorded}, which does not hold it now" if recorded else "no path recorded"
    raise ConfigError(
        f"no --catalog given and {first} was drawn from catalog {wanted} ({where}; "
        f"{DEFAULT_CATALOG} is not it either): pass --catalog DIR"
    )
