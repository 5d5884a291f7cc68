"""Heuristic agent for ``discovery``: search the request, filter by stated bounds, rank, recommend."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import ask, cards, count_wanted, reply_text, words
from shopgen.policies.heuristic.recommend import (
    blended_rank,
    constraints,
    feasible,
    priority,
)


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
    found = [_tail(m.group(1)) for m in _LEAD.finditer(text)]
    if found:
        return min(found, key=len)
    return re.split(r"[.!?]\s+", text.split(",")[0])[-1][:80]


def _tail(phrase: str) -> str:
    """Drop a lead-in such as "recommendations for" before the product words."""
    m = re.match(r"^(?:\w+\s+)?(?:for|of)\s+(.+)$", phrase)
    return m.group(1) if m else phrase


def recommend_flow(text: str, *, query: str, exclude: set[str], noun: str) -> Oracle:
    """Shared by discovery and substitution: ask what is missing, search, filter, recommend."""
    k = count_wanted(text)
    question = "What matters most to you?"
    if k is None:
        question = "How many options would you like, and what matters most to you?"
    reply = reply_text((yield ask(question)))
    k = k or count_wanted(reply) or _bare_count(reply) or 3
    key, brands = priority(reply)
    found = yield [call("catalog_search", query=query)]
    head = sorted(words(noun.split()[-1] if noun.split() else ""))
    hits = cards(found)
    named = [c for c in hits if not head or head[0] in words(c.get("title", ""))]
    others = [c for c in hits if c not in named]
    cons = constraints(text)
    best = blended_rank(feasible(named, cons, exclude), key, brands)
    if len(best) < k:  # the product word may be phrased otherwise ("webcam", "web camera")
        best += blended_rank(
            feasible(others, cons, exclude | {c["product_id"] for c in best}), key, brands
        )
    best = best[:k]
    if not best:
        yield "Sorry, I found nothing that meets your requirements."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in best])]
    yield "Here are my picks, best first: " + "; ".join(c["title"] for c in best) + "."


def _bare_count(reply: str) -> int | None:
    """A count said alone ("3", "three please")."""
    m = re.search(r"\b(\d{1,2}|two|three|four|five|six)\b", reply.lower())
    return count_wanted(f"{m.group(1)} options") if m else None
