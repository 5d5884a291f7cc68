"""Heuristic agent for ``bundle``: search each must-have, pick the cheapest in-stock of its kind.

A card is of the wanted kind when its title names the kind's words as a phrase ("sleeping
bag", not "bag" alone): stray cheap cards of other kinds that share a word ("chest" in a
shirt's "Chest Pocket") are never picked, so more cards can only give more true choices.
"""

from __future__ import annotations

import re
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import cards, money, reply_text
from shopgen.policies.heuristic.turns import Turns

_LIST = re.compile(
    r"(?:has to include|include|includes|need|needs)\s+(.+?)(?:[.!?]|,\s+(?:no|today|thx|pls)\b|\s+(?:pls|thx)\b|$)",
    re.I,
)
_CUT = re.compile(r"\s+(?:pls|thx|today|no back and forth)\b.*$", re.I)


def must_haves(text: str) -> list[str]:
    """Kinds of product after "has to include" (or "need"): "towel set and candle"."""
    found = re.search(r"has to include\s+(.+?)(?:[.!?]|,\s|$)", text, re.I) or _LIST.search(text)
    if not found:
        return []
    listed = _CUT.sub("", found.group(1))
    return [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", listed) if p.strip()]


def names_kind(kind: str, title: str) -> bool:
    """Whether ``title`` names ``kind`` as a phrase (plural ``s`` allowed on the last word)."""
    pattern = r"\b" + r"\s+".join(re.escape(w) for w in kind.lower().split()) + r"s?\b"
    return re.search(pattern, title.lower()) is not None


def cheapest(kind: str, shown: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cheapest in-stock card of ``kind`` (ties: better rating, then id)."""
    fits = [c for c in shown if c.get("stock_qty") and names_kind(kind, c.get("title", ""))]
    return min(fits, key=lambda c: (c["price"], -c.get("rating", 0), c["product_id"]), default=None)


def heuristic(task: PublicTask) -> Oracle:
    """Play a bundle task from the public view only."""
    turns = Turns()
    kinds = must_haves(task.user)
    if not kinds:
        (answer,) = yield from turns.run([call("ask_user", question="Which items do you need?")])
        kinds = must_haves("include " + reply_text([answer or {}]))
    budget = money(task.user)
    found = yield from turns.run([call("catalog_search", query=k) for k in kinds])
    for extra in _added(turns.said, kinds):  # the customer added a kind mid-way
        kinds.append(extra)
        found += yield from turns.run([call("catalog_search", query=extra)])
    budget = money(" ".join(turns.said)) or budget
    picks = [cheapest(k, cards([r or {}])) for k, r in zip(kinds, found, strict=True)]
    chosen = [p for p in picks if p is not None]
    if not chosen or (budget is not None and sum(c["price"] for c in chosen) > budget):
        yield "Sorry, I could not build a set that fits."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in chosen])]
    yield "Here is your set: " + "; ".join(c["title"] for c in chosen) + "."


def _added(said: list[str], kinds: list[str]) -> list[str]:
    """Kinds the customer added in an unprompted message ("the must-have should be lantern")."""
    out = []
    for text in said:
        for m in re.finditer(r"must-have (?:should be|is now|is|→)\s+([^,.]+)", text):
            if m.group(1).strip() not in kinds:
                out.append(m.group(1).strip())
    return out
