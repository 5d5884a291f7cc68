"""Yes and no in a policy answer: said as the word, or as what the customer can or cannot do."""

from __future__ import annotations

import re

from shopgen.verifiers.text.normalize import LEFT_OPEN, plain

_INTERJECTION = (
    r"(?:unfortunately|sadly|regrettably|fortunately|happily|good news|great news|sorry"
    r"|i'm sorry|i am sorry|i'm afraid|i am afraid|actually|well|so)"
)
#: A list item's marker at the start of a line or sentence: "3)", "(3)", "b)", "3 -" ("3."
#: ends a sentence already). Not after a decimal point: "$4.50 - no fee" lists nothing.
_LIST_MARKER = r"(?:^|\n|[.!?:;]\s)\W*(?:\(?(?:\d{1,2}|[a-h])\)|\d{1,2}\s*[-\u2013\u2014])"
_YES_NO = re.compile(
    rf"(?:{_LIST_MARKER}|^|[.!?:;|\n\u2013\u2014]\s*|\s-\s+|\banswer is\s+|\b(?:that|it|this) is a\s+"
    r"|,\s*(?:and|so|but)\s+|\b(?:or|and)\s+(?:(?:maybe|possibly|perhaps|probably|even)\s+)?"
    rf"|\b{_INTERJECTION}\W+(?:but\s+)?)\W*(yes|yeah|yep|yup|no|nope)\b"
    r"(?![\s-]+(?:problem|worries|worry)\b)"
    # "No" before a word opens a sentence about something ("No receipt is needed", "No
    # doubt"), unless the word begins the answer's reason ("No, you can't", "No it isn't")
    # or its condition ("No if the item was used": a no, for that case).
    r"(?!(?<=no)[^\S\n]+(?!(?:sorry|unfortunately|i|i'm|you|it|that|this|we|they|there|not|and|or|but"
    r"|thanks|thank|ma'am|sir|way|longer|sadly|regrettably|afraid|if|unless|when|once"
    r"|otherwise)\b)\w)",
    re.I,
)
_YES_WORDS = frozenset({"yes", "yeah", "yep", "yup"})
#: Sentence openers that say yes or no without the word ("Absolutely, …", "I'm afraid not").
_YES_NO_WORDS = re.compile(
    r"(?:^|[.!?:;\n]\s*)\W*(absolutely|certainly|definitely|of course|sure)\b"
    rf"|\b({_INTERJECTION}\W+not|i'm afraid not|i am afraid not)\b",
    re.I,
)


_ALLOW = (
    r"(?:return|use|get|choose|select|request|have|ship|match|adjust|offer|accept|allow"
    r"|qualify|apply|do|refund|send|schedule|take|drop)"
)
_STATE = r"(?:available|eligible|allowed|offered|possible|returnable|permitted|accepted)"
_NOT = (
    r"(?:can't|cannot|can not|won't|will not|aren't|are not|isn't|is not|not|don't|do not"
    r"|doesn't|does not|unable to|no longer)"
)
#: What is done to the thing asked about, said in the passive ("it can't be returned"): only
#: these, since "you won't be charged" or "it won't be delayed" beside a yes is no "no".
_DONE = (
    r"(?:returned|exchanged|refunded|accepted|done|matched|price-matched|adjusted|shipped|used|applied"
    r"|sent back"
    r"|combined|redeemed|honou?red|granted|approved)"
)
#: A no said as what the customer cannot do ("you can't return it", "that isn't available",
#: "we can't price-match it"), as a negated passive ("it can't be returned", "that can't be
#: done"), as "non-returnable" or as no option ("that isn't an option").
_SAID_NO = re.compile(
    rf"\b{_NOT}\s+(?:be\s+able\s+to\s+|be\s+|able\s+to\s+)?(?:\w+[\s-]+)??(?:{_ALLOW}|{_STATE})\b"
    r"|\b(?:can't|cannot|can not)\b(?=\s*(?:[.!,;)]|$))"
    rf"|\b{_NOT}\s+be\s+{_DONE}\b"
    r"|\bnon-(?:returnable|refundable)\b|\b(?:not|isn't|aren't) an option\b"
    r"|\bmeans no (?:returns|refunds|exchanges)\b"
    # "that's not something we can offer": the "we can offer" in it is no yes.
    rf"|\b(?:not|isn't|aren't) (?:something|anything|one)\s+(?:that\s+)?(?:we|you)\s+"
    rf"(?:can|could|are able to)\s+(?:\w+[\s-]+)??{_ALLOW}\b"
)
#: A yes said as what the customer can do ("you can return it", "it's available to you"), or
#: as the order or item qualifying ("your order qualifies").
_SAID_YES = re.compile(
    rf"\b(?:you|we)(?:'ll|\s+(?:can|may|will|are able to|will be able to))\s+(?!not\b|never\b)"
    rf"(?:\w+[\s-]+)??{_ALLOW}\b"
    r"|\b(?:you|we)\s+(?:sure|certainly|definitely|absolutely|surely)\s+can\b(?=\s*(?:[.!,]|$))"
    rf"|\b(?:is|are)\s+(?:(?!not\b|never\b)\w+\s+)??{_STATE}\b"
    r"|\b(?:you|it|order|item|purchase|this|that)\s+(?:\w+\s+)??qualif(?:y|ies)\b"
    # What is done to the thing asked about, in the passive ("it can be returned").
    rf"|\b(?:it|they|this|that|item|items|order|purchase|price)\s+(?:can|may)\s+"
    rf"(?:still\s+|also\s+)?be\s+{_DONE}\b"
)


def yes_no_stated(text: str) -> set[bool]:
    """The yes/no answers the text gives.

    A sentence that opens with "Yes" or "No" (after an interjection too: "Unfortunately, no",
    "Good news, yes"), or with "Absolutely"/"I'm afraid not". Without any, what the customer
    can or cannot do ("you can't return it", "that option isn't available") is the answer,
    and saying both is no answer. What follows "whether", "it depends" or "I can't say" in
    its clause is left open (:data:`LEFT_OPEN`), and a yes offered after a no as what the
    customer can do instead ("… isn't an option. You can still send it back by mail,
    though.") is no yes.
    """
    low = re.sub(r"\b(it|that|this|there)'s\b", r"\1 is", plain(text)).replace("'re ", " are ")
    said = {m.lower() in _YES_WORDS for m in _YES_NO.findall(low)}
    stated = bool(said)
    for yes, _no in _YES_NO_WORDS.findall(low):
        # Beside a stated answer, "Sure!" or "Of course!" is courtesy ("Sure! Unfortunately,
        # no, …" read as yes and no); "I'm afraid not" is still a no.
        if not (yes and stated):
            said.add(bool(yes))
    if said:
        return said
    no = [m.span() for m in _SAID_NO.finditer(low) if _said(low, m.start())]
    yes = [
        m
        for m in _SAID_YES.finditer(low)
        if _said(low, m.start())
        and not any(
            a <= m.start() < b
            or _INSTEAD.fullmatch(low, b, m.start())
            or (b <= m.start() and _INSTEAD_AFTER.search(_sentence(low, m.start())))
            for a, b in no
        )
    ]
    return ({False} if no else set()) | ({True} if yes else set())


#: Between a no and a later yes in the same sentence, "but" offers the yes as what the customer
#: can do instead: "Pickup isn't offered, but you can return it by mail" is a no.
_INSTEAD = re.compile(r"[^.!?\n]*\bbut\b[^.!?\n]*")
#: A later sentence that offers what the customer can do instead of what a no refused: "You
#: can still send it back by mail, though."
_INSTEAD_AFTER = re.compile(r"\b(?:still|instead|though|however|alternatively)\b")


def _said(low: str, at: int) -> bool:
    """The answer at ``at`` is not left open by its clause (:data:`LEFT_OPEN`)."""
    return LEFT_OPEN.search(low, max(0, at - 60), at) is None


def _sentence(low: str, at: int) -> str:
    """The sentence of ``low`` that holds position ``at``."""
    start = max(low.rfind(mark, 0, at) for mark in ".!?\n") + 1
    ends = [i for i in (low.find(mark, at) for mark in ".!?\n") if i >= 0]
    return low[start : min(ends, default=len(low))]
