"""The ``trl`` layout: a conversational ``prompt`` plus what ``ShopgenEnvironment.reset`` reads.

TRL renders only ``prompt`` (and the environment's tool methods) for the model; every other
column is passed to ``environment.reset(**row)`` and to reward functions. So the hidden task
sits in the ``task`` column, and ``environment`` names the shop environment for TRL's
multi-environment mode (``environment_factory={name: factory}``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shopgen.exports._common import DATA, public_messages, task_json, write_export
from shopgen.schemas.exports import TRL
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow


def rows(tasks: list[TaskRow]) -> Iterator[dict[str, Any]]:
    """One TRL row per task."""
    for t in tasks:
        yield {
            "prompt": public_messages(t),
            "task": task_json(t),
            "environment": t.env,
            "task_id": t.task_id,
            "d": t.d,
            "verifier_version": t.verifier_version,
        }


def export(
    tasks: list[TaskRow], out: Path, *, source: Manifest, force: bool = False, **_: Any
) -> Manifest:
    """Write the TRL export of ``tasks`` to ``out``."""
    return write_export({DATA: (rows(tasks), TRL)}, out, fmt="trl", source=source, force=force)
