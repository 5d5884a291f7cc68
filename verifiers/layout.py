"""Which part of a journey's final message answers which request.

A journey's agent is told to answer in one paragraph per request, in order; grading each step
on its own paragraph keeps another step's numbers or dates from contradicting a policy or
status answer. Honest answers wrap that layout ("Here's what I found.", a heading above each
answer, "Take care!") or number it on single lines; :func:`texts` reads those layouts too.

Every reading here is a function of the text and of the steps' environments, which the agent
sees: never of the hidden answers. A layout that could be read two ways is read one fixed way,
so a hedge gets nothing from the reader that its plain layout would not get. When no reading
gives one part per step, every step is graded on the whole message, which is never easier
(more text, more conflicts).
"""

from __future__ import annotations

import re
from functools import lru_cache

from shopgen.verifiers.text import (
    TABLE_RULE,
    ZERO_WORDS,
    asserted_statuses,
    not_eligible_stated,
    numbers_stated,
    possible_statuses,
    refusal_reasons_stated,
    yes_no_stated,
    zero_stated,
)

_PARAGRAPHS = re.compile(r"\n\s*\n")
#: A paragraph that is only a heading: a Markdown heading, a bold line, or a short line ending
#: in a colon ("### Request 1", "**Order status**", "Your return:"). A bold heading may repeat
#: the request in full ("**The personal growth book I looked at this morning and …**").
_HEADING = re.compile(r"(?:#{1,6}\s+[^\n]*|\*\*[^\n*]{1,300}\*\*:?|[^\n.!?]{1,60}:)")
#: Words of a courtesy line (a greeting before the answers, an offer of help or a sign-off
#: after them).
_COURTESY = re.compile(
    r"\b(?:hi|hello|hey|dear|thanks|thank you|let me know|anything else|happy to help"
    r"|glad to help|hope (?:this|that|it) helps|feel free|happy shopping"
    r"|have a (?:great|good|nice|lovely|wonderful) day|here(?: is|'s) (?:everything|a summary"
    r"|an update|where)|sure|of course|certainly|absolutely|great news|good news|all done"
    r"|all set|cheers|regards|sincerely|best wishes|all the best|best(?=,\s*\n)|enjoy|hesitate"
    r"|reach out"
    r"|taken care of|handled|sorted|results of your)\b",
    re.IGNORECASE,
)
#: Most words a courtesy line has, as :func:`_aligned` prefers setting those aside.
COURTESY_WORDS = 20
#: Most words a line that answers nothing has ("Here's what I found.", a long sign-off).
FILLER_WORDS = 40
#: A number a line that answers nothing may hold ("your 3 requests"): one or two digits
#: standing alone, not part of an amount, a date, a time or an id.
_COUNTING = re.compile(r"(?<![\d$%/:.,#-])\d{1,2}(?![\d%/:.,-]?\d)(?!\s*%)")
#: A Markdown list line ("- …", "* …", "• …", "1. …", "2) …"); group 1 is a bullet's mark.
_LIST_LINE = re.compile(r"\s*(?:([-*•])|\d{1,2}[.)])\s+\S")
#: A list item's first line, not indented (an indented one is a nested list's).
_ITEM_LINE = re.compile(r"(?:[-*•]|\d{1,2}[.)])\s+\S")
#: The units a policy answer's number has (``text.numbers_stated``).
_UNITS = ("USD", "percent", "days", "months")
_RETURN_WORDS = re.compile(r"\b(?:return|exchange|refund)", re.IGNORECASE)
#: Steps whose verifiers read their part of the message; the others are graded on tool calls
#: (a cart, a list of recommendations), and their part may answer nothing in words.
TEXT_KINDS = frozenset({"policy", "status", "returns"})


@lru_cache(maxsize=4096)
def texts(final: str | None, kinds: tuple[str, ...]) -> tuple[str | None, ...]:
    """Each step's text, for steps of the environments ``kinds`` in order.

    Three readings of the message: its paragraphs; the same with headings joined to the
    paragraph they head and a list that a paragraph introduces with a colon joined to it
    even across blank lines ("Here are your picks:", a blank line, "- …"); and each list item
    as a part ("1. …" lines with no blank line between them). In each, lines around the
    answers that answer nothing (:func:`_aside`) are set aside where the parts outnumber the
    steps (:func:`_aligned`). Of the readings giving one part per step, the one that hands
    the fewest such lines to a step is taken ("Here's what I found.", a blank line, then
    "1. …" and "2. …" is two paragraphs for two steps, the first answering nothing), then
    the one whose parts look most like answers of their steps' kinds, then the earliest.
    Else the whole message for every step. Remembered: a pure function of the final
    message, which replays repeat.
    """
    n = len(kinds)
    paragraphs = [p for p in _PARAGRAPHS.split(final or "") if p.strip()]
    if len(paragraphs) == n and not any(map(_aside, paragraphs)):
        return tuple(paragraphs)
    best: tuple[tuple[int, ...], tuple[str, ...]] | None = None
    for order, parts in enumerate((paragraphs, _joined(paragraphs), _items(paragraphs))):
        aligned = _aligned(parts, kinds)
        if aligned is not None and (best is None or (*aligned[0], -order) > best[0]):
            best = ((*aligned[0], -order), aligned[1])
    return (final,) * n if best is None else best[1]


def _joined(paragraphs: list[str]) -> list[str]:
    """``paragraphs`` with headings and introduced lists joined to their paragraph."""
    joined: list[str] = []
    listing = None  # the mark of a list a colon introduced, while its items go on
    for i, part in enumerate(paragraphs):
        mark = _list_mark(part)
        if joined and _heading(paragraphs[i - 1]) and joined[-1] is paragraphs[i - 1]:
            joined[-1] = f"{joined[-1]}\n{part}"
            listing = mark  # a heading's list ("Your set:", a blank line, "- …") goes on
        elif joined and mark and (mark == listing or joined[-1].rstrip().endswith(":")):
            joined[-1] = f"{joined[-1]}\n{part}"
            listing = mark
        else:
            joined.append(part)
            listing = None
    return joined


def _items(paragraphs: list[str]) -> list[str]:
    """Each paragraph cut before every unindented line of its first list's kind: its items.

    A line that opens no such item stays with the item above it (a wrapped line, a list of
    another kind inside the item: "1. Your set:" over "- a lamp"); lines before a
    paragraph's first item are a part of their own ("Here is where things stand:").
    """
    parts: list[str] = []
    for paragraph in paragraphs:
        lines = paragraph.splitlines()
        kind = next((_item_kind(line) for line in lines if _item_kind(line)), None)
        current: list[str] = []
        for line in lines:
            if current and kind and _item_kind(line) == kind:
                parts.append("\n".join(current))
                current = []
            current.append(line)
        parts.append("\n".join(current))
    return [p for p in parts if p.strip()]


def _item_kind(line: str) -> str | None:
    """The kind of list item an unindented line opens (a bullet's mark, or "1"), or None.

    A Markdown table's row is an item too ("|"): "| 1 | Your order | In transit … |" answers
    one request as a list item does. Its rule ("|---|---|") stays with the header above it.
    """
    if line.startswith("|"):
        return None if TABLE_RULE.fullmatch(line) else "|"
    return _list_mark(line) if _ITEM_LINE.match(line) else None


def _aligned(
    parts: list[str], kinds: tuple[str, ...]
) -> tuple[tuple[int, int, int, int], tuple[str, ...]] | None:
    """One part per step, setting aside lines before and after the answers, with its rank.

    Where several ways of setting aside are possible ("Here's what I found." before the
    answers, "I've handled the rest." after them, one too many), the best by rank is taken
    (higher is better): fewest kept parts that answer nothing handed to steps that read
    their part (:data:`TEXT_KINDS`; :func:`texts` compares readings by it too), then kept
    parts most like answers of their steps' kinds (:func:`_fits`), then most courtesy set
    aside, then the earliest parts kept. None when no way gives one part per step. "Your
    cart is ready: 1 x …" answers nothing in words, and counted as such it made a bundle's
    list items the parts of three steps, handing the bundle's second item to a status step
    (a journey whose oracle failed, 100k, d = 5).
    """
    n, extra = len(kinds), len(parts) - len(kinds)
    if extra < 0:
        return None
    best: tuple[tuple[int, int, int, int], int] | None = None
    for lead in range(extra + 1):
        dropped = parts[:lead] + parts[lead + n :]
        if not all(_aside(p) for p in dropped):
            continue
        kept = parts[lead : lead + n]
        rank = (
            -sum(kind in TEXT_KINDS and _aside(p) for kind, p in zip(kinds, kept, strict=True)),
            sum(_fits(kind, p) for kind, p in zip(kinds, kept, strict=True)),
            sum(_courtesy(p) for p in dropped),
            -lead,
        )
        if best is None or rank > best[0]:
            best = (rank, lead)
    return None if best is None else (best[0], tuple(parts[best[1] : best[1] + n]))


def _heading(paragraph: str) -> bool:
    return _HEADING.fullmatch(paragraph.strip()) is not None


def _figure_free(paragraph: str) -> bool:
    """No amount, date, time or id: at most a count of one or two digits ("your 3 requests").

    A count of a policy's unit is a figure ("6 business days", "six percent").
    """
    return not any(c.isdigit() for c in _COUNTING.sub("", paragraph)) and not any(
        numbers_stated(paragraph, unit) for unit in _UNITS
    )


def _courtesy(paragraph: str) -> bool:
    """A short greeting or closing line ("Hi!", "Let me know if …"): it answers no request."""
    return len(paragraph.split()) <= COURTESY_WORDS and _COURTESY.search(paragraph) is not None


@lru_cache(maxsize=4096)
def _aside(paragraph: str) -> bool:
    """A line that answers no request ("Here's what I found.", "Take care!", "Hi!").

    No figure, and, its courtesy words left out ("Sure", "happy to help"), no yes or no, no
    order status, no zero said in words ("free") and no refusal: what the step verifiers
    read is not in it. "Sure, happy to help! No, you can't." holds an answer.
    """
    if len(paragraph.split()) > FILLER_WORDS or not _figure_free(paragraph):
        return False
    said = _COURTESY.sub(" ", paragraph)
    return not (
        yes_no_stated(said)
        or _status_said(said)
        or any(zero_stated(said, kind) for kind in ZERO_WORDS)
        or not_eligible_stated(said)
        or refusal_reasons_stated(said)
    )


def _status_said(text: str) -> bool:
    return bool(asserted_statuses(text) or possible_statuses(text))


def _fits(kind: str, part: str) -> bool:
    """The part reads like an answer of a step of ``kind`` (whose verifier reads text)."""
    if kind == "policy":
        return not _figure_free(part) or bool(yes_no_stated(part))
    if kind == "status":
        return _status_said(part)
    if kind == "returns":
        return _RETURN_WORDS.search(part) is not None or not_eligible_stated(part)
    return False


def _list_mark(paragraph: str) -> str | None:
    """The kind of list a paragraph opens with (a bullet's mark, or "1" for numbers), or None."""
    m = _LIST_LINE.match(paragraph)
    return None if m is None else m.group(1) or "1"
