"""Kinds of product within one leaf category, read from titles (substitution's "same kind").

Some leaves hold products a customer does not swap for one another: collars, harnesses and
leashes share one pet category, boxer briefs and trunks one underwear category. The taxonomy
groups such a leaf's nouns by kind (``Category.kinds``) and names the attribute saying whom a
product is for (``Category.audience``: boys' or girls', men's or women's). Both are decidable
from what an agent sees: every title holds its noun and its audience value (the schema checks
the title pattern names both), so a card's title says a product's kind, the longest of the
leaf's nouns it holds as whole words ("Boxer Briefs" is not "Briefs").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=1024)
def _pattern(noun: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'-])" + re.escape(noun.lower()) + r"(?![\w'-])")


def title_noun(title: str, nouns: Sequence[str]) -> str | None:
    """The longest of ``nouns`` that ``title`` holds as whole words (ties to the first), or None."""
    low = title.lower()
    best: str | None = None
    for noun in nouns:
        if (best is None or len(noun) > len(best)) and _pattern(noun).search(low):
            best = noun
    return best


def kind_of(title: str, kind: Sequence[str], others: Sequence[str]) -> bool:
    """Whether ``title`` names a product of ``kind`` (its nouns), not of the ``others``."""
    return title_noun(title, (*kind, *others)) in kind
