"""Scoring stored trajectories: replay each against its task, then aggregate (DESIGN §8).

Each trajectory's assistant messages are re-executed against its task; tool and user messages
in the file are ignored, so a tampered file cannot fake state. Results aggregate per
environment × difficulty with the success rate, the mean reward and its parts, and pass^k:
the chance that k trials of a task, drawn without replacement from its n, are all correct,
averaged over tasks (τ-bench's estimator, mean of C(c, k) / C(n, k) with c of n correct). It
uses every trial whatever their order; pass^1 is the mean per-task success rate.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from shopgen.env.episode import ShopEnv, TaskError
from shopgen.schemas.envs import ENV_NAMES, env_spec
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
    verifier_version: str | None = None  # the version that graded it

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (one line of the output file)."""
        return {k: v for k, v in self.__dict__.items() if v is not None or k == "is_correct"}


def check_versions(tasks: Iterable[TaskRow], *, allow_mixed: bool) -> None:
    """Refuse scores that would not mean what the tasks' verifier version says.

    Tasks of one environment made for different verifier versions are not comparable, and
    neither are tasks made for another version than the one this shopgen grades with: the
    replay runs the installed verifier, whatever the row records. ``allow_mixed`` scores
    anyway (each output line names the version that graded it).
    """
    seen: dict[str, set[str]] = defaultdict(set)
    for t in tasks:
        seen[t.env].add(t.verifier_version)
    if allow_mixed:
        return
    for env, versions in seen.items():
        if len(versions) > 1:
            raise DatasetError(
                f"tasks of {env!r} were made for verifier versions {sorted(versions)}: scores "
                "are not comparable (pass --allow-mixed-versions to score anyway)"
            )
        (made_for,) = versions
        if env in ENV_NAMES and made_for != env_spec(env).version:
            raise DatasetError(
                f"tasks of {env!r} were made for verifier {made_for}, this shopgen grades with "
                f"{env_spec(env).version}: regenerate them with `shopgen tasks` "
                "(or pass --allow-mixed-versions to score anyway)"
            )


def score_lines(env: ShopEnv, tasks: dict[str, TaskRow], lines: Iterable[str]) -> Iterator[Result]:
    """Score JSON lines ``{"task_id", "messages"}``; a bad line yields a Result with ``error``."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            record, problem = None, f"not JSON: {exc.msg} (column {exc.colno})"
        except (ValueError, RecursionError):
            record, problem = None, "unreadable JSON: a number too long or nesting too deep"
        else:
            problem = _record_problem(record)
        if problem:
            yield Result(f"line {number}", None, None, None, None, None, None, False, problem)
            continue
        tid, messages = record["task_id"], record["messages"]
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
            verifier_version=env_spec(task.env).version,
        )


def _record_problem(record: Any) -> str | None:
    """What keeps a decoded line from being a trajectory record, or None."""
    if not isinstance(record, dict) or not {"task_id", "messages"} <= record.keys():
        return "not a JSON object with task_id and messages"
    if not isinstance(record["task_id"], str):
        return "task_id must be a string"
    if not isinstance(record["messages"], list):
        return "messages must be a list"
    return None


def summarize(results: list[Result]) -> list[dict[str, Any]]:
    """One row per (env, d): n, success rate, mean reward and its parts, pass^k for k = 1..n.

    ``n`` is the fewest trials any task of the group has (pass^k needs k of each).
    """
    groups: dict[tuple[str, int], list[Result]] = defaultdict(list)
    for r in results:
        if r.env is not None and r.reward is not None:
            groups[(r.env, r.d)].append(r)
    rows = []
    for (env_name, d), rs in sorted(groups.items()):
        trials: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            trials[r.task_id].append(r.is_correct)
        row = {
            "env": env_name,
            "d": d,
            "n": len(rs),
            "tasks": len(trials),
            "success": round(sum(r.is_correct for r in rs) / len(rs), 4),
            "mean_reward": round(sum(r.reward for r in rs) / len(rs), 4),
            **{f"mean_{part}": _mean(rs, part) for part in ("r_task", "r_eff", "r_hall")},
        }
        for k in range(1, min(len(t) for t in trials.values()) + 1):
            row[f"pass^{k}"] = round(
                sum(pass_hat(len(t), sum(t), k) for t in trials.values()) / len(trials), 4
            )
        rows.append(row)
    return rows


def pass_hat(n: int, c: int, k: int) -> float:
    """The chance that k of n trials, c of them correct, drawn without replacement, all are."""
    return math.comb(c, k) / math.comb(n, k)


def _mean(results: list[Result], part: str) -> float:
    return round(sum(getattr(r, part) for r in results) / len(results), 4)
