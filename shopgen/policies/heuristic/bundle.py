"""Heuristic agent for ``bundle``: search each must-have, pick the cheapest well-rated in stock."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import ask, cards, money, overlap, reply_text


def must_haves(text: str) -> list[str]:
    """Kinds of product after "include"/"need" ("towel set and candle")."""
    m = re.search(r"(?:include|includes|need|needs)\s+(.+?)(?:[.!?]|$)", text, re.I)
    if not m:
        return []
    return [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", m.group(1)) if p.strip()]


def heuristic(task: PublicTask) -> Oracle:
    """Play a bundle task from the public view only."""
    kinds = must_haves(task.user)
    if not kinds:
        kinds = must_haves(
            "include " + reply_text((yield ask("Which kinds of product do you need?")))
        )
    budget = money(task.user)
    picks = []
    for kind in kinds:
        found = yield [call("catalog_search", query=kind)]
        shown = [c for c in cards(found) if c.get("stock_qty") and overlap(kind, c["title"]) >= 0.5]
        if shown:
            picks.append(min(shown, key=lambda c: (c.get("price", 0), -c.get("rating", 0))))
    if not picks or (budget is not None and sum(c["price"] for c in picks) > budget):
        yield "Sorry, I could not build a set that fits."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in picks])]
    yield "Here is your set: " + "; ".join(c["title"] for c in picks) + "."
