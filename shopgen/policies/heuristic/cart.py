"""Heuristic agent for ``cart``: parse "N x item (variant)" lines, search, pick, add, check."""

from __future__ import annotations

import re
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import PRODUCT_RE, ask, cards, overlap, reply_text, words

_ITEM = re.compile(r"(\d+)\s*x\s+")
_TAIL = re.compile(r"(?:,?\s*(?:and|thx|thanks|pls|please|thank you)\b.*$|[,.;!\s-]+$)", re.I)


def parse_items(text: str) -> list[dict[str, Any]]:
    """``[{"qty", "desc", "variant", "product_id"}]`` from "2 x desc (color Navy) [B0…]" parts."""
    parts = _ITEM.split(text)
    items = []
    for i in range(1, len(parts) - 1, 2):
        body = parts[i + 1]
        variant = re.search(r"\(([^)]*)\)", body)
        pid = PRODUCT_RE.search(body)
        desc = re.split(r"[\(\[]|, the one", body, maxsplit=1)[0]
        items.append(
            {
                "qty": int(parts[i]),
                "desc": _TAIL.sub("", desc).strip(),
                "variant": variant.group(1) if variant else "",
                "product_id": pid.group(0) if pid else None,
            }
        )
    return items


def heuristic(task: PublicTask) -> Oracle:
    """Play a cart task from the public view only."""
    items = parse_items(task.user)
    if not items:
        answer = reply_text((yield ask("Which items do you want, and how many of each?")))
        items = parse_items(answer)
    added = []
    for item in items:
        found = yield [call("catalog_search", query=item["desc"] or task.user[:100])]
        card = pick_card(cards(found), item)
        if card is None:
            continue
        variant_id = yield from choose_variant(card["product_id"], item)
        args = {"product_id": card["product_id"], "quantity": item["qty"]}
        if variant_id:
            args["variant_id"] = variant_id
        yield [call("cart_add", **args)]
        added.append(f"{item['qty']} x {card['title']}")
    yield [call("cart_view")]
    yield "Your cart now holds: " + "; ".join(added) + "." if added else "I found nothing to add."


def pick_card(shown: list[dict[str, Any]], item: dict[str, Any]) -> dict[str, Any] | None:
    """The card with the customer's id, else the one whose title best matches the words."""
    for c in shown:
        if item["product_id"] and c["product_id"] == item["product_id"]:
            return c
    return max(shown, key=lambda c: overlap(item["desc"], c.get("title", "")), default=None)


def choose_variant(product_id: str, item: dict[str, Any]) -> Any:
    """Yield a variants lookup (and a question if needed); return the variant id or None."""
    shown = yield [call("catalog_get_variants", product_id=product_id)]
    variants = [v for r in shown for v in r.get("variants", []) if isinstance(v, dict)]
    if not variants:
        return None
    want = item["variant"]
    if not want:
        want = reply_text((yield ask(f"Which colour and size for the {item['desc']}?")))
    scored = [
        (len(words(str(v.get("label", ""))) & words(want)), v["variant_id"]) for v in variants
    ]
    return max(scored, default=(0, None))[1]
