"""Filtering and ranking shown cards: shared by the discovery, substitution and bundle agents."""

from __future__ import annotations

import re
from typing import Any

from shopgen.policies.heuristic.common import money, rating_floor, ship_days

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
    """Price ceiling, rating floor, shipping-days ceiling and attribute values stated."""
    attrs = {
        m.group(1).lower(): m.group(2).strip().lower()
        for m in re.finditer(
            r"\b([a-z_ ]{3,20}):\s*([A-Za-z0-9][\w .'+-]{0,30}?)(?=[,.;!?]|$)", text
        )
    }
    return {
        "price_max": money(text),
        "rating_min": rating_floor(text),
        "ship_days_max": ship_days(text),
        "attrs": attrs,
    }


def attrs_hold(card: dict[str, Any], attrs: dict[str, str]) -> bool:
    """Every stated attribute value appears in the card's title, key attributes or attributes."""
    shown = " ".join(
        [str(card.get("title", "")), *map(str, card.get("key_attrs", []) or [])]
        + [str(v) for v in (card.get("attributes") or {}).values()]
    ).lower()
    return all(value in shown for value in attrs.values())


def blended_rank(items: list[dict[str, Any]], key: str, brands: tuple[str, ...]) -> list[dict]:
    """Cards best first by a blend of price, rating, shipping speed and brand.

    What matters most weighs half; the rest share the other half, as a customer who names one
    priority still cares about the others.
    """
    if not items:
        return []
    prices = [float(c.get("price", 0)) for c in items]
    days = [float(c.get("ship_days", 0) or 0) for c in items]
    weights = {"price": 0.5 / 3, "rating": 0.5 / 3, "ship": 0.5 / 3, "brand": 0.5 / 3}
    weights[key] = 0.5

    def norm(v: float, lo: float, hi: float) -> float:
        return 1.0 - (v - lo) / (hi - lo) if hi > lo else 1.0

    def score(c: dict[str, Any]) -> float:
        brand = str(c.get("brand") or c.get("title", ""))
        return (
            weights["price"] * norm(float(c.get("price", 0)), min(prices), max(prices))
            + weights["rating"] * float(c.get("rating", 0)) / 5.0
            + weights["ship"] * norm(float(c.get("ship_days", 0) or 0), min(days), max(days))
            + weights["brand"] * any(brand.startswith(b) for b in brands if b)
        )

    return sorted(items, key=lambda c: (-score(c), c["product_id"]))


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
        ceiling = cons.get("ship_days_max")
        if ceiling is not None and c.get("ship_days") is not None and c["ship_days"] > ceiling:
            continue
        if cons.get("attrs") and not attrs_hold(c, cons["attrs"]):
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
