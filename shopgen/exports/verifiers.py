"""The ``verifiers`` layout: the columns the ``verifiers`` library reads.

``prompt`` (chat messages), ``answer`` (a handle, not a solution: the task id, since shopgen's
reward comes from replaying the episode, not from comparing text), ``info`` (the hidden task
row as JSON for the environment's ``setup_state``) and ``task`` (the environment name).
Load it with :func:`shopgen.integrations.verifiers_env.load_environment`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shopgen.exports._common import DATA, public_messages, task_json, write_export
from shopgen.schemas.exports import VERIFIERS
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow


def rows(tasks: list[TaskRow]) -> Iterator[dict[str, Any]]:
    """One verifiers row per task."""
    for t in tasks:
        yield {
            "prompt": public_messages(t),
            "answer": t.task_id,
            "info": {
                "task_id": t.task_id,
                "env": t.env,
                "d": t.d,
                "tools": t.tools,
                "task_row": task_json(t),
            },
            "task": t.env,
        }


def export(
    tasks: list[TaskRow], out: Path, *, source: Manifest, force: bool = False, **_: Any
) -> Manifest:
    """Write the verifiers export of ``tasks`` to ``out``."""
    return write_export(
        {DATA: (rows(tasks), VERIFIERS)}, out, fmt="verifiers", source=source, force=force
    )
