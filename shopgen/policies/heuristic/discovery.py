"""Heuristic agent for ``discovery``: read the request, ask, search, check, recommend."""

from __future__ import annotations

import re

from shopgen.gen.tasks.base import Oracle
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import fix_typos
from shopgen.policies.heuristic.recommend import long_form_segments, recommend_flow

#: Where customers name the product, per phrasing of ``templates/discovery/first.j2``.
_LEADS = (
    r"get myself some (.+?) (?:for|4) ages",
    r"telling me i need (.+?), so here",
    r"shopping (?:for|4) (.+?) now\b",
    r"help me find (.+?)\?",
    r"recommendations (?:for|4) (.+?)(?=[,.])",
    r"searching for (.+?)(?=\.)",
    r"just find me (.+?)(?=\. quickly)",
    r"don't have all day\. (.+?)(?=[,.])",
    r"i need (.+?) now\b",
    r"i search (.+?)(?=[,.])",
    r"i am need the (.+?)(?= which|\.)",
    r"important to find (.+?)(?=[,.])",
    r"^hey need (.+?)(?= show|$)",
    r"^lookin 4 (.+?)(?= thx)",
    r"^need (.+?)(?=\.)",
    r"^looking for (.+?)(?= \(|\.)",
    r"^(.+?) pls\b",
    r"^(.+?)(?=[,.])",
)
#: Where stated requirements start after the product words.
_CONS = re.compile(
    r"\s+(?:from|under|rated|delivered|max|ships in)\b|,|\s+\$|\s+\d|\s+[A-Z]|\s+\S+:|\s+-\s"
)


def heuristic(task: PublicTask) -> Oracle:
    """Play a discovery task from the public view only (template words read through typos)."""
    text = fix_typos(task.user)
    category = category_phrase(text)
    yield from recommend_flow(
        text,
        query=category,
        exclude=set(),
        noun=category,
        segments=tuple(long_form_segments(text, category)),
        rename=True,
    )


def category_phrase(text: str) -> str:
    """The kind of product the customer names (the words after "find", "need", …).

    Typos in the template's words are fixed first (:func:`fix_typos`), so the phrasing is
    recognised; the product words themselves may still be typo'd, which the search's cards
    settle (``recommend.rename``).
    """
    text = fix_typos(text)
    for pattern in _LEADS:
        m = re.search(pattern, text, re.I)
        if m:
            return _CONS.split(m.group(1).strip(), maxsplit=1)[0].strip()
    return text[:80]
