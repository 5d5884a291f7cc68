"""Play policies on task rows and aggregate solve rate and mean reward per (policy, env, d)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.policies import play
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import TaskFactory


@dataclass(frozen=True)
class Cell:
    """Results of one policy on the tasks of one (env, d)."""

    policy: str
    env: str
    d: int
    n: int
    solved: int
    reward_sum: float

    @property
    def solve_rate(self) -> float:
        """Share of tasks played correctly."""
        return self.solved / self.n if self.n else 0.0

    @property
    def mean_reward(self) -> float:
        """Mean reward over the cell's tasks."""
        return self.reward_sum / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "policy": self.policy,
            "env": self.env,
            "d": self.d,
            "n": self.n,
            "solve_rate": round(self.solve_rate, 4),
            "mean_reward": round(self.mean_reward, 4),
        }


def generated_rows(
    env: ShopEnv,
    envs: list[str],
    ds: list[int],
    n: int,
    *,
    seed: int = 0,
    overrides: dict[str, Any] | None = None,
) -> Iterable[TaskRow]:
    """``n`` proven tasks per (env, d), made on the fly (θ ``overrides`` applied to all)."""
    factory = TaskFactory(env, seed=seed, overrides=overrides)
    return (g.row for g in factory.batch(envs, ds, n))


def evaluate(env: ShopEnv, rows: Iterable[TaskRow], policies: Iterable[str]) -> list[Cell]:
    """Every policy on every row; one :class:`Cell` per (policy, env, d), sorted."""
    chosen = list(policies)
    acc: dict[tuple[str, str, int], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for row in rows:
        for name in chosen:
            score = play(env, row, name)
            if score is None:
                continue
            cell = acc[(name, row.env, row.d)]
            cell[0] += 1
            cell[1] += int(score.is_correct)
            cell[2] += score.reward
    order = {p: i for i, p in enumerate(chosen)}
    return [
        Cell(policy=p, env=e, d=d, n=int(v[0]), solved=int(v[1]), reward_sum=float(v[2]))
        for (p, e, d), v in sorted(acc.items(), key=lambda kv: (order[kv[0][0]], kv[0][1:]))
    ]
