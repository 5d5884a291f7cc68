"""Exports of task datasets for training stacks (issue #8): one module per format.

>>> # export_tasks(Path("data/tasks/status-d5"), Path("out/trl"), fmt="trl")
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from shopgen.schemas.errors import ConfigError
from shopgen.schemas.exports import FORMATS  # each names a module here with ``export``
from shopgen.schemas.manifest import Manifest


def export_tasks(
    tasks: Path,
    out: Path,
    *,
    fmt: str,
    catalog: Path | None = None,
    force: bool = False,
    **options: Any,
) -> Manifest:
    """Export the task dataset ``tasks`` to ``out`` in format ``fmt``; returns its manifest.

    Raises:
        ConfigError: ``fmt`` is not a known format.
        DatasetError: ``tasks`` is not a task dataset, or (sft) an oracle fails to replay.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    from shopgen.exports._common import load_source

    rows, source = load_source(tasks)
    module = importlib.import_module(f"shopgen.exports.{fmt}")
    return module.export(rows, Path(out), source=source, catalog=catalog, force=force, **options)


__all__ = ["FORMATS", "export_tasks"]
