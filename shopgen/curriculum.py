"""Adaptive difficulty: the RLVE controller, one per environment, with per-axis attribution.

RLVE's rule (issue #8 §3): a window ``[l, h]`` starts at ``[0, 0]``; each episode's ``d`` is
drawn uniformly from the window; only episodes played at ``h`` count; after every
``episodes_per_check`` counted episodes the counters are checked and reset, and ``h`` rises by
one when the accuracy at ``h`` was at least ``threshold``; the window keeps width ``width``
(``l = max(0, h - width + 1)``).

Beyond RLVE, every recorded episode is attributed to the difficulty axes that were active in
its task (omitted slots, typos, out-of-stock items, degraded search, a switch of intent), so a
trainer sees which skill lags (:attr:`AdaptiveDifficulty.axis_report`). With
``per_axis=True`` a promotion also needs every axis seen at ``h`` (at least
``min_axis_episodes`` times in the check) to reach the threshold on its own.

Draws come from :func:`shopgen.gen.seeding.stream` keyed by the controller's seed, environment
and draw number, so a controller restored with :meth:`load_state_dict` continues the exact
sequence the original would have drawn.

>>> c = AdaptiveDifficulty("cart", seed=0, episodes_per_check=2)
>>> c.window
(0, 0)
>>> c.record(0, True), c.record(0, True), c.window
(False, True, (0, 1))
"""

from __future__ import annotations

import json
import operator
from typing import Any

from shopgen.gen.seeding import stream
from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import TaskRow

#: The axes whose activity is read from a task row (:func:`active_axes`).
AXES: tuple[str, ...] = ("omitted_slots", "typos", "out_of_stock", "degraded_search", "switch")

_STATE_VERSION = 1


def active_axes(task: TaskRow | dict[str, Any]) -> frozenset[str]:
    """The difficulty axes that shape this task, read from its (hidden) row fields."""
    row = TaskRow.from_row(task)
    script = json.loads(row.user_script)
    episode = json.loads(row.episode)
    tools = {s["function"]["name"] for s in json.loads(row.tools)}
    active = set()
    if any(s.get("omitted") for s in script.get("slots", [])):
        active.add("omitted_slots")
    if float(script.get("p_noise", row.theta.get("p_noise", 0)) or 0) > 0:
        active.add("typos")
    if episode.get("out_of_stock"):
        active.add("out_of_stock")
    if "catalog_search" in tools and float(row.theta.get("eps_rank", 0)) > 0:
        active.add("degraded_search")
    if script.get("switch"):
        active.add("switch")
    return frozenset(active)


class AdaptiveDifficulty:
    """RLVE's adaptive difficulty window for one environment.

    Args:
        env: the environment this controller schedules (part of the random key).
        seed: root seed of the draws.
        episodes_per_check: counted episodes (at ``h``) between checks; RLVE uses 128.
        threshold: accuracy at ``h`` needed to promote.
        width: window width (4: ``l = max(0, h - 3)``).
        per_axis: also require each axis seen at ``h`` to reach ``threshold``.
        min_axis_episodes: episodes an axis needs in a check to be judged (per-axis mode).
        max_d: the highest level ``h`` may reach (None: unbounded).
    """

    def __init__(
        self,
        env: str,
        *,
        seed: int = 0,
        episodes_per_check: int = 128,
        threshold: float = 0.9,
        width: int = 4,
        per_axis: bool = False,
        min_axis_episodes: int = 8,
        max_d: int | None = None,
    ) -> None:
        if env not in ENV_NAMES:
            raise ConfigError(f"env={env!r} is not one of {', '.join(ENV_NAMES)}")
        if episodes_per_check < 1:
            raise ConfigError(f"episodes_per_check={episodes_per_check} must be >= 1")
        if not 0.0 < threshold <= 1.0:
            raise ConfigError(f"threshold={threshold} must be in (0, 1]")
        if width < 1:
            raise ConfigError(f"width={width} must be >= 1")
        if min_axis_episodes < 1:
            raise ConfigError(f"min_axis_episodes={min_axis_episodes} must be >= 1")
        if max_d is not None and max_d < 0:
            raise ConfigError(f"max_d={max_d} must be >= 0")
        self.env = env
        self.seed = seed
        self.episodes_per_check = episodes_per_check
        self.threshold = threshold
        self.width = width
        self.per_axis = per_axis
        self.min_axis_episodes = min_axis_episodes
        self.max_d = max_d
        self.h = 0
        self.draws = 0
        self.count = 0
        self.correct = 0
        self.axis_count: dict[str, int] = dict.fromkeys(AXES, 0)
        self.axis_correct: dict[str, int] = dict.fromkeys(AXES, 0)
        #: Cumulative (level, axis) → [episodes, correct], for reports.
        self.history: dict[str, list[int]] = {}
        self.promotions: list[int] = []

    @property
    def window(self) -> tuple[int, int]:
        """The current ``(l, h)``."""
        return max(0, self.h - self.width + 1), self.h

    def sample(self) -> int:
        """The next episode's level, uniform in the window (deterministic per draw number)."""
        low, high = self.window
        d = int(stream(self.seed, "curriculum", self.env, self.draws).integers(low, high + 1))
        self.draws += 1
        return d

    def record(
        self,
        d: int,
        correct: bool,
        *,
        task: TaskRow | dict[str, Any] | None = None,
        axes: frozenset[str] | set[str] | None = None,
    ) -> bool:
        """Record one finished episode; returns True when it triggered a promotion.

        Args:
            d: the level the episode was played at.
            correct: the verifier's ``is_correct``.
            task: the task row, to attribute the result to its active axes.
            axes: the active axes directly (instead of ``task``).
        """
        try:
            level = operator.index(d)  # an int, numpy's included
        except TypeError:
            level = -1
        if isinstance(d, bool) or level < 0:
            raise ConfigError(f"d={d!r} must be a level, an int >= 0")
        active = frozenset(axes) if axes is not None else active_axes(task) if task else frozenset()
        unknown = sorted(active - set(AXES))
        if unknown:
            raise ConfigError(f"axis {unknown[0]!r} is not one of {', '.join(AXES)}")
        for key in ("all", *sorted(active)):
            entry = self.history.setdefault(f"{d}:{key}", [0, 0])
            entry[0] += 1
            entry[1] += int(bool(correct))
        if d != self.h:
            return False
        self.count += 1
        self.correct += int(bool(correct))
        for axis in active:
            self.axis_count[axis] += 1
            self.axis_correct[axis] += int(bool(correct))
        if self.count < self.episodes_per_check:
            return False
        promote = self._passes()
        self.count = self.correct = 0
        self.axis_count = dict.fromkeys(AXES, 0)
        self.axis_correct = dict.fromkeys(AXES, 0)
        if promote and (self.max_d is None or self.h < self.max_d):
            self.h += 1
            self.promotions.append(self.draws)
            return True
        return False

    def _passes(self) -> bool:
        if self.correct < self.threshold * self.count - 1e-12:
            return False
        if not self.per_axis:
            return True
        return all(
            self.axis_correct[a] >= self.threshold * self.axis_count[a] - 1e-12
            for a in AXES
            if self.axis_count[a] >= self.min_axis_episodes
        )

    def axis_report(self) -> dict[str, dict[str, float]]:
        """Accuracy per active axis over every recorded episode (``all`` = every episode)."""
        totals: dict[str, list[int]] = {}
        for key, (n, ok) in self.history.items():
            axis = key.split(":", 1)[1]
            t = totals.setdefault(axis, [0, 0])
            t[0] += n
            t[1] += ok
        return {a: {"episodes": n, "accuracy": ok / n} for a, (n, ok) in sorted(totals.items())}

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly (JSON-serialisable)."""
        return {
            "version": _STATE_VERSION,
            "env": self.env,
            "seed": self.seed,
            "config": {
                "episodes_per_check": self.episodes_per_check,
                "threshold": self.threshold,
                "width": self.width,
                "per_axis": self.per_axis,
                "min_axis_episodes": self.min_axis_episodes,
                "max_d": self.max_d,
            },
            "h": self.h,
            "draws": self.draws,
            "count": self.count,
            "correct": self.correct,
            "axis_count": dict(self.axis_count),
            "axis_correct": dict(self.axis_correct),
            "history": {k: list(v) for k, v in self.history.items()},
            "promotions": list(self.promotions),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (configuration included).

        Raises:
            ConfigError: the state is of another version or another environment.
        """
        if state.get("version") != _STATE_VERSION:
            raise ConfigError(f"curriculum state version {state.get('version')!r} is not supported")
        if state["env"] != self.env:
            raise ConfigError(f"curriculum state is for env {state['env']!r}, not {self.env!r}")
        for name, value in state["config"].items():
            setattr(self, name, value)
        self.seed = state["seed"]
        self.h, self.draws = state["h"], state["draws"]
        self.count, self.correct = state["count"], state["correct"]
        self.axis_count = dict(state["axis_count"])
        self.axis_correct = dict(state["axis_correct"])
        self.history = {k: list(v) for k, v in state["history"].items()}
        self.promotions = list(state["promotions"])


__all__ = ["AXES", "AdaptiveDifficulty", "active_axes"]
