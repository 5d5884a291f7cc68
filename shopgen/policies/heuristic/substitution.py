"""Heuristic agent for ``substitution``: find the original, search its kind, recommend peers."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import PRODUCT_RE, fix_typos, near, words
from shopgen.policies.heuristic.recommend import recommend_flow
from shopgen.policies.heuristic.turns import Turns

_NAME_END = re.compile(
    r"\s*(?:\(item|\[|\bis gone|\bis out|\bis unavailable|\bis not available|\bsold out|"
    r"\bhave no stock|\bcannot be ordered|\band it says|\bbut is finish|,\s+which appears|"
    r"\. replacement|\(|,|\.\s)",
    re.I,
)
#: What comes right before the product's name, per phrasing of ``templates/substitution``.
_NAME_LEADS = (
    "heart set on",
    "went to buy",
    "bummer,",
    "noticed that",
    "to purchase",
    "sorry to bother you.",
    "seriously?",
    "substitute for",
    "replacement for",
    "hello, the",
    "want buy",
    "hi,",
    "need alt 4",
    "oos:",
    "quick: substitute for",
)


def heuristic(task: PublicTask) -> Oracle:
    """Play a substitution task from the public view only."""
    text = fix_typos(task.user)
    name = product_name(text)
    ids = PRODUCT_RE.findall(text)
    original = ids[0] if ids else None
    turns = Turns()
    if original is None:  # the customer looked at it: the visit history has its id
        (history,) = yield from turns.run([call("user_get_visit_history")])
        original = _seen(history or {}, name)
    product_words = name.split()[1:] or name.split()  # the first word is the brand
    yield from recommend_flow(
        text,
        query=" ".join(product_words)[-120:],
        exclude={original} if original else set(),
        noun=" ".join(product_words[-2:]),  # "Wireless Charger", not any charger
        anchor=original,
        turns=turns,
    )


def product_name(text: str) -> str:
    """The unavailable product's name as the customer wrote it."""
    low = text.lower()
    starts = [low.find(lead) + len(lead) for lead in _NAME_LEADS if lead in low]
    for start in [*starts, 0]:
        name = _NAME_END.split(text[start:].strip(), maxsplit=1)[0].strip()
        if len(name.split()) >= 2 and name[0].isupper():
            return name
    return text[:80]


def _seen(result: dict, name: str) -> str | None:
    """The id of the viewed product whose title matches ``name`` best, typos allowed.

    The customer's name of the product carries typos ("Sofsthell Coat"), so a title word
    counts as said when a word of the name is within a typo of it (:func:`fuzzy_overlap`).
    """
    views = [v for v in result.get("visits", []) if "title" in v]
    if not views:
        return None
    best = max(views, key=lambda v: (fuzzy_overlap(name, v["title"]), v["product_id"]))
    return best["product_id"] if fuzzy_overlap(name, best["title"]) >= 0.5 else None


def fuzzy_overlap(name: str, title: str) -> float:
    """Share of ``name``'s words that ``title`` holds, each exactly or within a typo."""
    said = words(name)
    shown = words(title)
    if not said:
        return 0.0
    return sum(any(near(w, t) for t in shown) for w in said) / len(said)
