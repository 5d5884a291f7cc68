"""A task row's JSON fields decoded once per distinct text, for verifiers to read.

Scoring replays the same rows again and again (a trainer's epochs, the task pipeline's proof,
a benchmark's trials), and decoding a goal or an episode cost as much as grading it. The value
returned is shared between calls: verifiers read it and never change it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from shopgen.schemas.task import JSON_FIELDS, TaskRow


@lru_cache(maxsize=4096)
def _decode(text: str) -> Any:
    return json.loads(text)


def decoded(task: TaskRow, field: str) -> Any:
    """:meth:`TaskRow.decoded`, shared and read-only (see the module docstring).

    Raises:
        KeyError: ``field`` is not a JSON field of a task row.
    """
    if field not in JSON_FIELDS:
        return task.decoded(field)  # raises its KeyError
    return _decode(getattr(task, field))
