"""The ``jsonl`` layout: plain chat-format rows (opening messages and tool schemas).

For any stack without an adapter: each line is ``{"task_id", "env", "d", "messages", "tools"}``
in the OpenAI chat format. The same rows are in ``data/`` as Parquet (tools as a JSON string,
because the schemas' keys differ between tools) and in ``train.jsonl`` as JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shopgen.exports._common import DATA, public_messages, public_tools, write_export
from shopgen.schemas.exports import JSONL
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow

JSONL_FILE = "train.jsonl"


def line(t: TaskRow) -> dict[str, Any]:
    """One task as a JSON-lines record (tools decoded)."""
    return {
        "task_id": t.task_id,
        "env": t.env,
        "d": t.d,
        "messages": public_messages(t),
        "tools": public_tools(t),
    }


def rows(tasks: list[TaskRow]) -> Iterator[dict[str, Any]]:
    """The Parquet rows: tools as JSON text."""
    for t in tasks:
        yield {**line(t), "tools": t.tools}


def export(
    tasks: list[TaskRow], out: Path, *, source: Manifest, force: bool = False, **_: Any
) -> Manifest:
    """Write the JSONL export of ``tasks`` to ``out``."""
    text = "".join(json.dumps(line(t), ensure_ascii=False) + "\n" for t in tasks)
    return write_export(
        {DATA: (rows(tasks), JSONL)},
        out,
        fmt="jsonl",
        source=source,
        side_files={JSONL_FILE: text},
        force=force,
    )
