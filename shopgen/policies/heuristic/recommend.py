"""Reading requirements, checking candidates and ranking them: discovery and substitution.

The customer states hard requirements (price ceiling, rating floor, delivery days, brand,
attribute values) in the first message or when asked, and their whole preference when asked
what matters: the four factors in order, each with a strength word and, for price and
delivery, the values their score runs between ("a low price (very much: $19 is ideal, $180
the worst), then a high rating (a little: 4.8 stars is ideal, 3.9 stars the worst), then …";
``gen.tasks.constraints.Preference.statement``). A search card shows every fact those refer
to (price, rating, shipping days, brand, stock, key attribute values), so the flow decides
from cards alone: it asks, searches with every stated word, widens the search brand by brand
while turns are left, and recommends the k shown products of the right kind that meet every
requirement, best first by the stated weights over the stated anchors (the cards' own range
only where the customer named none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.heuristic.common import (
    cards,
    closest,
    count_wanted,
    fix_typos,
    money,
    rating_floor,
    reply_text,
    ship_days,
    words,
)
from shopgen.policies.heuristic.turns import Turns

#: How the customer names each preference factor (``Preference.statement``) → ranking key.
_FACTORS = {
    "a low price": "price",
    "a high rating": "rating",
    "fast delivery": "ship",
    "the brand": "brand",
    "my favourite brands": "brand",
}
#: Strength words → weight (``gen.tasks.constraints.LEVELS``: what the words mean).
_STRENGTH = {"very much": 4.0, "quite a lot": 2.0, "a little": 1.0, "not at all": 0.0}
_STATED = re.compile(
    r"(a low price|a high rating|fast delivery|the brand|my favourite brands(?: \"[^\"]*\""
    r"(?:,| and)?)+)\s*\((very much|quite a lot|a little|not at all)(?::\s*([^)]*))?\)",
    re.I,
)
#: A factor's anchors as stated: "$19 is ideal, $180 the worst", "1 day is ideal, 9 days …".
_PRICE_ANCHORS = re.compile(r"\$(\d+(?:\.\d+)?) is ideal, \$(\d+(?:\.\d+)?) the worst")
_DAY_ANCHORS = re.compile(r"(\d+) days? is ideal, (\d+) days? the worst")
_RATING_ANCHORS = re.compile(r"(\d+(?:\.\d+)?) stars? is ideal, (\d+(?:\.\d+)?) stars? the worst")
#: The rating anchors a customer who names none means (the whole 1–5 star scale).
FULL_RATING = (5.0, 1.0)
#: Weights used before the customer said what matters (every factor alike).
EVEN = {"price": 1.0, "rating": 1.0, "ship": 1.0, "brand": 1.0}
#: Shipping days assumed when no card has shown a range yet.
UNKNOWN_SHIP = 4.0
#: Share of the titles naming the product word that must also hold another word of the phrase
#: for that word to be required too (:func:`same_kind`).
MOSTLY = 0.8
_SEGMENT_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+|[()]|\.\s|[.!?]$|\s-\s")
_PAIR = re.compile(
    r"\bthe ([a-z][a-z ]{1,30}?) (?:is|should be|is now|→) (.+?)(?=,\s+the |\s+and the |\.\s|[.!?]?$)"
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
    weights: dict[str, float] | None = None
    brands: tuple[str, ...] = ()
    #: Stated anchors: (price ideal, price worst) and (days ideal, days worst), when said.
    price_anchors: tuple[float, float] | None = None
    day_anchors: tuple[float, float] | None = None
    #: (rating ideal, rating worst), when said.
    rating_anchors: tuple[float, float] | None = None
    #: Values said bare, brand or attribute value as yet unknown (:func:`bare_values`).
    bare: list[str] = field(default_factory=list)

    def merge(self, other: Needs) -> None:
        """Take every requirement ``other`` states (a later statement wins)."""
        for name in ("k", "price_max", "rating_min", "ship_days_max", "brand"):
            if getattr(other, name) is not None:
                setattr(self, name, getattr(other, name))
        self.attrs = _merge_attrs(self.attrs, other.attrs)
        self.bare += [v for v in other.bare if v not in self.bare]
        if other.weights is not None:
            self.weights, self.brands = other.weights, other.brands
            self.price_anchors, self.day_anchors = other.price_anchors, other.day_anchors
            self.rating_anchors = other.rating_anchors

    def scale(self, seen: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        """The utility's (price_lo, price_hi, ship_lo, ship_hi): stated anchors, else ``seen``."""
        lo, hi = self.price_anchors or seen[:2]
        slo, shi = self.day_anchors or seen[2:]
        return lo, hi, slo, shi

    def words(self) -> list[str]:
        """What a search should say besides the product: the brand and attribute values."""
        out = [self.brand] if self.brand else []
        return out + [value for _, value in self.attrs] + self.bare


def _merge_attrs(old: list, new: list) -> list:
    labels = {label for label, _ in new if label}
    return [a for a in old if a[0] not in labels] + [a for a in new if a not in old]


def read_needs(text: str) -> Needs:
    """Requirements stated in a first message or a reply.

    The preference statement is read first and taken out: its anchors ("$19 is ideal",
    "5 stars is ideal") are not a budget, a rating floor or a delivery time.
    """
    pref = read_preference(text)
    text = fix_typos(_STATED.sub(" ", text))
    bare_k, bare_days, names = bare_values(text)
    needs = Needs(
        k=count_wanted(text) or _count_pair(text) or bare_k,
        price_max=money(text),
        rating_min=rating_floor(text),
        ship_days_max=ship_days(text) or _days_pair(text) or bare_days,
        bare=names,
    )
    needs.weights, needs.brands = pref[0], pref[1]
    needs.price_anchors, needs.day_anchors, needs.rating_anchors = _anchors(pref[2])
    m = re.search(r"\bfrom ([A-Z][\w&.' -]*?)(?=,| and | under| rated| delivered|[.!?]|$)", text)
    pairs = dict(_PAIR.findall(text))
    needs.brand = pairs.get("brand") or _brand_pair(text) or (m.group(1).strip() if m else None)
    needs.attrs = _attr_pairs(text, pairs)
    return needs


def read_preference(
    text: str,
) -> tuple[dict[str, float] | None, tuple[str, ...], dict[str, str]]:
    """The stated weights per factor, the liked brands and each factor's anchor words.

    (None, (), {}) if no preference is stated. Anchor words are what follows a strength word
    ("$19 is ideal, $180 the worst"), by ranking key (``price``, ``ship``, …).
    """
    found = _STATED.findall(text)
    if not found:
        return None, (), {}
    weights = dict.fromkeys(EVEN, 0.0)
    brands: tuple[str, ...] = ()
    anchors: dict[str, str] = {}
    for factor, strength, said in found:
        low = factor.lower()
        key = next(k for phrase, k in _FACTORS.items() if low.startswith(phrase))
        weights[key] = _STRENGTH[strength.lower()]
        if said:
            anchors[key] = said
        if key == "brand":
            brands = tuple(re.findall(r'"([^"]*)"', factor))
    return weights, brands, anchors


def _anchors(said: dict[str, str]) -> tuple[tuple[float, float] | None, ...]:
    """(ideal, worst) of price, days and rating from :func:`read_preference`'s anchor words."""
    found = (
        _PRICE_ANCHORS.search(said.get("price", "")),
        _DAY_ANCHORS.search(said.get("ship", "")),
        _RATING_ANCHORS.search(said.get("rating", "")),
    )
    return tuple((float(m.group(1)), float(m.group(2))) if m else None for m in found)


def _count_pair(text: str) -> int | None:
    """The count in "the number of options is 4", read past typo'd short words ("lf", "ad")."""
    m = re.search(r"\bnumber\b.{0,6}?\boptions?\b.{0,10}?(\d+)", text)
    return int(m.group(1)) if m else None


def _days_pair(text: str) -> int | None:
    """The days in "the delivery time is 7 days", however the "is" came out."""
    m = re.search(r"\bdelivery time\b.{0,10}?(\d+)\s*days?\b", text)
    return int(m.group(1)) if m else None


def _brand_pair(text: str) -> str | None:
    """The brand in "the brand is Kaufman", also as "the brandi s Kaufman" (a moved space)."""
    m = re.search(r"\bthe\s*brand\w?\s*\w{0,2}\s+([A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*)", text)
    return m.group(1).rstrip(".") if m else None


_BARE_END = re.compile(r"\s*(?:thx|pls|ty)?[.!]?\s*$", re.I)


def bare_values(text: str) -> tuple[int | None, int | None, list[str]]:
    """A values-only answer ("2 days, Fowler, 4 thx"): its count, its days and its words.

    Terse and texting customers answer with the values alone, in no stated order; units
    tell most apart ("$" a budget and "stars" a rating are read anyway), a bare number is
    the number of options, and a bare name is a brand or an attribute value, which only the
    cards can tell (:func:`resolve_bare`).
    """
    if re.search(r"\bthe [a-z][a-z ]*\b(?:is|should be|→)", text):
        return None, None, []
    k = days = None
    names = []
    for piece in re.split(r",\s*", _BARE_END.sub("", text.strip())):
        piece = _BARE_END.sub("", piece).strip()
        if not piece or re.fullmatch(r"\$[\d,.]+|[\d.]+ stars?|then|and", piece):
            continue  # a budget or a rating: read by their units anyway
        if re.fullmatch(r"\d+", piece):
            k = int(piece)
        elif m := re.fullmatch(r"(\d+) days?", piece):
            days = int(m.group(1))
        elif re.fullmatch(r"[A-Z0-9][\w&.'/-]*(?: [\w&.'/-]+){0,4}", piece):
            names.append(piece)
        else:  # not a list of values: a sentence
            return None, None, []
    return k, days, names


_VALUE_END = re.compile(r"\s+(?:show|send|thx|pls|just|list|top)\b", re.I)
_KNOWN_LABELS = {"budget", "minimum rating", "delivery time", "number of options", "brand"}
_KNOWN_LABELS |= {"what matters most", "kind of product", "product", "price", "priority order"}


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
    shown = {str(v).lower() for v in card.get("key_attrs") or []}
    if label:
        return value.lower() in shown
    parts = value.lower().split()
    return any(" ".join(parts[i:]) in shown for i in range(1, len(parts)))


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


def utility(card: dict[str, Any], needs: Needs, scale: tuple[float, float, float, float]) -> float:
    """How much the customer likes a product by their stated weights (the verifier's formula).

    Price and shipping days are normalised over ``scale`` = (price_lo, price_hi, ship_lo,
    ship_hi): the anchors the customer stated (:meth:`Needs.scale`), else the range of the
    product kind's cards seen so far; the rating over the stars the customer stated, else 1–5.
    """
    w = needs.weights or EVEN
    lo, hi, slo, shi = scale
    price = (hi - float(card.get("price", 0))) / (hi - lo) if hi > lo else 1.0
    days = float(card.get("ship_days") or UNKNOWN_SHIP)
    ship = (shi - days) / (shi - slo) if shi > slo else 1.0
    brand = card.get("brand") or ""
    loyal = any(brand == b or (not brand and _titled(card, b)) for b in needs.brands)
    best, worst = needs.rating_anchors or FULL_RATING
    rated = float(card.get("rating", 0))
    rating = (rated - worst) / (best - worst) if best > worst else 1.0
    return w["price"] * price + w["rating"] * rating + w["ship"] * ship + w["brand"] * loyal


def span(items: list[dict[str, Any]]) -> tuple[float, float, float, float]:
    """(price_lo, price_hi, ship_lo, ship_hi) over ``items`` (the utility's scale)."""
    prices = [float(c.get("price", 0)) for c in items] or [0.0]
    days = [float(c["ship_days"]) for c in items if c.get("ship_days") is not None]
    days = days or [UNKNOWN_SHIP]
    return min(prices), max(prices), min(days), max(days)


def ranked(
    items: list[dict[str, Any]],
    needs: Needs,
    scale: tuple[float, float, float, float] | None = None,
) -> list[dict[str, Any]]:
    """Items best first by :func:`utility` (scale: the items' own range unless given)."""
    if not items:
        return []
    scale = scale or needs.scale(span(items))
    return sorted(items, key=lambda c: (-utility(c, needs, scale), c["product_id"]))


def of_category(
    items: list[dict[str, Any]], noun: str, anchor: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Items of the customer's category, read from the cards' ``category`` field.

    The category is the anchor's (the unavailable original) when its card was seen, else the
    one whose name is the customer's phrase ("Monitors", not "Baby Monitors"), else the one
    most title-matching cards (:func:`same_kind`) belong to. Empty when no card shows one.
    """
    named = [c for c in items if c.get("category")]
    if not named:
        return []
    if anchor is not None and anchor.get("category"):
        category = anchor["category"]
    else:
        exact = [c["category"] for c in named if words(c["category"]) == words(noun)]
        kind = [c["category"] for c in same_kind(named, noun)]
        votes = exact or kind
        if not votes:
            return []
        category = max(set(votes), key=lambda v: (votes.count(v), v))
    return [c for c in named if c["category"] == category]


def same_kind(items: list[dict[str, Any]], noun: str) -> list[dict[str, Any]]:
    """Items whose title names the product: the customer's commonest word and its usual company.

    Titles vary the noun ("Running Sneakers" for running shoes), so only the product word most
    shown titles contain is required, plus each other word of the customer's phrase that
    nearly all of those titles share ("dress" in dress shoes).
    """
    titles = [words(str(c.get("title", ""))) for c in items]
    counts = {w: sum(w in t for t in titles) for w in words(noun)}
    if not counts or max(counts.values()) == 0:
        return []
    head = max(counts, key=lambda w: (counts[w], w))
    with_head = [t for t in titles if head in t]
    need = {head} | {w for w in counts if sum(w in t for t in with_head) >= MOSTLY * len(with_head)}
    return [c for c, t in zip(items, titles, strict=True) if need <= t]


# --- the flow -----------------------------------------------------------------------------


QUESTION = (
    "What matters to you, and how much: a low price, a high rating, fast delivery, the brand? "
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
    rename: bool = False,
) -> Oracle:
    """Ask, search with every stated word, widen by brand, recommend the best k; two envs use it.

    Args:
        text: the customer's first message.
        query: the product words to search for.
        noun: the product word a fitting title names ("boots").
        exclude: product ids never to recommend (the unavailable original).
        anchor: the unavailable original, if known (never recommended).
        turns: the turns already used by the caller, if any.
        segments: "label value" requirements whose label is not known (``long_form_segments``).
        rename: whether ``query`` is the customer's name of a category, to be spelled as the
            cards spell it once a search shows it (:func:`renamed`).
    """
    turns = turns or Turns()
    needs = read_needs(text)
    needs.attrs += [(None, s) for s in segments]
    question = QUESTION + ("" if needs.k else " How many options would you like?")
    said = _query(query, needs)
    calls = [call("ask_user", question=question), call("catalog_search", query=said)]
    if anchor:  # the original's details name its category
        calls.append(call("catalog_get_product", product_id=anchor))
    answer, found, *details = yield from turns.run(calls, max_turns=1)
    needs.merge(read_needs(reply_text([answer or {}])))
    seen: dict[str, dict[str, Any]] = {}
    _see(seen, found)
    if rename:
        query = noun = renamed(noun, seen)
    kind = _category_of(details[0] if details else None)
    if kind and anchor:
        seen.setdefault(anchor, {**(details[0] or {}), "category": kind})
        query = noun = kind.lower()
    done = {said} if found else set()
    skip = exclude | ({anchor} if anchor else set())
    while turns.left() > 0:
        needs.merge(read_needs(" ".join(turns.said)))  # a change of mind said unprompted
        known = resolve_bare(needs, list(seen.values()))
        todo = [q for q in _queries(query, known, seen, noun, skip, anchor) if q not in done]
        if not todo:
            break
        batch = todo[: turns.budget or 1]
        results = yield from turns.run(
            [call("catalog_search", query=q) for q in batch], max_turns=1
        )
        for q, r in zip(batch, results, strict=True):
            if r is not None:
                done.add(q)
                _see(seen, r)
    needs.merge(read_needs(" ".join(turns.said)))
    picks = best(list(seen.values()), needs, noun, skip, seen.get(anchor or ""))
    if not picks:
        yield "Sorry, I found nothing that meets your requirements."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in picks])]
    yield "Here are my picks, best first: " + "; ".join(c["title"] for c in picks) + "."


def _category_of(details: dict[str, Any] | None) -> str | None:
    """The category a product's details name (the last level of its path), if shown."""
    path = str((details or {}).get("category") or "")
    return path.split(" > ")[-1] or None


def renamed(noun: str, seen: dict[str, dict[str, Any]]) -> str:
    """The customer's category as the cards name it, when they typo'd it ("ygoa mats").

    A category whose every word the customer's phrase holds exactly is already named right
    ("jeans from men's clothing" keeps its department); otherwise the card category the
    phrase names within typos (:func:`closest`) replaces it, so later searches and the
    category check use the store's spelling.
    """
    shown = sorted({str(c["category"]) for c in seen.values() if c.get("category")})
    said = words(noun)
    if any(words(c) <= said for c in shown):
        return noun
    return (closest(noun, shown) or noun).lower()


def _query(query: str, needs: Needs, *lead: str) -> str:
    """A search query: the lead words, the stated brand and attribute values, the product."""
    parts = [*lead, *needs.words(), query]
    return " ".join(dict.fromkeys(p for p in parts if p))


def _see(seen: dict[str, dict[str, Any]], result: dict[str, Any] | None) -> None:
    for c in cards([result or {}]):
        seen.setdefault(c["product_id"], c)


def _queries(
    query: str,
    needs: Needs,
    seen: dict[str, dict[str, Any]],
    noun: str,
    skip: set[str],
    anchor: str | None = None,
) -> list[str]:
    """Searches worth running next, most useful first.

    First the full query (a reply may have added a brand or a value), then one query per
    brand: the liked brands when the brand matters, then the brands of the best fitting
    products seen — more of a brand's products of this kind surface that way.
    """
    out = [_query(query, needs)]
    if needs.brand:
        return out
    if needs.weights and needs.weights.get("brand"):
        out += [_query(query, needs, b) for b in needs.brands]
    pool = _kind(list(seen.values()), noun, seen.get(anchor or ""))
    fits = ranked([c for c in pool if meets(c, needs) and c["product_id"] not in skip], needs)
    for c in fits or ranked(pool, needs):
        out.append(_query(query, needs, str(c.get("brand") or "")))
    return list(dict.fromkeys(out))


def _kind(
    items: list[dict[str, Any]], noun: str, anchor: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """The items of the wanted kind: by card category, else by title, else all of them."""
    return of_category(items, noun, anchor) or same_kind(items, noun) or items


def resolve_bare(needs: Needs, items: list[dict[str, Any]]) -> Needs:
    """``needs`` with each bare value read as a brand or an attribute value.

    A value is the brand when a card shows that brand, else an attribute value a card lists.
    """
    if not needs.bare:
        return needs
    brands = {str(c.get("brand", "")).lower(): str(c.get("brand")) for c in items}
    out = replace(needs, bare=[], attrs=list(needs.attrs))
    for value in needs.bare:
        if value.lower() in brands and not out.brand:
            out.brand = brands[value.lower()]
        elif value.lower() not in brands:
            out.attrs.append(("value", value))
    return out


def best(
    items: list[dict[str, Any]],
    needs: Needs,
    noun: str,
    skip: set[str],
    anchor: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The k best shown products of the right kind that meet every stated requirement."""
    needs = resolve_bare(needs, items)
    k = needs.k or 3
    kind = _kind(items, noun, anchor)
    kind = [c for c in kind if c["product_id"] not in skip]
    scale = needs.scale(span(kind))
    fits = ranked([c for c in kind if meets(c, needs)], needs, scale)
    if len(fits) < k:  # a stated value the cards do not show verbatim: loosen it
        loose = replace(needs, attrs=[])
        fits += ranked([c for c in kind if meets(c, loose) and c not in fits], needs, scale)
    return fits[:k]
