"""The ``sft`` layout: oracle trajectories as chat transcripts, for supervised warm-start.

Each task's stored oracle (assistant turns only) is replayed through :class:`ShopEnv`, so the
tool results and customer replies in the transcript are the runtime's own, exactly what the
model will see when it plays. A task whose oracle no longer reaches a correct score on this
catalog and runtime is an error, never a silent row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.exports._common import DATA, write_export
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.exports import SFT
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.replay import play


def _message(m: dict[str, Any]) -> dict[str, Any]:
    """A transcript message in the fixed Parquet shape (absent fields null)."""
    calls = m.get("tool_calls")
    return {
        "role": m["role"],
        "content": m.get("content") if isinstance(m.get("content"), str) else "",
        "tool_calls": [
            {
                "id": c.get("id"),
                "type": c.get("type", "function"),
                "function": {
                    "name": c["function"]["name"],
                    "arguments": c["function"]["arguments"]
                    if isinstance(c["function"]["arguments"], str)
                    else json.dumps(c["function"]["arguments"], sort_keys=True),
                },
            }
            for c in calls
        ]
        if calls
        else None,
        "tool_call_id": m.get("tool_call_id"),
        "name": m.get("name"),
    }


def transcript(env: ShopEnv, task: TaskRow) -> tuple[list[dict[str, Any]], float]:
    """The oracle's full conversation on ``task`` and its reward.

    Raises:
        DatasetError: the oracle does not replay to a correct episode.
    """
    score, _ = play(env, task, task.decoded("oracle"))
    if score is None or not score.is_correct:
        raise DatasetError(
            f"task {task.task_id}: its oracle does not replay to a correct episode here "
            f"({score.to_dict() if score else 'no verifier'}); regenerate the tasks"
        )
    return [_message(m) for m in env.transcript], score.reward


def rows(tasks: list[TaskRow], env: ShopEnv) -> Iterator[dict[str, Any]]:
    """One SFT row per task."""
    for t in tasks:
        messages, reward = transcript(env, t)
        yield {
            "task_id": t.task_id,
            "env": t.env,
            "d": t.d,
            "messages": messages,
            "tools": t.tools,
            "reward": reward,
        }


def export(
    tasks: list[TaskRow],
    out: Path,
    *,
    source: Manifest,
    catalog: Path | None = None,
    env: ShopEnv | None = None,
    force: bool = False,
    **_: Any,
) -> Manifest:
    """Write the SFT export; needs the tasks' catalog (``catalog`` or a ready ``env``)."""
    if env is None:
        if catalog is None:
            raise DatasetError("the sft export replays oracles: pass --catalog DIR")
        env = ShopEnv(catalog)
    return write_export({DATA: (rows(tasks, env), SFT)}, out, fmt="sft", source=source, force=force)
