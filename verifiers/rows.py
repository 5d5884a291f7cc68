"""A task row's JSON fields decoded once per distinct text, for verifiers to read.

Scoring replays the same rows again and again (a trainer's epochs, the task pipeline's proof,
a benchmark's trials), and decoding a goal or an episode cost as much as grading it. The value
returned is shared between calls: verifiers read it and never change it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Generic, TypeVar

from shopgen.env.state import EpisodeState
from shopgen.gen.store import BoundedCache
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


T = TypeVar("T")


class PerObject(Generic[T]):
    """Values derived from objects that never change, remembered per object (by identity).

    For frozen task rows and the shared goals of :func:`decoded`: identity is a cheap key for
    them, unlike their content. The object is held with its value, so its ``id`` cannot be
    reused while remembered; when full, it starts over.

    Args:
        make: the pure function of the object to remember.
        limit: how many objects to remember before starting over.
    """

    def __init__(self, make: Callable[[Any], T], limit: int = 4096) -> None:
        self._make = make
        self._limit = limit
        self._items: dict[int, tuple[Any, T]] = {}

    def __call__(self, obj: Any) -> T:
        """``make(obj)``, made once per object."""
        hit = self._items.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self._make(obj)
        if len(self._items) >= self._limit:
            self._items.clear()
        self._items[id(obj)] = (obj, value)
        return value


def graded_by_records(
    memo: BoundedCache, recs: list[str], state: EpisodeState, grade: Callable[[tuple], T]
) -> T:
    """``grade(records)`` of a recommended list, remembered in ``memo`` per list and records.

    ``records`` are the facts the runtime recorded for each recommended id (None: none).
    ``recommend_products`` shares one record per (product, stock) between episodes, so a
    replayed list (a trainer's next epoch, a journey's proof) is graded by one look-up. The key
    holds the records' identities and the value the records themselves (so no other record can
    take an identity while remembered); records are read, never changed.
    """
    facts = state.extra.get("recommended_facts") or {}
    records = tuple(map(facts.get, recs))
    key = (tuple(recs), tuple(map(id, records)))
    hit = memo.get(key)
    if hit is None:
        hit = memo.put(key, (records, grade(records)))
    return hit[1]
