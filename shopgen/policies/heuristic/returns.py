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
    """Play a returns task from the public view only.

    Turns are few at low d (T_max = 4), so it asks everything missing in one question, picks
    the line from the listing without opening the order, and starts the return at once: a
    refused start is the store's verdict, and its explanation says why.
    """
    text = task.user
    order = yield from find_order(text, item=text, details=False)
    if order is None:
        yield "Sorry, I could not find that order."
        return
    line = best_line(order.get("lines") or order.get("items", []), text)
    exchange = "exchange" in text.lower()
    # "Send it back" names no action: a return or an exchange, which the customer must say.
    action_said = exchange or re.search(r"\breturn", text.lower()) is not None
    reason = pick_word(text, REASON_WORDS)
    method = None if exchange else pick_word(text, METHOD_WORDS)
    missing = [
        q
        for q, known in (
            (_ASK_ACTION, action_said),
            (_ASK_REASON, reason),
            (_ASK_METHOD, exchange or method),
        )
        if not known
    ]
    said = ""
    if missing:
        said = reply_text((yield ask(" And ".join(missing))))
        exchange = exchange or "exchange" in said.lower()
        reason = reason or pick_word(said, REASON_WORDS)
        method = method or pick_word(said, METHOD_WORDS)
    reason = reason or "changed_mind"
    ids = {"order_id": order["order_id"], "product_id": line["product_id"]}
    if line.get("variant_id"):
        ids["variant_id"] = line["variant_id"]
    if exchange:
        shown = yield [call("catalog_get_variants", product_id=line["product_id"])]
        swap = exchange_variant(line, shown, f"{text} {said}")
        if swap is None:  # the new size or colour was left out: ask for it
            said = reply_text((yield ask(_ASK_VARIANT)))
            swap = exchange_variant(line, shown, said)
        if swap:
            done = yield [call("exchange_start", new_variant_id=swap, reason=reason, **ids)]
            yield _outcome(done, "exchange")
            return
    done = yield [call("return_start", reason=reason, method=method or "mail", **ids)]
    yield _outcome(done, "return")


_ASK_ACTION = "Would you like to return it or exchange it?"
_ASK_REASON = "What is the reason for the return?"
_ASK_VARIANT = "Which size or colour would you like instead?"
_ASK_METHOD = "How would you like to send it back (return method)?"


def _outcome(results: list[dict[str, Any]], what: str) -> str:
    """Report a started return/exchange, or the store's refusal in its own words."""
    refused = next((r for r in results if r.get("error")), None)
    if refused is None:
        return f"Done: your {what} is started. {_ref(results)}"
    return f"Sorry, this item is not eligible: {why_not(str(refused.get('message', '')))}"


def why_not(message: str) -> str:
    """The sentences of a refusal that say what fails (not the rules that would have allowed it)."""
    text = message.split(":", 1)[-1]
    sentences = [x.strip() for x in re.split(r"(?<=[.;])\s+", text) if x.strip()]
    negative = re.compile(r"\b(?:not|cannot|can't|outside|no longer|never|only)\b", re.I)
    kept = [x for x in sentences if negative.search(x) and "can always" not in x.lower()]
    return " ".join(kept or sentences[-1:]) or "the store policy does not allow it."


def best_line(lines: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """The order line whose title best matches the customer's words."""
    return max(lines, key=lambda ln: overlap(ln.get("title", ""), text), default={})


def pick_word(text: str, table: dict[str, tuple[str, ...]]) -> str | None:
    """The first key of ``table`` one of whose phrases occurs in ``text``."""
    low = text.lower()
    return next((k for k, phrases in table.items() if any(p in low for p in phrases)), None)


def exchange_variant(line: dict[str, Any], shown: list[dict[str, Any]], text: str) -> Any:
    """The shown variant (not the line's own) the customer's words describe best, or None."""
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
