"""Heuristic agent for ``substitution``: search like the missing item, recommend in-stock peers."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import PRODUCT_RE
from shopgen.policies.heuristic.discovery import recommend_flow


def heuristic(task: PublicTask) -> Oracle:
    """Play a substitution task from the public view only."""
    original = set(PRODUCT_RE.findall(task.user))
    name = re.split(r"\(item|\[|\bis gone|\bis out", task.user, maxsplit=1)[0]
    name = re.split(r"[.!?,:]\s+", name.strip())[-1]
    product_words = name.split()[1:] or name.split()  # the first word is the brand
    noun = product_words[-1] if product_words else ""
    query = " ".join(product_words)[-120:]
    yield from recommend_flow(task.user, query=query, exclude=original, noun=noun)
