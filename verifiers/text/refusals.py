"""A return refused in words: that the item is not eligible, and the reasons named."""

from __future__ import annotations

import re

from shopgen.verifiers.text.normalize import plain

#: Why a return is refused → words that state that reason.
REFUSAL_REASONS: dict[str, tuple[str, ...]] = {
    "window": (
        "return period",
        "too late",
        "expired",
        "has passed",
        "have passed",
        "had passed",
        "has ended",
        "has closed",
        "return limit",
    ),
    "final_sale": ("final sale", "final-sale", "clearance"),
    "perishable": ("perishable",),
    "personalised": (
        "personalised",
        "personalized",
        "custom-made",
        "custom made",
        "customised",
        "customized",
        "engraved",
        "monogrammed",
        "made to order",
        "made-to-order",
    ),
    "hygiene": (
        "hygiene",
        "personal care",
        "personal-care",
        "once opened",
        "sanitary",
        "health and safety",
    ),
}
#: The window named as still open ("even though you're within the 30-day return window"):
#: context for another reason, not the window as the reason.
_WINDOW_OPEN = re.compile(
    r"(?<!no longer )(?<!not )\b(?:still |well )?(?:within|inside|in) (?:the|your|its|our|this)"
    r"(?: \d+[- ]day)?(?: return)? (?:window|period)\b"
    # "your return window is still open", "the window hasn't closed", "doesn't apply".
    r"|\b(?:return )?window (?:is (?:still )?open|(?:hasn't|has not) (?:closed|expired|passed)"
    r"|(?:doesn't|does not) (?:apply|matter))\b"
    r"|\bregardless of (?:the|your) (?:return )?(?:window|period)\b"
)
_NOT_ELIGIBLE = re.compile(
    r"\b(?:not eligible|ineligible|isn't eligible|is not eligible|cannot be (?:returned|exchanged)"
    r"|can't be (?:returned|exchanged)|can not be (?:returned|exchanged)|not returnable"
    r"|unable to (?:return|exchange|accept)|no longer (?:be )?(?:returned|eligible|returnable)"
    r"|non-returnable|isn't returnable|aren't returnable|aren't eligible"
    r"|(?:can't|cannot|can not|won't be able to|unable to|not able to)"
    r" (?:\w+ ){0,2}?(?:return|exchange|accept|process|take|start|initiate|open|begin|submit)"
    r" (?:\w+ )?(?:return|exchange|it|them"
    r"|this|that|the item|back)"
    r"|(?:can't|cannot|can not|won't be able to|not able to) (?:be )?(?:return|exchange|taken back)"
    # "a return isn't possible", "it doesn't qualify for a return", "the return was declined".
    r"|(?:return|returning it|exchange|exchanging it) (?:is not|isn't|won't be|will not be|not)"
    r" possible|not possible to (?:return|exchange|send)"
    r"|(?:can't|cannot|can not) be sent back|excluded from (?:returns?|exchanges?)"
    r"|(?:can't|cannot|can not|don't|do not) refund"
    r"|(?<!not )(?:past|outside) (?:its|the|your|our) (?:\d+[- ]day )?return (?:window|period)"
    r"|window (?:to|for) (?:return|returning|exchange|exchanging)(?: (?!not\b|never\b|yet\b)\w+){0,4}?"
    r" (?:(?:is|was|has|had) )?(?:been )?(?:over|closed|ended|expired|passed)"
    r"|(?:wasn't|was not|weren't|were not|couldn't|could not) able to (?:\w+ ){0,2}?"
    r"(?:return|exchange|start|initiate|open|process|set up|submit) (?:\w+ )?(?:return|exchange|it|them)"
    r"|(?:does not|doesn't|do not|don't) qualify for (?:a |an )?(?:return|exchange|refund)"
    r"|(?:return|exchange)(?: request)? (?:(?:was|is|has been) )?(?:declined|refused|denied|rejected)"
    # The window told as over: "it's too late to return it", "the return period has ended".
    r"|(?<!not )(?<!n't )too late to (?:return|exchange|send)"
    r"|(?:return|exchange) (?:window|period)(?: (?!not\b|never\b|yet\b)\w+){0,4}?"
    r" (?:(?:is|was|has|had) )?(?:been )?(?:over|closed|ended|expired|passed)"
    # Returns refused as a rule: "we don't accept returns on this item", "returns aren't
    # accepted", "returns for this item are not possible", "it's non-refundable", "I can't
    # help with a return".
    r"|(?:don't|do not|doesn't|does not|won't|will not|can't|cannot|can not) (?:accept|allow"
    r"|take|offer|permit) (?:any )?(?:returns?|exchanges?)"
    r"|(?:returns?|exchanges?)(?: (?!but\b|and\b)[\w-]+){0,5}? (?:aren't|are not|isn't|is not"
    r"|won't be|will not be|can't be|cannot be) (?:accepted|allowed|possible|permitted"
    r"|available|an option)"
    r"|non-refundable|not refundable|isn't refundable|aren't refundable"
    # "It can't go back", "there's no return option", "no return possible".
    r"|(?:can't|cannot|can not|won't) (?:go|come|be sent|be taken) back"
    r"|no (?:return|exchange) (?:option|possible)|no (?:option|way) to (?:return|exchange)"
    r"|(?:can't|cannot|can not|unable to|not able to) help (?:you )?with (?:a |an |the |your |this )?"
    r"(?:return|exchange))\b",
    re.I,
)
#: A hedge in the clause before a refusal's words ("may not be eligible", "possibly because the
#: window has closed", "if the window has closed"): the refusal is not said.
_HEDGED = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|maybe|probably|likely|sometimes|if|unless|whether)\b"
    r"[^.,;:!?()\n]*$"
)


#: Reasons said in words :data:`REFUSAL_REASONS` cannot hold: a rule's limit as the reason
#: ("can only be returned within 15 days", "delivered more than 90 days ago"), "sold as
#: final", an engraving, an item opened (not "hasn't been opened") or health reasons.
_REFUSAL_PHRASES: dict[str, re.Pattern[str]] = {
    "window": re.compile(
        # "Outside our return policy" or "past the point where we can help" names no reason:
        # only the window, its days or its deadline after "outside"/"past"/"exceeds".
        r"\b(?:outside|past|exceeds?|exceeded|beyond) (?:the|its|our|your|this) (?:\d+[- ]days?"
        r"|(?:\d+[- ]day )?(?:return )?(?:window|period|time ?frame|limit|deadline))\b"
        r"|\bover \d+ days\b"
        r"|\b(?:deadline|beyond (?:the|its|our|your) \d*|no longer within"
        r"|(?:only|must) (?:be )?(?:returned|accepted|returnable|sent back|made) within"
        r"|(?:more|longer) than \d+ days (?:ago|since|after))\b"
        # The window as a limit: "our policy only allows returns within 15 days".
        r"|\b(?:only|must)(?: [\w-]+){0,3}? within \d+\b"
        # The window itself, not "Windows 11 Home" (a laptop's title, 1,035 of 100k products).
        r"|window(?!s\b)"
    ),
    "perishable": re.compile(r"\bfood(?:[- ]safety| items?| products?)\b|\bgrocer(?:y|ies)\b"),
    "final_sale": re.compile(r"\b(?:sold|marked)(?: as)? final\b"),
    "personalised": re.compile(
        r"\bengraving\b|\bmade (?:just |especially |specifically |only )?for you\b"
        r"|\bpersonali[sz]ation\b|\bcustomi[sz]ation\b|\bcustom\b"
        r"|\byour name (?:printed|engraved|embroidered|stitched|on it)\b"
    ),
    "hygiene": re.compile(
        r"(?<!not )(?<!n't )(?<!never )\b(?:been|is|was|it's|once it's) opened\b"
        r"|\bopened (?:\w+ )?(?:items?|products?|cosmetics|toiletries|ones)\b"
        # "opened shampoo can't be returned", "the seal has been broken".
        r"|\bopened (?!(?:the|a|an|your|my|our|this|that|it|them|up|on)\b)\w+ (?:can't|cannot"
        r"|can not|aren't|are not|isn't|is not|won't|may not)\b"
        r"|\bseal (?:\w+ ){0,2}?(?:broken|opened|removed)\b|\bbroken seal\b|\bunsealed\b"
        r"|\bhealth reasons\b|\bhygienic\b"
    ),
}
#: The faulty-item rule's exceptions ("can always be returned, even final-sale, perishable,
#: personalised or opened hygiene items"), as return_check_eligibility explains a faulty
#: item past its window: context, not reasons.
_FAULTY_EXCEPTIONS = re.compile(
    r"\b(?:returned|accepted|returnable|eligible)(?: for (?:a )?(?:return|refund))?,?"
    r" (?:[-–—] )?even (?:for |if (?:they(?:'re| are) |it(?:'s| is) )?)?[\w ,/'-]*?"
    r"\b(?:items|ones|products)\b"
)


#: The window stated as the store's rule ("returns are accepted within 30 days of delivery"):
#: the reason only with the time since delivery said (:data:`_ELAPSED`), else context ("returns
#: are accepted within 60 days; opened hygiene items are not").
_WINDOW_RULE = re.compile(
    r"\b(?:are|is) (?:only )?(?:accepted|allowed|permitted|possible) within \d+\b"
)
#: The time since delivery: "delivered 19 days ago", "it's been 35 days", "35 days since".
_ELAPSED = re.compile(
    r"\b\d+ days? (?:ago|since|have passed|has passed)\b|\b(?:it's|it has) been \d+ days?\b"
)


def refusal_reasons_stated(text: str, titles: tuple[str, ...] = ()) -> set[str]:
    """The refusal reasons (keys of :data:`REFUSAL_REASONS`) the text names.

    The return window named as still open is context, not the reason, and so are the
    faulty-item rule's exceptions. The window's rule with the days since delivery is the
    window as the reason. So is the item's name: each of ``titles`` (the product titles the
    answer may quote) and each comma-separated part of one is read as no words at all, so
    "Platform Bed, 7-Inch Under-Bed Clearance" names no clearance sale and "Engraved Bracelet"
    no engraving (1.5% of titles at 100k products hold a reason's words).
    """
    low = " ".join(plain(text).split())
    for title in titles:
        low = _without_title(low, title)
    low = _FAULTY_EXCEPTIONS.sub(" ", _WINDOW_OPEN.sub(" ", low))
    said = {
        k
        for k, pattern in _REASONS.items()
        if any(_said_as_reason(low, m.start()) for m in pattern.finditer(low))
    }
    if _WINDOW_RULE.search(low) and _ELAPSED.search(low):
        said.add("window")
    return said


def _without_title(low: str, title: str) -> str:
    """``low`` with ``title``, whole or any of its comma-separated parts, blanked out."""
    whole = " ".join(plain(title).split())
    parts = [p.strip() for p in whole.split(",")]
    for part in sorted({whole, *parts}, key=len, reverse=True):
        if len(part) > 3:
            low = low.replace(part, " ")
    return low


def _said_as_reason(low: str, at: int) -> bool:
    """The reason's words at ``at`` are said as the reason: neither negated nor hedged.

    "It wasn't a final-sale item" names no final sale, and "probably because the window has
    passed" is a guess at the reason, which names none.
    """
    return not (
        _NEGATED_REASON.search(low, max(0, at - 24), at) or _HEDGED.search(low, max(0, at - 80), at)
    )


#: Each reason's words and phrases as one pattern (:data:`REFUSAL_REASONS` are substrings).
_REASONS = {
    k: re.compile(
        "|".join(
            [re.escape(w) for w in words]
            + ([_REFUSAL_PHRASES[k].pattern] if k in _REFUSAL_PHRASES else [])
        )
    )
    for k, words in REFUSAL_REASONS.items()
}
#: A negation right before a reason's words: "not a final-sale item", "isn't personalised".
_NEGATED_REASON = re.compile(
    r"(?:\bnot|n't|\bnever|\bno)\s+(?:(?:a|an|the|really|exactly|actually)\s+)?$"
)


def not_eligible_stated(text: str) -> bool:
    """The text tells the customer the item cannot be returned or exchanged.

    Said, not hedged: words of refusal after "may", "possibly", "if" … in the same clause
    ("it may not be eligible, possibly because the window has closed") leave it open.
    """
    low = " ".join(plain(text).split())
    return any(
        not _HEDGED.search(low, max(0, m.start() - 60), m.start())
        for m in _NOT_ELIGIBLE.finditer(low)
    )
