"""Carriers an answer names (status answers)."""

from __future__ import annotations

import re
from functools import lru_cache

from shopgen.verifiers.text.normalize import plain, zeroed

#: Carrier names as the world writes them (``shopgen.gen.world.CARRIERS``) and as people do.
CARRIER_WORDS: dict[str, tuple[str, ...]] = {
    "UPS": ("ups", "united parcel service"),
    "USPS": ("usps", "postal service"),
    "FedEx": ("fedex", "fed ex", "federal express"),
    "OnTrac": ("ontrac", "on trac"),
}
#: A carrier's name as a word, not the tail of a hyphenated one ("follow-ups", "mix-ups").
_CARRIER_RES = {
    name: re.compile(r"(?<!-)\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
    for name, words in CARRIER_WORDS.items()
}


def carriers_named(text: str) -> set[str]:
    """The carriers the text names (word by word, so "USPS" does not also name "UPS")."""
    return set(_carriers_of(zeroed(text)))


@lru_cache(maxsize=4096)
def _carriers_of(text: str) -> frozenset[str]:
    """:func:`carriers_named`, remembered per text with digits zeroed (:func:`zeroed`).

    A carrier's pattern is searched only when one of its names is in the text.
    """
    low = " ".join(plain(text).split())
    return frozenset(
        name
        for name, pattern in _CARRIER_RES.items()
        if any(word in low for word in CARRIER_WORDS[name]) and pattern.search(low)
    )


def carrier_stated(text: str, carrier: str) -> bool:
    """The text names ``carrier`` and no other carrier."""
    return _carriers_of(zeroed(text)) == {carrier}
