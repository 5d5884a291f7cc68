"""Reading a cart request: the items, quantities, variants and history references it names.

Customers word a cart request as ``<opener> <items> <closer>`` (``templates/cart/first.j2``),
each item ``[N x ]<desc>[ (label value, …)][ [id]][, the one I looked at <when>]`` and the
items joined by commas and "and", or listed as "- item - item". Typos and chat shorthand
touch everything but quantities, brands and variant values (those are written exactly), so
the template words are found by a fuzzy match and product words are compared loosely
(``common.near``). Nothing here reads more than the text the agent was shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from shopgen.policies.heuristic.common import PRODUCT_RE, near

#: How the request opens (``templates/cart/first.j2``, and journey's "Please add to my cart").
OPENERS = (
    "add to cart:",
    "cart:",
    "put",
    "hi! i'm getting a few things sorted for the week and i'd love your help. could you add",
    "hey, so i've finally made up my mind, haha. i want",
    "okay, shopping time! my list is:",
    "hello, could you please add",
    "good evening. i would like to order",
    "hi, i hope you're well. please add the following to my cart:",
    "add",
    "just put",
    "i need",
    "hello, please you add in my cart",
    "good day, i want to buy",
    "hi, for me please the cart with",
    "need",
    "please add to my cart",
)
#: How it closes (after the last item).
CLOSERS = (
    "to my cart? that would be amazing!",
    ". can you pop them into my cart for me?",
    "could you put all of that in the cart?",
    "to my cart? thank you.",
    ". would you kindly place them in my cart?",
    "many thanks.",
    "to the cart. now.",
    "in my cart, fast.",
    "in my cart right away, no questions.",
    ". can you put in cart for me?",
    ". thank you very much.",
    "to cart pls",
    "thx",
    "in cart asap",
    "in my cart.",
    "to my cart.",
    ".",
)
#: When the customer looked at an item, as they say it, and how many hours ago that is.
SEEN_WHEN = {
    "this morning": 3,
    "yesterday": 26,
    "two days ago": 50,
    "three days ago": 74,
    "last week": 170,
}
#: Share of a template phrase's letters a stretch of the message must match to count as it.
PHRASE_MATCH = 0.8
#: How a history reference opens, spaces taken out: ", the one I looked at yesterday" in a
#: cart request, "the video game I looked at yesterday" in a journey's cart step.
SEEN_OPENERS = ("theoneilookedat", "ilookedat")
_QTY = re.compile(r"^\s*(\d+)\s*(?:[xzcsd×]{1,2}\s+|\s)", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3})(?!\w|\.\d)")
_PAIR = re.compile(r"\b(?:quantity|qty|units?)\b\W*(?:is|should be|is now|→)?\s*(\d+)", re.I)


@dataclass
class Wanted:
    """One cart line as the customer described it (and what they said about it since).

    Attributes:
        desc: the words that name the product (brand, line, noun; typos possible).
        qty: how many units, None while the customer has not said.
        said: everything the customer said about its variant (first message, answers).
        product_id: an id the customer gave, if any.
        when: when they looked at it ("yesterday"), for items named by the visit history.
        changes: variant values a change of mind set (they outrank what was said before).
    """

    desc: str
    qty: int | None = None
    said: str = ""
    product_id: str | None = None
    when: str | None = None
    changes: list[str] = field(default_factory=list)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens with a plural ``s`` stripped (words of one letter dropped)."""
    return [w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1]


def match_score(desc: str, title: str) -> float:
    """Share of ``desc``'s words that ``title`` holds, a typo'd word counting 0.8."""
    want = tokens(desc)
    have = set(tokens(title))
    if not want:
        return 0.0
    got = 0.0
    for w in want:
        if w in have:
            got += 1.0
        elif any(near(w, h) for h in have):
            got += 0.8
    return got / len(want)


def corrected(desc: str, titles: list[str]) -> str:
    """``desc`` with each typo'd word replaced by the shown word it most likely meant.

    A search for the words as the customer typed them may miss the product; the cards it
    did show spell the store's words correctly, so a second search with those finds it.
    """
    vocab = sorted({t for title in titles for t in re.findall(r"[A-Za-z0-9'-]+", title)})
    out = []
    for word in desc.split():
        low = word.lower().strip(",.")
        if any(v.lower() == low for v in vocab):
            out.append(word)
            continue
        best = max(
            vocab,
            key=lambda v: SequenceMatcher(None, low, v.lower()).ratio(),
            default=None,
        )
        ok = best is not None and near(low.rstrip("s"), best.lower().rstrip("s"))
        out.append(best if ok else word)
    return " ".join(out)


def _phrase_end(text: str, phrases: tuple[str, ...], *, tail: bool = False) -> int:
    """Length of the longest template phrase heading (or ending, ``tail``) ``text``.

    Each phrase is compared with stretches a few letters shorter or longer (typos delete and
    insert letters); the stretch that matches it best counts, so a phrase never swallows the
    first letters of the item after it.
    """
    low = text.lower()
    best = 0
    for phrase in phrases:
        n = len(phrase)
        ratio, size = (
            max(
                (
                    SequenceMatcher(None, low[-k:] if tail else low[:k], phrase).ratio(),
                    -abs(k - n),
                    k,
                )
                for k in range(max(1, n - 3), min(len(low), n + 3) + 1)
            )[0::2]
            if len(low) >= max(1, n - 3)
            else (0.0, 0)
        )
        if ratio < PHRASE_MATCH or size <= best:
            continue
        after = low[-size - 1 : -size] if tail else low[size : size + 1]
        if n > 6 or not after or not after.isalnum():  # "add" does not open "adriatic"
            best = size
    return best


#: Chat shorthand the opener and closer phrases may carry, back to the template's words.
_LONGHAND = (
    (re.compile(r"\b4(?=\s+me\b)", re.I), "for"),
    (re.compile(r"\bpls\b", re.I), "please"),
    (re.compile(r"\bty\b", re.I), "thank you"),
    (re.compile(r"\bw/(?=\s)", re.I), "with"),
    (re.compile(r"\bu\b", re.I), "you"),
)


def longhand(text: str) -> str:
    """``text`` with the customer's chat shorthand written out (template words only)."""
    for pattern, word in _LONGHAND:
        text = pattern.sub(word, text)
    return text


def item_span(text: str) -> str:
    """The part of a request that lists the items (its opener and closer taken off)."""
    body = longhand(" ".join(text.split()))
    body = body[_phrase_end(body, OPENERS) :].strip()
    for _ in range(2):  # "to my cart? Thank you." closes in two phrases at most
        cut = _phrase_end(body, CLOSERS, tail=True)
        if not cut:
            break
        body = body[:-cut].rstrip(" ,")
    return body.strip()


_SEP = re.compile(r"\s*,\s*|\s+and\s+", re.I)
#: A word that may be a typo'd "and" ("andd", "amd", "nd", "adn").
_SEP_QTY = re.compile(r"\s+[a-z]{2,4}\s+", re.I)
_GROUP = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def _split_outside(text: str) -> list[str]:
    """``text`` split at commas and "and" that are not inside a closed bracket group."""
    inside = [(m.start(), m.end()) for m in _GROUP.finditer(text)]
    parts, last = [], 0
    cuts = [m for m in _SEP.finditer(text)]
    cuts += [m for m in _SEP_QTY.finditer(text) if similar_and(m.group(0).strip())]
    for m in sorted(cuts, key=lambda m: m.start()):
        if m.start() < last or any(a < m.start() < b for a, b in inside):
            continue
        parts.append(text[last : m.start()])
        last = m.end()
    parts.append(text[last:])
    return [p.strip(" ,") for p in parts if p.strip(" ,-")]


def similar_and(word: str) -> bool:
    """Whether ``word`` is "and" with one typo ("andd", "amd", "nd", "adn"), not "an" or "ad".

    The typo model (``gen/noise.py``) deletes, doubles, inserts or swaps one letter, or types
    a neighbouring key; each of those is one edit (a swap one transposition) away.
    """
    w = word.lower()
    if w in ("and", "an", "ad") or not 2 <= len(w) <= 4:
        return False
    if len(w) == 3:
        diff = sum(a != b for a, b in zip(w, "and", strict=True))
        return diff == 1 or sorted(w) == sorted("and")
    if len(w) == 4 and not w.startswith("a"):
        return False  # "band", "hand", "sand" are words of their own
    short, long_ = sorted((w, "and"), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def split_items(span: str) -> list[str]:
    """The item phrases of the items part, in order."""
    if span.lstrip().startswith("-"):
        chunks = [c.strip() for c in re.split(r"(?:^|\s)-+\s+", span) if c.strip(" -")]
    else:
        chunks = _split_outside(span)
    items: list[str] = []
    for chunk in chunks:
        if items and _history_tail(chunk):
            items[-1] += ", " + chunk  # ", the one I looked at …" belongs to the item before
        else:
            items.append(chunk)
    return items


def _history_tail(chunk: str) -> bool:
    """Whether ``chunk`` is ", the one I looked at …" (of the item before), typos allowed.

    The whole opening is compared, not its first letters: a journey names history items as
    "the motor oil I looked at this morning", whose "the mo…" looks like "the one".
    """
    head = re.sub(r"[^a-z]", "", chunk.lower())[: len(SEEN_OPENERS[0])]
    return SequenceMatcher(None, head, SEEN_OPENERS[0]).ratio() >= 0.75


def seen_when(text: str) -> str | None:
    """Which :data:`SEEN_WHEN` phrase ``text`` says ("the one I looked at yesterday")."""
    low = " ".join(text.lower().split())
    best, when = 0.0, None
    for phrase in SEEN_WHEN:
        n = len(phrase)
        ratio = max(
            (SequenceMatcher(None, low[i : i + n], phrase).ratio() for i in range(len(low))),
            default=0.0,
        )
        if ratio > best:
            best, when = ratio, phrase
    return when if best >= 0.7 else None


def seen_at(text: str) -> int | None:
    """Where a history reference ("the one I looked at …") starts in an item phrase, if any.

    The word start whose next letters best match the reference's opening words wins (typos
    break any exact pattern; the best match keeps "Inch), the one" from cutting at "Inch").
    """
    low = text.lower()
    best, where = 0.0, None
    for opener, floor in zip(SEEN_OPENERS, (0.7, 0.75), strict=True):
        for m in re.finditer(r"(?<![a-z])[a-z]", low):
            if m.start() == 0:
                continue
            head = re.sub(r"[^a-z]", "", low[m.start() : m.start() + 24])[: len(opener)]
            ratio = SequenceMatcher(None, head, opener).ratio()
            # The short opener ("I looked at", two typos in "I oooked zt") counts only when
            # a time follows it: product words rarely look like both.
            timed = opener != SEEN_OPENERS[-1] or seen_when(low[m.start() :]) is not None
            if ratio >= floor and ratio > best and timed:
                best, where = ratio, m.start()
        if where is not None:
            return where
    return None


def parse_item(chunk: str) -> Wanted:
    """One item phrase read into a :class:`Wanted`."""
    text = chunk.strip()
    pid = PRODUCT_RE.search(text)
    when = None
    at = seen_at(text)
    if at is not None:
        when = seen_when(text[at:])
        text = text[:at]
    qty = None
    q = _QTY.match(text)
    if q and int(q.group(1)) > 0:
        qty, text = int(q.group(1)), text[q.end() :]
    said = " ".join(re.findall(r"\(([^)]*)\)?", text))
    desc = re.split(r"[(\[]", text, maxsplit=1)[0]
    desc = re.sub(r"\s*\b(?:thx|pls|ty)\b\s*$", "", desc, flags=re.I)
    desc = re.sub(r"^\s*(?:the|teh|hte|th|he|thw|tge|tje|rhe|yhe)\s+", "", desc, flags=re.I)
    return Wanted(
        desc=" ".join(desc.split()).strip(" ,.-"),
        qty=qty,
        said=said,
        product_id=pid.group(0) if pid else None,
        when=when,
    )


def parse_request(text: str) -> list[Wanted]:
    """The items of a cart request, in the order the customer listed them."""
    return [w for w in map(parse_item, split_items(item_span(text))) if w.desc or w.product_id]


def reply_quantity(reply: str, values: list[str]) -> int | None:
    """The quantity a reply states ("the quantity is 3", or a bare "3" beside the values).

    Variant values may hold digits ("US 9"), so the values the reply names are taken out
    before a bare number is read as the quantity.
    """
    pair = _PAIR.search(reply)
    if pair:
        return int(pair.group(1))
    rest = reply
    for v in sorted(values, key=len, reverse=True):
        if v and v in rest:
            rest = rest.replace(v, " ")
    nums = [int(n) for n in _NUMBER.findall(rest) if 0 < int(n) < 100]
    return nums[0] if len(nums) == 1 else None


def variant_score(variant: dict[str, Any], said: str, changes: list[str]) -> tuple[int, int]:
    """How well a variant fits what was said: (axes a change names, axes the words name)."""
    attrs = {k: str(v) for k, v in (variant.get("attributes") or {}).items()}
    return (
        sum(any(_names(c, v) for c in changes) for v in attrs.values()),
        sum(_names(said, v) for v in attrs.values()),
    )


def _names(text: str, value: str) -> bool:
    """Whether ``text`` says ``value`` as whole words (values are written exactly)."""
    return bool(value) and re.search(rf"(?<![\w.]){re.escape(value)}(?!\w|\.\d)", text) is not None


def axes_unsaid(variants: list[dict[str, Any]], said: str) -> list[str]:
    """Axes on which the variants differ and ``said`` names none of their values."""
    out = []
    axes = sorted({k for v in variants for k in (v.get("attributes") or {})})
    for axis in axes:
        values = {str(v["attributes"].get(axis)) for v in variants if v.get("attributes")}
        if len(values) > 1 and not any(_names(said, x) for x in values):
            out.append(axis)
    return out


#: How a change of mind says what it does to one item (``env.user.naming.naming_the_item``): a new
#: description replaces a named one, an extra item comes "as well", a value is "for" an item.
_INSTEAD, _AS_WELL, _FOR = "instead of the", "as well", " for the "


def _find(text: str, phrase: str) -> tuple[int, int] | None:
    """Where ``phrase`` stands in ``text`` typed with a typo or two: the best matching span."""
    low, n = text.lower(), len(phrase)
    best: tuple[float, int, int] | None = None
    for i in range(len(low)):
        if i and low[i - 1].isalnum():
            continue  # a phrase starts a word
        for k in range(max(1, n - 2), n + 3):
            ratio = SequenceMatcher(None, low[i : i + k], phrase).ratio()
            if ratio >= PHRASE_MATCH and (best is None or ratio > best[0]):
                best = (ratio, i, i + k)
    return None if best is None else best[1:]


def read_change(value: str) -> tuple[str, str, str]:
    """What a changed value does: ``(kind, new words, the item it is about)``.

    ``kind`` is "swap" ("X instead of the Y"), "add" ("X as well"), "variant" ("Blue for the
    desk lamp") or "" (a value alone).
    """
    if _FOR in value:  # variant values are written exactly, typos never touch them
        new, item = value.split(_FOR, 1)
        return "variant", new.strip(), item.strip()
    at = _find(value, _INSTEAD)
    if at is not None:
        return "swap", value[: at[0]].strip(), value[at[1] :].strip()
    cut = _phrase_end(value, (_AS_WELL,), tail=True)
    if cut:
        return "add", value[:-cut].strip(), ""
    return "", value.strip(), ""
