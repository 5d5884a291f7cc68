"""Heuristic agent for ``policy``: look the rule up and quote the sentence that fits best."""

from __future__ import annotations

import re
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import overlap


def heuristic(task: PublicTask) -> Oracle:
    """Play a policy task from the public view only."""
    found = yield [call("policy_search", query=task.user[:200])]
    yield answer(found, task.user)


def answer(found: list[dict[str, Any]], facts: str) -> str:
    """The sentence of the top policy section that shares most words with the customer's facts."""
    top = next((d for r in found for d in r.get("results", [])), None)
    if top is None:
        return "Sorry, I could not find that policy."
    sentences = [s for s in re.split(r"(?<=\.)\s+", top.get("text", "")) if s]
    best = max(sentences, key=lambda s: overlap(s, facts), default=top.get("text", ""))
    return f"Our policy says: {best}"
