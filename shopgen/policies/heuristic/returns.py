"""Heuristic agent for ``returns``: find the line, check eligibility, start what was asked."""

from __future__ import annotations

import re
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import ask, overlap, reply_text, words
from shopgen.policies.heuristic.orders import find_order

REASON_WORDS = {
    "defective": ("defective", "stopped working", "broken", "doesn't work", "faulty"),
    "wrong_item": ("wrong item", "wrong one", "not what i ordered"),
    "damaged_in_transit": ("damaged", "arrived broken", "crushed"),
    "changed_mind": ("changed my mind", "don't need", "don't want", "no longer need"),
}
METHOD_WORDS = {
    "mail": ("by mail", "mail it", "post"),
    "drop_off": ("drop-off", "drop off", "dropoff"),
    "pickup": ("pickup", "pick up", "pick-up", "collect"),
}


def heuristic(task: PublicTask) -> Oracle:
    """Play a returns task from the public view only."""
    text = task.user
    order = yield from find_order(text, item=text)
    if order is None:
        yield "Sorry, I could not find that order."
        return
    line = best_line(order.get("lines", []), text)
    reason = pick_word(text, REASON_WORDS)
    if reason is None:
        reason = pick_word(
            reply_text((yield ask("What is the reason for the return?"))), REASON_WORDS
        )
    reason = reason or "changed_mind"
    ids = {"order_id": order["order_id"], "product_id": line["product_id"]}
    if line.get("variant_id"):
        ids["variant_id"] = line["variant_id"]
    check = yield [call("return_check_eligibility", reason=reason, **ids)]
    verdict = next((r for r in check if "eligible" in r), {})
    if not verdict.get("eligible"):
        why = verdict.get("explanation") or "the store policy does not allow it"
        yield f"Sorry, this item is not eligible for a return: {why}."
        return
    if "exchange" in text.lower():
        swap = yield from exchange_variant(line, text)
        if swap:
            done = yield [call("exchange_start", new_variant_id=swap, reason=reason, **ids)]
            yield f"Done: your exchange is started. {_ref(done)}"
            return
    method = pick_word(text, METHOD_WORDS)
    if method is None:
        answer = reply_text((yield ask("How would you like to send it back (return method)?")))
        method = pick_word(answer, METHOD_WORDS) or "mail"
    done = yield [call("return_start", reason=reason, method=method, **ids)]
    yield f"Done: your return is started. {_ref(done)}"


def best_line(lines: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """The order line whose title best matches the customer's words."""
    return max(lines, key=lambda ln: overlap(ln.get("title", ""), text), default={})


def pick_word(text: str, table: dict[str, tuple[str, ...]]) -> str | None:
    """The first key of ``table`` one of whose phrases occurs in ``text``."""
    low = text.lower()
    return next((k for k, phrases in table.items() if any(p in low for p in phrases)), None)


def exchange_variant(line: dict[str, Any], text: str) -> Any:
    """Yield a variants lookup; return the variant the customer's words describe best."""
    shown = yield [call("catalog_get_variants", product_id=line["product_id"])]
    variants = [v for r in shown for v in r.get("variants", []) if isinstance(v, dict)]
    want = re.split(r"\bfor\b", text.lower(), maxsplit=1)[-1]
    scored = [
        (len(words(str(v.get("label", ""))) & words(want)), v["variant_id"])
        for v in variants
        if v.get("variant_id") != line.get("variant_id")
    ]
    best = max(scored, default=(0, None))
    return best[1] if best[0] > 0 else None


def _ref(results: list[dict[str, Any]]) -> str:
    ref = next((r.get("return_id") or r.get("exchange_id") for r in results if r), None)
    return f"Reference: {ref}." if ref else ""
