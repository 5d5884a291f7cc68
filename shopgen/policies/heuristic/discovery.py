"""Heuristic agent for ``discovery``: search the request, filter by stated bounds, rank, recommend."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import ask, cards, count_wanted, overlap, reply_text
from shopgen.policies.heuristic.recommend import constraints, feasible, priority, rank


def heuristic(task: PublicTask) -> Oracle:
    """Play a discovery task from the public view only."""
    category = category_phrase(task.user)
    yield from recommend_flow(task.user, query=category, exclude=set(), noun=category)


_LEAD = re.compile(
    r"(?:find|need|for|search|shopping for|looking for|lookin 4|some|need the|get)\s+(.+?)"
    r"(?=[,.(]|\s+(?:under|from|rated|max|delivered|ships|which|must|now|pls)\b|$)",
    re.I,
)


def category_phrase(text: str) -> str:
    """The kind of product the customer names (the words after "find", "need", …)."""
    found = [m.group(1) for m in _LEAD.finditer(text)]
    return min(found, key=len) if found else text.split(",")[0][:80]


def recommend_flow(text: str, *, query: str, exclude: set[str], noun: str) -> Oracle:
    """Shared by discovery and substitution: ask what is missing, search, filter, recommend."""
    k = count_wanted(text)
    if k is None:
        k = count_wanted(reply_text((yield ask("How many options would you like?")))) or 3
    key, brands = priority(reply_text((yield ask("What matters most to you?"))))
    found = yield [call("catalog_search", query=query)]
    shown = [c for c in cards(found) if not noun or overlap(noun, c.get("title", "")) >= 0.5]
    best = rank(feasible(shown, constraints(text), exclude), key, brands)[:k]
    if not best:
        yield "Sorry, I found nothing that meets your requirements."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in best])]
    yield "Here are my picks, best first: " + "; ".join(c["title"] for c in best) + "."
