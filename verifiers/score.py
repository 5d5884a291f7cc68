"""Scoring stored trajectories: replay each against its task, then aggregate (DESIGN §8).

Each trajectory's assistant messages are re-executed against its task; tool and user messages
in the file are ignored, so a tampered file cannot fake state. Results aggregate per
environment × difficulty with the success rate, the mean reward and pass^k (the share of tasks
whose first k trials are all correct), as agent benchmarks report them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from shopgen.env.episode import ShopEnv, TaskError
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.replay import assistant_messages, play


@dataclass(frozen=True)
class Result:
    """One scored trajectory (or the reason it could not be scored)."""

    task_id: str
    env: str | None
    d: int | None
    reward: float | None
    r_task: float | None
    r_eff: float | None
    r_hall: float | None
    is_correct: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (one line of the output file)."""
        return {k: v for k, v in self.__dict__.items() if v is not None or k == "is_correct"}


def check_versions(tasks: Iterable[TaskRow], *, allow_mixed: bool) -> None:
    """Refuse to pool scores of tasks graded by different verifier versions of one environment."""
    seen: dict[str, set[str]] = defaultdict(set)
    for t in tasks:
        seen[t.env].add(t.verifier_version)
    mixed = {env: sorted(v) for env, v in seen.items() if len(v) > 1}
    if mixed and not allow_mixed:
        env, versions = next(iter(mixed.items()))
        raise DatasetError(
            f"tasks of {env!r} were graded by verifier versions {versions}: scores are not "
            "comparable (pass --allow-mixed-versions to score anyway)"
        )


def score_lines(env: ShopEnv, tasks: dict[str, TaskRow], lines: Iterable[str]) -> Iterator[Result]:
    """Score JSON lines ``{"task_id", "messages"}``; a bad line yields a Result with ``error``."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            tid, messages = record["task_id"], record["messages"]
            if not isinstance(messages, list):
                raise TypeError("messages must be a list")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            yield Result(
                f"line {number}", None, None, None, None, None, None, False, f"unreadable: {exc}"
            )
            continue
        task = tasks.get(tid)
        if task is None:
            yield Result(str(tid), None, None, None, None, None, None, False, "unknown task_id")
            continue
        try:
            score, _ = play(env, task, assistant_messages(messages))
        except TaskError as exc:
            yield Result(tid, task.env, task.d, None, None, None, None, False, str(exc))
            continue
        if score is None:
            yield Result(
                tid,
                task.env,
                task.d,
                None,
                None,
                None,
                None,
                False,
                "no verifier for this environment",
            )
            continue
        yield Result(
            tid,
            task.env,
            task.d,
            score.reward,
            score.r_task,
            score.r_eff,
            score.r_hall,
            score.is_correct,
        )


def summarize(results: list[Result]) -> list[dict[str, Any]]:
    """One row per (env, d): n, success rate, mean reward, and pass^k for k = 1..max trials."""
    groups: dict[tuple[str, int], list[Result]] = defaultdict(list)
    for r in results:
        if r.env is not None and r.reward is not None:
            groups[(r.env, r.d)].append(r)
    rows = []
    for (env_name, d), rs in sorted(groups.items()):
        trials: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            trials[r.task_id].append(r.is_correct)
        k_max = min(len(t) for t in trials.values())
        row = {
            "env": env_name,
            "d": d,
            "n": len(rs),
            "tasks": len(trials),
            "success": round(sum(r.is_correct for r in rs) / len(rs), 4),
            "mean_reward": round(sum(r.reward for r in rs) / len(rs), 4),
        }
        for k in range(1, k_max + 1):
            row[f"pass^{k}"] = round(sum(all(t[:k]) for t in trials.values()) / len(trials), 4)
        rows.append(row)
    return rows
