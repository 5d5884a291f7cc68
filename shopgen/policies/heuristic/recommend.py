"""Filtering and ranking shown cards: shared by the discovery, substitution and bundle agents."""

from __future__ import annotations

import re
from typing import Any

from shopgen.policies.heuristic.common import money, rating_floor

_PRIORITY = {
    "price": ("low price", "cheap", "price"),
    "rating": ("high rating", "rating", "reviews"),
    "ship": ("fast delivery", "delivery", "shipping", "fast"),
    "brand": ("brands i like", "brand"),
}


def priority(reply: str) -> tuple[str, tuple[str, ...]]:
    """What matters most, and any brands named ("brands I like (Ellis, Steele)")."""
    low = reply.lower()
    key = next((k for k, ws in _PRIORITY.items() if any(w in low for w in ws)), "rating")
    m = re.search(r"\(([^)]*)\)", reply)
    brands = tuple(b.strip() for b in m.group(1).split(",")) if m and key == "brand" else ()
    return key, brands


def constraints(text: str) -> dict[str, Any]:
    """Price ceiling and rating floor the customer stated."""
    return {"price_max": money(text), "rating_min": rating_floor(text)}


def feasible(shown: list[dict[str, Any]], cons: dict[str, Any], exclude: set[str]) -> list[dict]:
    """In-stock cards meeting the stated price and rating bounds, duplicates dropped."""
    out, seen = [], set(exclude)
    for c in shown:
        if c["product_id"] in seen or not c.get("stock_qty"):
            continue
        if cons.get("price_max") is not None and c.get("price", 0) > cons["price_max"]:
            continue
        if cons.get("rating_min") is not None and c.get("rating", 0) < cons["rating_min"]:
            continue
        seen.add(c["product_id"])
        out.append(c)
    return out


def rank(items: list[dict[str, Any]], key: str, brands: tuple[str, ...]) -> list[dict]:
    """Cards best first by what matters most (rating breaks ties)."""
    if key == "price":
        return sorted(items, key=lambda c: (c.get("price", 0), -c.get("rating", 0)))
    if key == "brand":
        return sorted(
            items,
            key=lambda c: (
                not any(c.get("title", "").startswith(b) for b in brands),
                -c.get("rating", 0),
            ),
        )
    return sorted(items, key=lambda c: (-c.get("rating", 0), c.get("price", 0)))
