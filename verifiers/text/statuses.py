"""Order statuses an answer asserts, offers as possible, or tells as history.

A status counts as asserted when it follows a verb or a "status" label ("is delivered",
"has shipped", "status: cancelled"), so narrative mentions ("the order you placed on March
1") assert nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

from shopgen.verifiers.text.normalize import plain, zeroed

#: Status → the words that assert it.
STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "placed": ("placed", "received", "confirmed"),
    "processing": (
        "processing",
        "being processed",
        "being prepared",
        "being packed",
        "picked and packed",
    ),
    "shipped": ("shipped", "dispatched"),
    "in_transit": ("in transit", "in-transit", "out for delivery"),
    "delivered": ("delivered", "arrived"),
    "cancelled": ("cancelled", "canceled"),
}
#: Words true of an order that has shipped and is not delivered yet, whichever of the two
#: statuses the store shows: "it has shipped and is on its way" tells a shipped order's status.
UNDER_WAY = "under_way"
_UNDER_WAY_WORDS = (
    "on its way",
    "on the way",
    "en route",
    "heading your way",
    "headed your way",
    "making its way",
)
#: Statuses whose words may accompany another status without contradicting it.
COMPATIBLE: dict[str, frozenset[str]] = {
    "shipped": frozenset({UNDER_WAY}),
    "in_transit": frozenset({"shipped", UNDER_WAY}),
    "delivered": frozenset({"shipped"}),
}
#: An order's statuses in the order it passes through them (``shopgen.gen.world``).
_LIFECYCLE = ("placed", "processing", "shipped", "in_transit", "delivered")
#: The stages an order of each status has passed through: told in the past tense ("it was
#: placed on March 1 and was delivered on the 4th") they are its history, not a rival status.
#: A cancelled order was cancelled before it shipped.
HISTORY: dict[str, frozenset[str]] = {
    **{status: frozenset(_LIFECYCLE[:i]) for i, status in enumerate(_LIFECYCLE)},
    "delivered": frozenset({*_LIFECYCLE[:4], UNDER_WAY}),
    "cancelled": frozenset({"placed", "processing"}),
}
#: Words leading a status ("is shipped", "status: delivered", "shows as processing"). "Are" and
#: "were" lead only after the order's items ("your items are being packed", "both were
#: delivered"): "orders are typically delivered in 3-5 days" is no order's status.
_LEAD = (
    r"(?:\bis\b|\bwas\b|\bhas\b|\bhave\b|\bbeen\b|\bgot\b|'s\b|\bstatus\b\s*(?:is|:)?"
    r"|\bcurrently\b|\bnow\b|\balready\b|\b(?:items|they|both)\s+(?:are|were)\b"
    r"|\b(?:shows?|shown|showing|listed|marked)\s+(?:(?:it|the|your|this)\s+(?:\w+\s+)?)?as\b)"
)
#: What the order is called when it is the subject of a bare past verb ("your order shipped",
#: "the package arrived on March 4"): history told in the past tense.
_SUBJECT = r"\b(?:order|package|parcel|shipment|it|item|items)"
#: Who moves the order, as the subject of a bare past verb: "UPS delivered it on February 20",
#: "we shipped your order on February 28".
_MOVER = r"\b(?:ups|usps|fedex|fed ex|ontrac|the carrier|the courier|the driver|we)"
#: An order id written after the order's name ("order 356-1234567-1234567 arrived"), digits
#: zeroed as the statuses are read (:func:`zeroed`).
_ORDER_ID = r"(?:\s+#?\d[\d-]*\d)?"

#: Blanks between words of one line.
_GAP = r"[^\S\n]+"
#: What follows a present perfect told as history: "and" and a present clause that is no
#: negation ("has been placed and is being processed"; not "… and is not processed yet",
#: where "has been placed" is the status now).
_THEN_NOW = (
    r"(?=,?\s+and\s+(?:(?:it|is|has|'s|now|currently|already|still)\b\s*)+"
    r"(?!not\b|never\b|yet\b|\w*n't\b)\w)"
)


def _assertion(words: tuple[str, ...]) -> re.Pattern[str]:
    """One status's words as one regex: after a lead ("is", "has been" …), after "status".

    Or offered as an alternative ("… or delivered", "in transit/delivered"): a hedge over
    statuses asserts them all. Or right after the order as a bare past verb ("your order
    shipped", "order 356-… arrived", "your order (placed March 1)": an order id or a bracket
    may stand between), after who moved it
    ("UPS delivered it"), after "and" ("it shipped on March 1 and arrived on the 4th"), or
    opening a line (a bullet, an emoji or a list's number: "- Delivered: March 4", "✅
    Delivered", "3. Delivered", "Still processing"): these tell what happened, in the past,
    and so does the present perfect "has been …" followed by "and" and a present clause
    ("has been placed and is being processed" tells the order's history, then its status;
    "has been placed and is not processed yet" tells its status). A lead may end in a colon
    ("is: Processing"), and a heading may set the status after the order by a dash or a
    colon ("Order 123 — In transit", "Order 123 → Delivered"). "Shows as"/"listed
    as"/"marked as" lead too.
    """
    alts = "|".join(re.escape(w) for w in words)
    return re.compile(
        rf"(?P<past>\bha(?:s|ve)\s+(?:(?:already|now)\s+)?been\s+(?:{alts})\b{_THEN_NOW}"
        rf"|(?:{_SUBJECT}{_ORDER_ID}|\band|{_MOVER})\s+\(?(?:{alts})\b"
        rf"|^[^\w\n]*(?:\d{{1,2}}[.)]\s+)?(?:(?:still|currently|now)\s+)?(?:{alts})\b)"
        # Within the line: "Status: Cancelled" says nothing of a "Placed: …" line below it.
        rf"|{_LEAD}:?(?:{_GAP}\w+){{0,2}}?{_GAP}(?:{alts})\b|\bstatus\b[^.\n]{{0,20}}\b(?:{alts})\b"
        rf"|\bor\b(?:{_GAP}\w+){{0,2}}?{_GAP}(?:{alts})\b|(?<=\w)\s*/\s*(?:{alts})\b"
        rf"|\b(?:order|package|parcel|shipment){_ORDER_ID}\s*(?:[:|\u2013\u2014\u2192]|\s-|->|=>)"
        rf"\s*(?:{alts})\b"
        rf"|{_EVENT_LEAD}(?:{alts})\b(?={_DATED.pattern})",
        re.M,
    )


#: What starts a date ("28 feb", "feb 28", "2026-02-28", "friday"; digits may be zeroed).
_DATE_START = (
    r"(?:\d|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s(?:day)?)?"
    r"|wed(?:nesday)?|thu(?:rs(?:day)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|today"
    r"|yesterday)\b)"
)
#: A date right after a status's word: "placed 28 Feb 2026", "| Placed | Feb 20 |", "cancelled
#: on Feb 21" tell when it happened, history (a later status may be the order's now).
_DATED = re.compile(rf"[^\S\n]*(?:[|:][^\S\n]*)?(?:on[^\S\n]+)?{_DATE_START}")
#: A status's word opening a clause of a list of events, dated: "placed 20 Feb, cancelled 21
#: Feb" asserts both (in the past).
_EVENT_LEAD = r"(?<=[,;|\u2013\u2014])[^\S\n]*"

_WORDS = {**STATUS_WORDS, UNDER_WAY: _UNDER_WAY_WORDS}
_ASSERTIONS = {status: _assertion(tuple(words)) for status, words in _WORDS.items()}
#: Words that guess at a status rather than state it.
_GUESS = r"(?:probably|likely|possibly|perhaps|maybe)"
#: A negation, a condition, a modal or a guess in an assertion's words or just before them
#: ("has not been", "hasn't been", "if it has shipped", "should have arrived", "was probably
#: delivered"): nothing is asserted. The order was looked up; a guess at its status states
#: none.
_NEGATED = re.compile(
    r"\bnot\b|n't\b|\bnever\b|\byet to\b|\bif\b|\bonce\b|\bunless\b|\bshould\b|\bwould\b"
    r"|\bcould\b|\bmight\b|\bwill\b|\bbefore\b|\buntil\b|\bsoon as\b|\bnothing\b"
    r"|\bno (?:package|parcel|shipment|order|item)s?\b"
    rf"|\b{_GUESS}\b"
)
#: A negated status right before an alternative joined to it: "it won't be shipped or delivered"
#: negates both (the negation is further back than :data:`_NEGATION_REACH`).
_NEGATED_BEFORE_OR = re.compile(
    r"(?:\bnot|n't|\bnever)\s+(?:(?:be|been|get|got|have been|yet)\s+)?(?:"
    + "|".join(re.escape(w) for words in STATUS_WORDS.values() for w in words)
    + r"|processed|prepared|packed|picked)\s*,?\s*$"
)
#: A status negated after its word, as a list or a table says it: "Shipped — not yet",
#: "Delivered: pending", "Shipped: No".
_NEGATED_AFTER = re.compile(
    r"[^\S\n]*(?:[:\u2013\u2014]|\s-)?[^\S\n]*(?:not yet|not started|pending|n/a"
    r"|(?:no|none)\b[^\S\n]*(?=\n|$|[.,;|(]))"
)
#: A modal earlier in the clause of a status joined by "and" ("should be shipped and
#: delivered by March 5"): the joined status is as unasserted as the first.
_MODAL_CLAUSE = re.compile(
    r"\b(?:should|would|could|might|may|will|expected to|going to|yet to)\b[^.;:!?\n]*$"
)
#: How many characters before an assertion a negation still negates it, within its sentence:
#: "No, it's not lost. UPS delivered it on February 20" asserts delivered.
_NEGATION_REACH = 12
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def _negation_window(low: str, at: int) -> int:
    """Where a negation before ``at`` may start: :data:`_NEGATION_REACH` back, in its sentence."""
    start = max(0, at - _NEGATION_REACH)
    ends = [m.end() for m in _SENTENCE_END.finditer(low, start, at)]
    return ends[-1] if ends else start


#: Rewrites before the statuses are read. Words that look like a status's but are not the
#: order's: the agent telling what it did ("I have confirmed …", "we've received your
#: question"), the customer receiving it ("I hope you've received it" is no order just
#: placed), the delivery being confirmed ("delivery is confirmed for March 6"), and an order
#: "being delivered" (it is on its way). A stage the order waits for ("awaiting processing",
#: "ready to be shipped") is not its status yet; the store doing a stage's work ("we're
#: preparing your order", "we are processing it") is the order being processed. And a
#: status said without its word: "delivery was completed", "it reached you" (delivered), "it
#: has left our warehouse" (shipped).
class _Rewrite(NamedTuple):
    pattern: re.Pattern[str]
    repl: str
    #: Substrings the pattern cannot match without: most answers hold none, and a substring
    #: test costs less than a regex scan of the whole answer.
    needs: tuple[str, ...]


_REWRITES = (
    _Rewrite(
        re.compile(r"\bwe(?:'ve| have)? (?:received|got) your order\b"),
        "your order was received",
        ("your order",),
    ),
    _Rewrite(
        re.compile(r"\b(?:i|we)(?:'ve| have)? (?:confirmed|received|checked)\b"),
        "i looked",
        ("confirmed", "received", "checked"),
    ),
    _Rewrite(
        re.compile(r"\byou(?:'ve| have| had)?(?: already| now)? received\b"),
        "you got",
        ("received",),
    ),
    _Rewrite(
        re.compile(r"\bdelivery (?:is |was |has been )?(?:confirmed|scheduled)\b"),
        "delivery noted",
        ("delivery",),
    ),
    _Rewrite(
        re.compile(r"\bdelivery (was|has been|is) (?:successfully )?completed?\b"),
        r"it \1 delivered",
        ("delivery",),
    ),
    _Rewrite(
        re.compile(r"\b(?:reached|got to) you\b|\breached (?:its|the|your) destination\b"),
        "arrived",
        ("reached", "got to"),
    ),
    _Rewrite(
        re.compile(r"\bhanded (?:over )?to you\b|\bdropped off by\b"),
        "delivered by",
        ("handed", "dropped off"),
    ),
    _Rewrite(
        re.compile(r"\bhanded (?:over )?to (?:ups|usps|fedex|ontrac|the carrier|the courier)\b"),
        "shipped with",
        ("handed",),
    ),
    _Rewrite(
        re.compile(r"\bmoving through (?:the |their )?(?:[\w ]+ )?network\b"),
        "in transit",
        ("network",),
    ),
    # A status quoted as the store names it: "it is in 'placed' status".
    _Rewrite(re.compile(r"(?<!\w)'([a-z][a-z _-]*)'(?!\w)"), r"\1", ("'",)),
    _Rewrite(
        re.compile(r"\bleft (?:our|the|its) (?:warehouse|fulfil?l?ment (?:center|centre))\b"),
        "shipped",
        ("left",),
    ),
    _Rewrite(re.compile(r"\bbeing delivered\b"), "in transit", ("being delivered",)),
    # An order waiting to be processed is placed: "it's in the queue waiting to be processed".
    _Rewrite(
        re.compile(
            r"\b(?:(?:in (?:the|a) queue|queued)[^\S\n]+(?:for|to be|waiting (?:for|to be))"
            r"|awaiting|pending|waiting (?:for|to be))[^\S\n]+process(?:ing|ed)\b"
        ),
        "placed",
        ("awaiting", "pending", "waiting", "queue"),
    ),
    # Not processed yet, said of the order: "it hasn't even been processed" (not of its
    # refund: "the refund hasn't been processed" tells nothing of a cancelled order's stage).
    _Rewrite(
        re.compile(
            r"\b(?:it|order|items?|they)[^\S\n]+(?:hasn't|has not|haven't|have not)[^\S\n]+"
            r"(?:even[^\S\n]+|yet[^\S\n]+)?been[^\S\n]+processed"
            r"(?:[^\S\n]+(?:or|and|nor)[^\S\n]+(?:shipped|dispatched|sent))?\b"
        ),
        "it is placed",
        ("processed",),
    ),
    _Rewrite(
        re.compile(
            r"\b(?:awaiting|pending|waiting (?:for|to be)|ready (?:for|to be)|about to be"
            r"|queued (?:for|to be)|in the queue for)"
            r" (?:processing|processed|shipment|shipping|shipped|dispatch|dispatched|delivery"
            r"|delivered)\b"
        ),
        "waiting",
        ("awaiting", "pending", "waiting", "ready", "about to be", "queue"),
    ),
    _Rewrite(
        re.compile(
            r"\bwe(?:'re| are) (?:currently |now |still )?(?:preparing|processing|packing"
            r"|getting (?:it|your order|your items|everything) ready)\b"
        ),
        "it is being prepared",
        ("we're", "we are"),
    ),
)


def _status_text(text: str) -> str:
    low = plain(text)
    for rewrite in _REWRITES:
        if any(need in low for need in rewrite.needs):
            low = rewrite.pattern.sub(rewrite.repl, low)
    return _table_statuses(low) if "|" in low else low


def _table_statuses(low: str) -> str:
    """``low`` with each Markdown table cell under a "Status" heading led by "status".

    "| 441-… | In Transit |" under "| Order | Status |" states the status as "status: in
    transit" does; the cell alone has no lead word (83 of 260 table answers failed). Only a
    table's first row heads it: in "| Field | Detail |" rows, "| Status | Cancelled |" is a
    row, and the rows below it ("| Placed | Feb 20 |") are no statuses.
    """
    lines = low.split("\n")
    column = None
    header = True  # the next table row is a table's first
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            column, header = None, True
            continue
        cells = line.split("|")
        if header:
            column = next((j for j, c in enumerate(cells) if c.strip() == "status"), None)
            header = False
        elif (
            column is not None
            and column < len(cells)
            and not set(cells[column].strip()) <= set("-: ")
        ):
            cells[column] = f" status {cells[column].strip()} "
            lines[i] = "|".join(cells)
    return "\n".join(lines)


def asserted_statuses(text: str) -> set[str]:
    """The order statuses the text asserts (see the module docstring).

    A status offered as an alternative counts as asserted ("has shipped, or maybe was
    delivered" asserts both, so a hedge over statuses contradicts itself), and a negated one
    does not ("it has not been cancelled", "hasn't been delivered yet" assert nothing about
    cancellation or delivery). Words true of both shipped and in-transit orders ("on its
    way") assert neither alone.
    """
    return set(_statements(text)) - {UNDER_WAY}


def _statements(text: str) -> Mapping[str, bool]:
    """Each asserted status, and whether every assertion of it is in the past tense ("was …").

    Read once per text with digits zeroed (:func:`zeroed`); the mapping is shared, read-only.
    """
    return _statements_of(zeroed(text))


#: An alternative inside one assertion: "was delivered or in transit" offers "in transit" as
#: the order's status now, not as its history (read as history, it passed for a delivered
#: order: 20 of 39 delivered orders, 5k products, d = 0–12).
_OFFERED = re.compile(r"\bor\b")


@lru_cache(maxsize=4096)
def _statements_of(text: str) -> Mapping[str, bool]:
    low = _status_text(text)
    said = {}
    for status, pattern in _ASSERTIONS.items():
        # A cheap substring test first: the regex cannot match without one of the words.
        if not any(w in low for w in _WORDS[status]):
            continue
        past = [
            (m.group(0).startswith("was ") and not _OFFERED.search(m.group(0)))
            or m.group("past") is not None
            or _DATED.match(low, m.end()) is not None
            for m in pattern.finditer(low)
            if not _NEGATED.search(low, _negation_window(low, m.start()), m.end())
            and not (m.group(0).startswith("and") and _MODAL_CLAUSE.search(low, 0, m.start()))
            and not _NEGATED_AFTER.match(low, m.end())
            and not (
                m.group(0).startswith("or")
                and _NEGATED_BEFORE_OR.search(low, max(0, m.start() - 40), m.start())
            )
        ]
        if past:
            said[status] = all(past)
    return MappingProxyType(said)


def _possibility(words: tuple[str, ...]) -> re.Pattern[str]:
    """One status's words said as a possibility about the order now.

    "It might have been delivered already", "it may have shipped", "it could already be
    delivered", "it may also be shipped by now", "it might still be in transit": a perfect
    after "may/might/could", or "be" with "already", "still" or "by now". Not a future event
    ("it could be delivered tomorrow") and not a negation ("it may not have shipped").
    "Delivered on February 20, though it might still be in transit" passed for a delivered
    order. A status guessed at ("probably delivered", "or possibly already processing") is
    offered as possible too: asserted it is not (:data:`_NEGATED`), and beside another status
    it is a hedge.
    """
    alts = "|".join(re.escape(w) for w in words)
    modal = r"\b(?:may|might|could)\s+(?:(?:also|well|even|very|actually|really)\s+)*"
    return re.compile(
        rf"{modal}(?:already\s+)?have\s+(?:already\s+)?(?:been\s+)?(?:{alts})\b"
        rf"|{modal}(?:already|still)\s+be\s+(?:{alts})\b"
        rf"|{modal}be\s+still\s+(?:{alts})\b"
        rf"|{modal}be\s+(?:already\s+)?(?:{alts})\b(?=[^.;!?\n]{{0,30}}\b(?:already|by now)\b)"
        rf"|\b{_GUESS}\s+(?:(?:already|still|now|been|be)\s+)*"
        rf"(?:{alts})\b"
    )


_POSSIBILITIES = {status: _possibility(tuple(words)) for status, words in _WORDS.items()}


@lru_cache(maxsize=4096)
def _possible_of(text: str) -> frozenset[str]:
    low = _status_text(text)
    return frozenset(
        status
        for status, pattern in _POSSIBILITIES.items()
        if any(w in low for w in _WORDS[status]) and pattern.search(low)
    )


def possible_statuses(text: str) -> frozenset[str]:
    """The statuses the text says the order may have now (:func:`_possibility`).

    Not assertions (:func:`asserted_statuses` keeps the reading its fast paths are checked
    against), but a status offered as possible is offered: "it is in transit (it might have
    been delivered already)" hedges over two statuses, as "in transit or delivered" does.
    """
    return _possible_of(zeroed(text))


def _denial(words: tuple[str, ...]) -> re.Pattern[str]:
    """One status's words denied of the order: "it hasn't shipped yet", "not yet shipped".

    Group ``now``: denied as a state the order is not in now ("it isn't in transit", "it's
    not processing"), which a later stage makes true; else denied as a stage never reached.
    Not "isn't in transit anymore" (it was), "wasn't delivered late" or "hasn't been shipped
    back" (said of something else than the status).
    """
    alts = "|".join(re.escape(w) for w in words)
    return re.compile(
        rf"(?:(?P<now>(?:\b(?:is|are)|'s)(?:n't|\s+not)\s+(?:currently\s+|still\s+)?)"
        rf"|(?:\b(?:has|have|had|is|are|was|were|did|does|do)|'s)(?:n't|\s+not|\s+never)"
        rf"\s+(?:(?:yet|been|be|even|actually)\s+)*|\bnot\s+yet\s+|\bnever\s+)(?:{alts})\b"
        r"(?!\s+(?:back|late|early|on time|to the wrong|separately|damaged)\b)"
        r"(?![^.;!?\n]{0,30}\b(?:anymore|any more|any longer)\b)"
    )


#: Statuses that are states the order is in for a while: "isn't in transit" of a delivered
#: order is true. The others are events: "isn't shipped (yet)" says it never was.
_STATES = frozenset({"processing", "in_transit"})


_DENIALS = {status: _denial(tuple(words)) for status, words in STATUS_WORDS.items()}
#: A condition earlier in the clause of a denial: "if it hasn't shipped by Friday" denies nothing.
_CONDITION_CLAUSE = re.compile(r"\b(?:if|unless|once|in case|until|whether|when)\b[^.;:!?\n]*$")


@lru_cache(maxsize=4096)
def _denied_of(text: str) -> Mapping[str, bool]:
    low = _status_text(text)
    if "n't" not in low and " not " not in low and "never" not in low:
        return MappingProxyType({})
    denied: dict[str, bool] = {}
    for status, pattern in _DENIALS.items():
        if not any(w in low for w in STATUS_WORDS[status]):
            continue
        for m in pattern.finditer(low):
            if not _CONDITION_CLAUSE.search(low, max(0, m.start() - 80), m.start()):
                now = m.group("now") is not None and status in _STATES
                denied[status] = denied.get(status, True) and now
    return MappingProxyType(denied)


def denied_statuses(text: str) -> Mapping[str, bool]:
    """The statuses the text denies of the order, each with whether only as a state now.

    "It hasn't shipped yet" says the order never reached shipped; "it isn't in transit"
    only that it is not in transit now (``True``). Denying a stage the order has passed
    contradicts it: "in transit … Note: the order hasn't shipped yet" states two orders'
    statuses, not one.
    """
    return _denied_of(zeroed(text))


def status_stated(text: str, truth: str) -> bool:
    """The text asserts ``truth`` and no status that contradicts it.

    Compatible statuses (shipped, for an order in transit or delivered) may be asserted in any
    tense; the stages before ``truth`` (:data:`HISTORY`) only in the past tense, as history:
    "it has been placed and is not processed yet" claims a current status. Words true of any
    order under way ("it's on its way") state a shipped or an in-transit order's status. A
    status said to be possible now (:func:`possible_statuses`) must be compatible too: a hedge
    over statuses states a wrong one. And the order must not be said not to have reached
    ``truth``, a compatible status or a stage before it (:func:`denied_statuses`).
    """
    said = _statements(text)
    allowed = COMPATIBLE.get(truth, frozenset())
    history = HISTORY.get(truth, frozenset())
    passed = allowed | history
    if any(
        status == truth or (status in passed and not now)
        for status, now in denied_statuses(text).items()
    ):
        return False
    stated = truth in said or (UNDER_WAY in said and UNDER_WAY in allowed and not said[UNDER_WAY])
    return (
        stated
        and all(
            status == truth or status in allowed or (past and status in history)
            for status, past in said.items()
        )
        and all(status == truth or status in allowed for status in possible_statuses(text))
    )
