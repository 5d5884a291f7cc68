"""Reading requirements, checking candidates and ranking them: discovery and substitution.

The customer states hard requirements (price ceiling, rating floor, delivery days, brand,
attribute values) in the first message or when asked, and one soft fact when asked: what
matters most (a low price, a high rating, fast delivery, brands they like). Cards show price,
rating, stock and key attribute values; brand, shipping days, category and exact attributes
need ``catalog_get_product``, so the flow checks the best few candidates before it recommends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.heuristic.common import (
    cards,
    count_wanted,
    money,
    rating_floor,
    reply_text,
    ship_days,
    words,
)
from shopgen.policies.heuristic.turns import Turns

#: What the customer says matters most (``Preference.top_priority``) → ranking key.
_PRIORITY = {
    "a low price": "price",
    "a high rating": "rating",
    "fast delivery": "ship",
    "brands i like": "brand",
}
#: Share of the ranking weight the customer's top priority gets; the rest share the remainder.
TOP_WEIGHT = 0.5
#: Shipping days assumed for a product not yet checked (the middle of typical 1–7 days).
UNKNOWN_SHIP = 4.0
#: Candidates checked beyond the number of options wanted (spares for failed checks).
SPARES = 3
_SEGMENT_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+|[()]|\.\s|[.!?]$|\s-\s")
_PAIR = re.compile(
    r"\bthe ([a-z][a-z ]{1,30}?) (?:is|should be|is now) (.+?)(?=,\s+the |\s+and the |[.!?]?$)"
)


@dataclass
class Needs:
    """What the customer requires and prefers, as far as they said."""

    k: int | None = None
    price_max: float | None = None
    rating_min: float | None = None
    ship_days_max: int | None = None
    brand: str | None = None
    attrs: list[tuple[str | None, str]] = field(default_factory=list)
    key: str = "rating"
    brands: tuple[str, ...] = ()

    def merge(self, other: Needs) -> None:
        """Take every requirement ``other`` states (a later statement wins)."""
        for name in ("k", "price_max", "rating_min", "ship_days_max", "brand"):
            if getattr(other, name) is not None:
                setattr(self, name, getattr(other, name))
        self.attrs = _merge_attrs(self.attrs, other.attrs)
        if other.key != "rating" or other.brands:
            self.key, self.brands = other.key, other.brands


def _merge_attrs(old: list, new: list) -> list:
    labels = {label for label, _ in new if label}
    return [a for a in old if a[0] not in labels] + [a for a in new if a not in old]


def read_needs(text: str) -> Needs:
    """Requirements stated in a first message or a reply."""
    needs = Needs(
        k=count_wanted(text) or _count_pair(text),
        price_max=money(text),
        rating_min=rating_floor(text),
        ship_days_max=ship_days(text) or _days_pair(text),
    )
    low = text.lower()
    for phrase, key in _PRIORITY.items():
        if phrase in low:
            needs.key = key
    m = re.search(r"brands i like \(([^)]*)\)", text, re.I)
    if m:
        needs.brands = tuple(b.strip() for b in m.group(1).split(",") if b.strip())
    m = re.search(r"\bfrom ([A-Z][\w&.' -]*?)(?=,| and | under| rated| delivered|[.!?]|$)", text)
    pairs = dict(_PAIR.findall(text))
    needs.brand = pairs.get("brand") or (m.group(1).strip() if m else None)
    needs.attrs = _attr_pairs(text, pairs)
    return needs


def _count_pair(text: str) -> int | None:
    m = re.search(r"number of options (?:is|should be|is now) (\d+)", text)
    return int(m.group(1)) if m else None


def _days_pair(text: str) -> int | None:
    m = re.search(r"delivery time (?:is|should be|is now) (\d+)", text)
    return int(m.group(1)) if m else None


_VALUE_END = re.compile(r"\s+(?:show|send|thx|pls|just|list|top)\b", re.I)
_KNOWN_LABELS = {"budget", "minimum rating", "delivery time", "number of options", "brand"}
_KNOWN_LABELS |= {"what matters most", "kind of product", "product", "price"}


def _attr_pairs(text: str, pairs: dict[str, str]) -> list[tuple[str | None, str]]:
    """Attribute requirements: "label: value", a reply's "the label is value"."""
    out: list[tuple[str | None, str]] = [
        (label.strip().lower(), _VALUE_END.split(value.strip(), maxsplit=1)[0])
        for label, value in re.findall(
            r"\b([a-z][a-z ]{1,25}):\s*([^,.;!?()]+?)(?=[,.;!?()]|$)", text
        )
    ]
    out += [(k.strip(), v.strip()) for k, v in pairs.items() if k.strip() not in _KNOWN_LABELS]
    return out


def long_form_segments(text: str, category: str) -> list[str]:
    """Pieces after the product words that may be "label value" requirements ("size AAA")."""
    low = text.lower()
    start = low.find(category.lower())
    tail = text[start + len(category) :] if start >= 0 and category else ""
    out = []
    for piece in _SEGMENT_SPLIT.split(tail):
        piece = (piece or "").strip(" .:;-")
        plain = re.sub(
            r"^(?:i'd like it|ideally something|i am looking for something|which is|"
            r"must be|the must-haves:|something)\s+",
            "",
            piece,
            flags=re.I,
        )
        if re.match(r"^[a-z][a-z' ]*\s(?!I\b)[A-Z0-9]", plain) and not _is_other_need(plain):
            out.append(plain)
    return out


def _is_other_need(piece: str) -> bool:
    low = piece.lower()
    if re.search(r"\$|\bunder\b|\bmax\b|rated|stars?\b|\+|within|ships in|options?\b|from ", low):
        return True
    return bool(re.search(r"thank|please|pls|thx|hurry|quickly|now|show|give|list|suggest", low))


# --- checking candidates ----------------------------------------------------------------


def card_text(card: dict[str, Any]) -> str:
    """What a card or a product's details say in words (title, key attributes, attributes)."""
    attrs = card.get("attributes") or {}
    parts = [str(card.get("title", "")), *map(str, card.get("key_attrs") or [])]
    parts += [str(v) for v in attrs.values()]
    return " ".join(parts).lower()


def attr_holds(card: dict[str, Any], label: str | None, value: str) -> bool:
    """Whether the card (or details) shows the attribute value (the label when known)."""
    attrs = card.get("attributes")
    if isinstance(attrs, dict) and attrs:
        for name, v in attrs.items():
            said = _label(name)
            if label and said == label and str(v).lower() == value.lower():
                return True
            if not label and value.lower() == f"{said} {v}".lower():
                return True
        return False
    text = card_text(card)
    if label:
        return value.lower() in text
    parts = value.lower().split()
    return any(" ".join(parts[i:]) in text for i in range(1, len(parts)))


def _label(name: str) -> str:
    """How a customer names attribute ``name`` (``battery_size`` → ``size``)."""
    ws = name.split("_")
    return "size" if "size" in ws else " ".join(ws)


def meets(card: dict[str, Any], needs: Needs) -> bool:
    """Whether a card or details meet every stated requirement that it shows."""
    if not card.get("stock_qty"):
        return False
    if needs.price_max is not None and card.get("price", 0) > needs.price_max:
        return False
    if needs.rating_min is not None and card.get("rating", 0) < needs.rating_min:
        return False
    ship = card.get("ship_days")
    if needs.ship_days_max is not None and ship is not None and ship > needs.ship_days_max:
        return False
    brand = card.get("brand")
    if needs.brand and not (brand == needs.brand if brand else _titled(card, needs.brand)):
        return False
    return all(attr_holds(card, label, value) for label, value in needs.attrs)


def _titled(card: dict[str, Any], brand: str) -> bool:
    return str(card.get("title", "")).lower().startswith(brand.lower())


def utility(card: dict[str, Any], needs: Needs, prices: tuple[float, float]) -> float:
    """An estimate of how much the customer likes a product: the blend a stated priority tilts."""
    rest = (1.0 - TOP_WEIGHT) / 3
    w = {k: (TOP_WEIGHT if k == needs.key else rest) for k in ("price", "rating", "ship", "brand")}
    lo, hi = prices
    price = (hi - float(card.get("price", 0))) / (hi - lo) if hi > lo else 1.0
    ship = float(card.get("ship_days") or UNKNOWN_SHIP)
    brand = card.get("brand") or ""
    loyal = any(brand == b or (not brand and _titled(card, b)) for b in needs.brands)
    return (
        w["price"] * price
        + w["rating"] * (float(card.get("rating", 0)) - 1) / 4
        + w["ship"] * max(0.0, (7.0 - ship) / 6.0)
        + w["brand"] * loyal
    )


def ranked(items: list[dict[str, Any]], needs: Needs) -> list[dict[str, Any]]:
    """Items best first by :func:`utility` (prices normalised over the items)."""
    if not items:
        return []
    prices = [float(c.get("price", 0)) for c in items]
    span = (min(prices), max(prices))
    return sorted(items, key=lambda c: (-utility(c, needs, span), c["product_id"]))


def same_kind(items: list[dict[str, Any]], noun: str) -> list[dict[str, Any]]:
    """Items whose title names the product word: the customer's word most titles share.

    The customer's phrase may run into a requirement ("tablet cases material"); the word most
    shown titles contain is the product word.
    """
    titles = [words(str(c.get("title", ""))) for c in items]
    whole = [c for c, t in zip(items, titles, strict=True) if words(noun) and words(noun) <= t]
    if len(whole) >= SPARES:
        return whole
    counts = {w: sum(w in t for t in titles) for w in words(noun)}
    if not counts or max(counts.values()) == 0:
        return []
    head = max(counts, key=lambda w: (counts[w], w))
    return [c for c, t in zip(items, titles, strict=True) if head in t]


# --- the flow -----------------------------------------------------------------------------


QUESTION = (
    "What matters most to you: a low price, a high rating, fast delivery or brands you like? "
    "Do you have a budget, a minimum rating, a delivery time or a brand in mind?"
)


def recommend_flow(
    text: str,
    *,
    query: str,
    noun: str,
    exclude: set[str],
    anchor: str | None = None,
    turns: Turns | None = None,
    segments: tuple[str, ...] = (),
) -> Oracle:
    """Ask, search, check the best candidates, recommend the best k; used by two envs.

    Args:
        text: the customer's first message.
        query: what to search for.
        noun: the product word a fitting title names ("boots").
        exclude: product ids never to recommend (the unavailable original).
        anchor: a product whose category the picks must share (the original), if known.
        turns: the turns already used by the caller, if any.
        segments: "label value" requirements whose label is not known (``long_form_segments``).
    """
    turns = turns or Turns()
    needs = read_needs(text)
    needs.attrs += [(None, s) for s in segments]
    question = QUESTION + ("" if needs.k else " How many options would you like?")
    calls = [call("ask_user", question=question), call("catalog_search", query=query)]
    answer, found = yield from turns.run(calls)
    reply = reply_text([answer or {}]) + " " + " ".join(turns.said)
    needs.merge(read_needs(reply))
    k = needs.k or 3
    pool = [c for c in cards([found or {}]) if c["product_id"] not in exclude]
    shown = same_kind(pool, noun) or pool
    candidates = ranked([c for c in shown if meets(c, needs)], needs)
    if len(candidates) < k:  # a card may not show the attribute: check the others too
        loose = replace(needs, attrs=[])
        candidates += ranked([c for c in shown if meets(c, loose) and c not in candidates], needs)
    picks = yield from _check(turns, candidates, needs, k, anchor)
    if not picks:
        yield "Sorry, I found nothing that meets your requirements."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in picks])]
    yield "Here are my picks, best first: " + "; ".join(c["title"] for c in picks) + "."


def _check(
    turns: Turns, candidates: list[dict[str, Any]], needs: Needs, k: int, anchor: str | None
) -> Any:
    """Check the best candidates' details in the turns left; the k best that pass."""
    head = candidates[: max(0, turns.capacity() - (1 if anchor else 0))]
    head = head[: k + SPARES]
    ids = ([anchor] if anchor else []) + [c["product_id"] for c in head]
    results = yield from turns.run(
        [call("catalog_get_product", product_id=i) for i in ids], max_turns=turns.left()
    )
    details = {r["product_id"]: r for r in results if r and "product_id" in r}
    category = _category(details, anchor)
    checked, unchecked = [], []
    for c in candidates:
        d = details.get(c["product_id"])
        if d is None:
            unchecked.append(c)
        elif meets(d, needs) and (category is None or d.get("category") == category):
            checked.append(d)
    return (ranked(checked, needs) + unchecked)[:k]


def _category(details: dict[str, dict[str, Any]], anchor: str | None) -> str | None:
    """The category the picks must share: the anchor's, else the most common one checked."""
    if anchor and anchor in details:
        return details.pop(anchor).get("category")
    cats = [d.get("category") for d in details.values()]
    return max(set(cats), key=lambda c: (cats.count(c), str(c))) if cats else None
