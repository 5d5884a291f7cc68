"""Text patterns and small moves every rule-based agent shares.

Everything here reads only text the agent was shown: the first message, tool results and the
customer's replies. The patterns follow how customers word things in the first-message
templates and replies (``templates/*/first.j2``, ``templates/user``) — the way a developer of a
rule-based bot would tune it to a store's traffic — but never the hidden goal.
"""

from __future__ import annotations

import re
from typing import Any

from shopgen.gen.tasks.base import Call, call

ORDER_RE = re.compile(r"\b\d{3}-\d{7}-\d{7}\b")
PRODUCT_RE = re.compile(r"\bB0[0-9A-Z]{8}\b")
MONEY_RE = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)")
RATING_RE = re.compile(r"(\d(?:\.\d)?)\s*(?:\+|stars?\b|or better|or higher|or more)")
DAYS_RE = re.compile(r"(?:within|in|ships in|delivered within)\s+(\d+)\s*(?:business\s+)?days?")
COUNT_RE = re.compile(r"\b(\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:options|ideas)")
QTY_RE = re.compile(r"\b(\d+)\s*(?:x|×|units?|pcs|pieces)\b", re.I)

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
#: Month names as the templates write them (not ``calendar.month_name``: that follows the locale).
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]


def number(word: str) -> int:
    """An integer from digits or a small number word."""
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def money(text: str) -> float | None:
    """The first dollar amount in ``text``."""
    m = MONEY_RE.search(text)
    return float(m.group(1).replace(",", "")) if m else None


def rating_floor(text: str) -> float | None:
    """A rating floor ("4.5+", "rated 4 or better", "4 stars")."""
    m = RATING_RE.search(text.replace("$", "$ "))
    if not m:
        return None
    value = float(m.group(1))
    return value if 1.0 <= value <= 5.0 else None


def ship_days(text: str) -> int | None:
    """A shipping-days ceiling ("delivered within 3 days", "ships in 5 days")."""
    m = DAYS_RE.search(text.lower())
    return int(m.group(1)) if m else None


def count_wanted(text: str) -> int | None:
    """How many options the customer asked for ("Show me 3 options")."""
    m = COUNT_RE.search(text.lower())
    return number(m.group(1)) if m else None


def order_refs(text: str) -> list[str]:
    """Order numbers in ``text``, in order."""
    return ORDER_RE.findall(text)


def month_day(text: str) -> tuple[int, int] | None:
    """A "February 24"-style date (month, day) in ``text``."""
    m = re.search(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})\b", text.lower())
    return (MONTHS.index(m.group(1)) + 1, int(m.group(2))) if m else None


def reply_text(results: list[dict[str, Any]]) -> str:
    """Everything the customer said in a turn's results (answers and unprompted messages)."""
    return " ".join(str(r.get("reply") or r.get("customer") or "") for r in results).strip()


def customer_switch(results: list[dict[str, Any]]) -> str:
    """An unprompted customer message in a turn's results (a change of intent), or ""."""
    return " ".join(str(r["customer"]) for r in results if "customer" in r).strip()


def ask(question: str) -> list[Call]:
    """One ask_user turn."""
    return [call("ask_user", question=question)]


def cards(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Product cards of a turn's catalog_search results, in order."""
    out: list[dict[str, Any]] = []
    for r in results:
        out.extend(c for c in r.get("results", []) if isinstance(c, dict) and "product_id" in c)
    return out


def words(text: str) -> set[str]:
    """Lower-case word tokens with a plural ``s`` stripped (for overlap scores)."""
    return {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1}


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s words found in ``b``."""
    wa = words(a)
    return len(wa & words(b)) / len(wa) if wa else 0.0
