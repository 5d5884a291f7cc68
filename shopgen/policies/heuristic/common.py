"""Text patterns and small moves every rule-based agent shares.

Everything here reads only text the agent was shown: the first message, tool results and the
customer's replies. The patterns follow how customers word things in the first-message
templates and replies (``templates/*/first.j2``, ``templates/user``) — the way a developer of a
rule-based bot would tune it to a store's traffic — but never the hidden goal.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files
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


# --- reading through typos ----------------------------------------------------------------

#: Words customers use besides the templates' own: what the agent asks about and the stated
#: preference (``Preference.statement``), so a reply's typo'd labels read back too.
_EXTRA_WORDS = (
    "budget minimum rating delivery time number options brand priority order price "
    "ideal worst favourite brands then star stars day days much quite little lot very "
    "high low fast actually change changed mind make should now"
)
#: Environments whose customers' wording the recommendation agents read (journey reuses them).
_CUSTOMER_ENVS = ("discovery", "substitution", "journey")
#: Shortest word a typo fix touches: shorter ones are too close to too many others.
FIX_MIN = 4
#: A word this long may be two edits from the word it stands for (one below that).
FIX_TWO = 7
_TOKEN = re.compile(r"[A-Za-z0-9']+")
#: Jinja blocks: their quoted strings are text the customer sees, the rest is syntax.
_JINJA = re.compile(r"\{[{%#].*?[}%#]\}", re.S)


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: one edit per typo the noise makes, a swap included.

    The customer's typos (``gen/noise.py``) substitute, drop, insert, double or swap keys; a
    plain Levenshtein distance would count a swap as two edits.
    """
    if a == b:
        return 0
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def near(a: str, b: str) -> bool:
    """Whether word ``a`` is ``b`` typed with a typo or two (by length, see :data:`FIX_TWO`)."""
    if a == b:
        return True
    if min(len(a), len(b)) < FIX_MIN:
        return False
    return edit_distance(a, b) <= (2 if len(b) >= FIX_TWO else 1)


@lru_cache(maxsize=1)
def template_words() -> frozenset[str]:
    """Every word the customer-message templates say (the store's traffic, as tuned to).

    Read from the installed templates (their literal text and the quoted strings of their
    Jinja blocks), so the vocabulary follows the phrasings the customers actually use.
    """
    root = files("shopgen.templates")
    texts = [root.joinpath(env, "first.j2").read_text() for env in _CUSTOMER_ENVS]
    texts += [p.read_text() for p in root.joinpath("user").iterdir() if p.name.endswith(".j2")]
    texts.append(root.joinpath("common.j2").read_text())
    out: set[str] = set(_EXTRA_WORDS.split())
    for text in texts:
        quoted = " ".join(re.findall(r'"([^"]*)"', " ".join(_JINJA.findall(text))))
        plain = _JINJA.sub(" ", text)
        out.update(w.lower() for w in _TOKEN.findall(plain + " " + quoted) if w.isalpha())
    return frozenset(w for w in out if len(w) >= FIX_MIN)


def fix_typos(text: str) -> str:
    """``text`` with each typo'd template word spelled right ("Sbow me 4 optiond").

    Only words the templates use are restored, and only when exactly one is that close, so
    the product words, brands and values (which the templates never say) stay as typed; a
    plural of a known word ("tops" of "Top") is a word, not a typo.
    """
    vocab = template_words()

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        letters = sum(ch.isalpha() for ch in low)
        if low in vocab or len(low) < FIX_MIN or letters < len(low) - 2 or low.rstrip("s") in vocab:
            return word
        if PRODUCT_RE.fullmatch(word):
            return word
        found = {v for v in vocab if abs(len(v) - len(low)) <= 2 and near(low, v)}
        if len(found) != 1:
            return word
        (right,) = found
        return right.capitalize() if word[0].isupper() else right

    return _TOKEN.sub(fix, text)


def closest(phrase: str, options: list[str]) -> str | None:
    """The option ``phrase`` names despite typos (word by word), or None if none is close.

    Each of the option's words must be matched by a word of the phrase within a typo
    (:func:`near`); among those, the option sharing the most characters wins.
    """
    said = [w for w in re.findall(r"[a-z0-9']+", phrase.lower()) if w not in {"and", "&"}]
    scored = []
    for option in sorted(set(options)):
        want = [w for w in re.findall(r"[a-z0-9']+", option.lower()) if w not in {"and", "&"}]
        if want and all(any(_near_word(s, w) for s in said) for w in want):
            scored.append((sum(len(w) for w in want), option))
    return max(scored)[1] if scored else None


def _near_word(said: str, want: str) -> bool:
    """A customer's word for a card's word: a typo of it, or its singular or plural."""
    return near(said.rstrip("s"), want.rstrip("s")) or near(said, want)
