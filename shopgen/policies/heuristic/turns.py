"""Running a batch of independent calls within a per-turn call budget the agent learns.

The agent is not told how many tool calls a turn may hold (θ's ``B_tool``) nor how many turns
it has (``T_max``, at least 4 at every level). It sends every independent call at once; calls
past the budget come back as ``over_budget`` errors naming the limit ("at most 2 tool calls per
turn"), so :class:`Turns` learns the limit and sends the rest in later turns, as a careful
agent would. Flows plan to recommend by turn :data:`SAFE_TURNS` + 1, which every level allows.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from shopgen.gen.tasks.base import Call

#: Turns a flow may spend gathering facts before the turn that acts (T_max ≥ 4 at every d).
SAFE_TURNS = 3

_LIMIT = re.compile(r"at most (\d+) tool calls? per turn")

Run = Generator[list[Call], list[dict[str, Any]], list[dict[str, Any] | None]]


@dataclass
class Turns:
    """Turns used so far, the learned per-turn budget, and what the customer said unprompted."""

    used: int = 0
    budget: int | None = None
    said: list[str] = field(default_factory=list)

    def left(self, limit: int = SAFE_TURNS) -> int:
        """Gathering turns left before ``limit``."""
        return max(0, limit - self.used)

    def run(self, calls: list[Call], *, max_turns: int | None = None) -> Run:
        """Yield turns until every call ran (or ``max_turns`` passed); results in call order.

        A call that never ran (out of turns) has ``None`` as its result.
        """
        out: list[dict[str, Any] | None] = [None] * len(calls)
        pending = list(range(len(calls)))
        spent = 0
        while pending and (max_turns is None or spent < max_turns):
            batch = pending if self.budget is None else pending[: self.budget]
            results = yield [calls[i] for i in batch]
            self.used += 1
            spent += 1
            tool = [r for r in results if "customer" not in r]
            self.said += [str(r["customer"]) for r in results if "customer" in r]
            done = []
            for i, result in zip(batch, tool, strict=False):
                limit = _LIMIT.search(str(result.get("message", "")))
                if result.get("error") == "over_budget" and limit:
                    self.budget = int(limit.group(1))
                    continue
                out[i] = result
                done.append(i)
            if self.budget is None:
                self.budget = len(batch) if len(batch) > 1 else None
            pending = [i for i in pending if i not in done]
        return out

    def capacity(self, limit: int = SAFE_TURNS) -> int:
        """Calls that fit in the gathering turns left (a guess of 2 a turn while unknown)."""
        return self.left(limit) * (self.budget or 2)
