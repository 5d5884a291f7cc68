"""Numbers a policy answer states: money, percentages, spans of time, zero said in words."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable

from shopgen.verifiers.text.normalize import COUNT_UNIT, LEFT_OPEN, digits, plain

_NUM = r"(\d[\d,]*(?:\.\d+)?)"
_MONEY_RE = (
    re.compile(rf"\$\s?{_NUM}"),
    re.compile(rf"\b{_NUM}\s*(?:dollars?|usd)\b", re.I),
    re.compile(rf"\busd\s?{_NUM}", re.I),
)
#: "N%", "N percent", "N-percent", "N per cent", "N pct" (and the fullwidth sign).
_PERCENT = r"[\s-]*(?:[%\uff05]|percent\b|per cent\b|pct\b)"
_PERCENT_RE = re.compile(rf"\b{_NUM}{_PERCENT}", re.I)
#: "full" between a count and its unit: "two full years", "30 full days".
_FULL = r"(?:full[\s-]+)?"
_DAYS_RE = re.compile(
    rf"\b{_NUM}[\s-]*{_FULL}(?:calendar[\s-]+|business[\s-]+|working[\s-]+)?"
    # "Two-day shipping" names a method, not how long this delivery takes.
    r"(?:days\b|day\b(?![\s-]*(?:shipping|delivery|air|express|service)\b))",
    re.I,
)
_WEEKS_RE = re.compile(rf"\b{_NUM}[\s-]*{_FULL}weeks?\b", re.I)
_MONTHS_RE = re.compile(rf"\b{_NUM}[\s-]*{_FULL}(?:months?\b|mos?\b\.?)", re.I)
_YEARS_RE = re.compile(rf"\b{_NUM}[\s-]*{_FULL}(?:years?|yrs?)\b(?!\s*membership)", re.I)

#: What joins the numbers of a range or of alternatives ("6-12", "5–7", "8 to 10", "6 or 12").
#: A hyphen may stand before the word: "1- or 2-year".
_JOIN = r"\s*(?:[-\u2010-\u2015]|(?:[-\u2010-\u2015]\s*)?(?:\bto\b|\bor\b|\bthrough\b|\bthru\b))\s*"
#: A bare number right before a range's last number: "6-" of "6-12 months", "between 34.99
#: and " of "between 34.99 and 39.99 dollars". Not a number glued to another token ("#2-",
#: "2026-03-06 -", "3/6-"): those are ids and dates, not a range's first value.
_RANGE_LEFT = re.compile(
    rf"(?:(?<![\w.,$#/\-]){_NUM}{_JOIN}|\bbetween\s+{_NUM}\s+and\s+)(?:\$\s?)?$", re.I
)
#: A range's later numbers after a money amount whose sign comes first ("$49.00–54.00",
#: "between $30 and 35"): the sign applies to them too.
_RANGE_RIGHT = re.compile(
    rf"(?:{_JOIN}|\s+(?P<and>and)\s+)(?:\$\s?)?{_NUM}(?![\d.,]*\d)(?!{COUNT_UNIT})", re.I
)
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)


def _range_values(text: str, m: re.Match[str], *, leading: bool = False) -> list[str]:
    """The number ``m`` read (group 1), with the other numbers of the range it ends or starts.

    A unit written once applies to every number of a range or of alternatives: "6-12 months",
    "6 or 12 months", "8 to 10 business days", "between 34.99 and 39.99 dollars" state both
    numbers, so a hedge over values holds a wrong one (the unit on the last number carries
    back to the earlier ones). With ``leading`` (a unit written before its number: "$", "USD")
    the numbers after it carry it too ("$49.00–54.00").
    """
    raws = [m.group(1)]
    end = m.start()
    while left := _RANGE_LEFT.search(text, max(0, end - 40), end):
        raws.append(left.group(1) or left.group(2))
        end = left.start()
    if leading:
        between = _BETWEEN.search(text, max(0, m.start() - 12), m.start()) is not None
        at = m.end()
        while (right := _RANGE_RIGHT.match(text, at)) and (between or not right.group("and")):
            raws.append(right.group(2))
            at, between = right.end(), False
    return raws


def _floats(
    patterns: tuple[re.Pattern[str], ...],
    text: str,
    scale: float = 1.0,
    *,
    leading: bool = False,
    keep: Callable[[re.Match[str], str], bool] | None = None,
) -> list[float]:
    """Every number ``patterns`` read, with the ranges they end or start (:func:`_range_values`).

    With ``keep``, only the matches it keeps.
    """
    out = []
    for pattern in patterns:
        for m in pattern.finditer(text):
            if keep is not None and not keep(m, text):
                continue
            for raw in _range_values(text, m, leading=leading):
                with contextlib.suppress(ValueError):
                    out.append(float(raw.replace(",", "")) * scale)
    return out


#: A percentage said as the share paid back ("90% back", "90% of the price back", "90%
#: refunded", "a 90% refund", "refund of 90%", "you'd receive 90% of the price"): group 1,
#: 2 or 3 is the share.
_OF_THE_PRICE = (
    r"\s+of\s+(?:(?:the\s+|your\s+|its\s+)?(?:\w+\s+)?"
    r"(?:price|cost|purchase|amount|total|money|payment)|what\s+you\s+(?:paid|spent)"
    r"|(?:the|your)\s+\$\s?[\d,]+(?:\.\d+)?)"
)
_REFUND_SHARE_RE = re.compile(
    # On one line: "Restocking fee: 10%" over "Refund: $443.25" is a fee and an amount.
    rf"\b{_NUM}{_PERCENT}(?:{_OF_THE_PRICE})?"
    r"[^\S\n]+(?:(?:is|are|will\s+be|gets?|comes?|goes?)[^\S\n]+)?"
    r"(?:back|refunded|refund(?!\s+(?:fee|charge|deduction))|returned to you)\b"
    rf"|\brefund(?:ed)?:?\s+\(?(?:of\s+)?(?:the\s+)?(?:remaining\s+|other\s+)?{_NUM}{_PERCENT}"
    rf"|\bremaining\s+{_NUM}{_PERCENT}"
    rf"|\b(?:receive|get|recover|be paid)\s+(?:back\s+)?{_NUM}{_PERCENT}{_OF_THE_PRICE}",
    re.I,
)


#: A share of the price paid, which leaves a discount of the rest: "so you pay 95% of the usual
#: price" states a 5% discount.
PAID_SHARE_RE = re.compile(
    rf"\b(?:pay|paying|charged|be charged)\s+(?:only\s+|just\s+)?{_NUM}{_PERCENT}", re.I
)


def fee_percents_stated(text: str, share: re.Pattern[str] = _REFUND_SHARE_RE) -> list[float]:
    """The percentage fees the text states, a share paid back read as the fee it leaves.

    "A 10% restocking fee, so you get 90% back" states a 10% fee twice, not a second,
    conflicting 90% one. Only for a fee: "10% back" on a discount is the discount, whose
    share is the one paid (``share``: :data:`PAID_SHARE_RE`).
    """
    text = digits(text)
    fees: list[float] = []
    shares: list[tuple[int, int]] = []
    for m in share.finditer(text):
        shares.append(m.span())
        with contextlib.suppress(ValueError):
            paid = next(g for g in m.groups() if g)
            fees.append(100.0 - float(paid.replace(",", "")))
    for m in _PERCENT_RE.finditer(text):
        if not any(a <= m.start() < b for a, b in shares):
            for raw in _range_values(text, m):
                with contextlib.suppress(ValueError):
                    fees.append(float(raw.replace(",", "")))
    return fees


def numbers_stated(text: str, unit: str | None, *, derived: bool | None = None) -> list[float]:
    """Every value of ``unit`` the text states (``USD``, ``percent``, ``days``, ``months`` …).

    Money is a ``$`` amount, "N dollars" or "USD N"; percentages "N%" or "N percent"; days
    any "N days" (business or calendar) or, for calendar days, "N weeks" (×7); months
    "N months" or "N years" (×12). A count may be written in words ("fifteen percent", "a
    one-year warranty", "forty-five (45) days", "ninety-nine dollars"); "a month" is not 30
    days. Values of other units are ignored, so "within 30 days for $5.99" states one day
    count and one amount, and a yearly fee's monthly share ("$8.25 a month") is no yearly fee.

    With ``derived`` True, only the values told as arithmetic on the answer (:data:`_DERIVED`:
    "$35.51 back", "bringing your total to $27.99", "35 days left"); with False, only the
    others; with None, all.
    """

    def keep(m: re.Match[str], told: str) -> bool:
        if unit == "USD/year" and _PER_MONTH.match(told, m.end()):
            return False
        return derived is None or _is_derived(told, m, unit) == derived

    if unit in ("USD", "USD/year"):
        if "dollar" in (low := text.lower()) or "cent" in low:
            text = digits(text)
        # "$N" and "USD N" carry their sign forward, "N dollars" back.
        return _floats((_MONEY_RE[0], _MONEY_RE[2]), text, leading=True, keep=keep) + _floats(
            (_MONEY_RE[1],), text, keep=keep
        )
    text = digits(text)
    if unit == "percent":
        return _floats((_PERCENT_RE,), text, keep=keep)
    if unit == "days":
        return _floats((_DAYS_RE,), text, keep=keep) + _floats((_WEEKS_RE,), text, 7.0, keep=keep)
    if unit == "business days":
        return _floats((_DAYS_RE,), text, keep=keep)
    if unit == "months":
        return _floats((_MONTHS_RE,), text, keep=keep) + _floats(
            (_YEARS_RE,), text, 12.0, keep=keep
        )
    return _floats((re.compile(rf"\b{_NUM}\b"),), text, keep=keep)


#: A money amount's "a month" ("1 month" once number words are digits), "/mo", "monthly".
_MONTHLY = r"(?:(?:an?|1|per|each|every|/)\s*(?:month|mo)|monthly)"
#: Words that tell a value is arithmetic on the answer, not the answer, by unit: before it
#: (within its line) or right after it. Money: a refund left after a fee ("$35.51 back",
#: "Refund after fee: $35.51"), a total with shipping ("bringing your total to $27.99"), the
#: rest to a threshold ("add $13.00 more", "$29.00 over the minimum"), a monthly share. Days:
#: what is left of a window ("35 days left", "Remaining: 27 days", "in the next 35 days").
_DERIVED: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "USD": (
        re.compile(
            r"(?:\b(?:refund(?:ed)?|back|(?:grand |new )?total|subtotal|add(?:ing)?|another"
            r"|leaves you|leaving(?: you)?|bringing|brings|comes to|works out to|net)\b|=)"
            # Only label words between: "Refund after fee: $35.51", "bringing your total to
            # $27.99", not "your total exceeds the $35 threshold".
            r"(?:[\s:*]|\b(?:after|the|fees?|with|shipping|of|is|would|will|be|to|a|about"
            r"|roughly|only|just|your|order|it|you)\b)*$",
            re.I,
        ),
        re.compile(
            r"[^\S\n]*(?:back|more|over|short|left|remaining|in refunds?|refunded"
            rf"|{_MONTHLY})\b",
            re.I,
        ),
    ),
    "days": (
        re.compile(
            r"\b(?:remaining|left|the next|another|still have|leaves you(?: with)?"
            r"|leaving you(?: with)?)\b[\s:*\u2013\u2014-]*(?:about |roughly |only |just )?$",
            re.I,
        ),
        re.compile(r"[\s-]+(?:left|remaining|remain|remains|to go|from (?:today|now))\b", re.I),
    ),
}
_DERIVED["USD/year"] = _DERIVED["USD"]
#: A money amount per month (``USD/year`` answers are yearly).
_PER_MONTH = re.compile(rf"[^\S\n]*{_MONTHLY}\b", re.I)


def _is_derived(text: str, m: re.Match[str], unit: str | None) -> bool:
    """The value ``m`` read is told as arithmetic on the answer (:data:`_DERIVED`)."""
    if unit not in _DERIVED:
        return False
    before, after = _DERIVED[unit]
    line = text.rfind("\n", 0, m.start()) + 1
    return bool(
        before.search(text, max(line, m.start() - 60), m.start()) or after.match(text, m.end())
    )


#: A discount or warranty said to be none by a pronoun, the question having named it: "you
#: won't get one", "it doesn't come with one", "there isn't one", "you don't qualify for it".
_NONE_OF_IT = (
    r"|\b(?:won't|will not|wouldn't|would not|don't|do not|doesn't|does not|can't|cannot)"
    r" (?:get|receive|qualify for|come with|include|carry|be eligible for) (?:one|it)\b(?! of)"
    r"|\bthere (?:isn't|is not|won't be|will not be) (?:one|any)\b(?! of)|\bthere(?:'s| is) none\b"
)
#: What states a value of zero without a number, by what the value is: a fee or cost ("it's
#: free", "there's no restocking fee"), a threshold for something free ("free on any order"),
#: a discount ("no bulk discount"), a warranty ("no store warranty").
ZERO_WORDS: dict[str, re.Pattern[str]] = {
    "fee": re.compile(
        r"(?<!feel )(?<!toll-)\bfree\b(?! to\b)|\bno (?:[\w-]+ ){0,3}?(?:charge|fee|cost)s?\b"
        r"|\bat no (?:extra |additional )?cost\b|\b(?:won't|will not|not) be charged\b"
        r"|\bwaived\b|\bcosts? nothing\b|\bnothing to pay\b|\bcomplimentary\b|\bon us\b"
        r"|\b(?:won't|will not|doesn't|does not|don't|do not) (?:have to |need to )?(?:cost|pay"
        r"|charge)(?: you)? (?:anything|a thing|a cent|a penny|a dime)\b"
        r"|\bcosts? you nothing\b|\b(?:fee|charge|cost|price): none\b|\bzero dollars\b"
        r"|\b(?:won't|will not|don't|do not) (?:have|need) to pay\b"
        r"|\b(?:won't|will not|don't|do not) pay (?:for|anything)\b|\bon the house\b",
        re.I,
    ),
    "threshold": re.compile(
        r"\b(?:any|every|all) orders?\b|\bno minimum\b|\bregardless of (?:the |your )?order\b"
        r"|\bno matter (?:how much|what|the)\b|\bof any (?:amount|size|value|total)\b"
        r"|\bregardless of (?:how much|the amount|what)\b|\bon everything\b"
        r"|\balways (?:get|gets|qualify for|qualifies for|receive|receives|have|has) free\b",
        re.I,
    ),
    "discount": re.compile(
        r"\bno (?:\w+ )?discount\b|(?:\bnot|n't) (?:be )?(?:eligible|qualify) for (?:a|any)\b"
        r"|(?:\bnot|n't) (?:be )?(?:eligible|qualify) for (?:\w+ )?discounts?\b|\bfull price\b"
        r"|\bdiscounts? (?:doesn't|does not|don't|do not|won't|will not) apply\b"
        r"|\b(?:doesn't|does not|don't|do not|won't|will not) (?:get|receive) (?:a|any) "
        r"(?:\w+ )?discount\b|\b(?:isn't|is not|there's no) (?:a |any )?(?:\w+ )?discount\b"
        r"|\bdiscount: (?:none|no|0)\b|\b(?:that|this|it)(?:'s not| isn't| is not) possible\b"
        + _NONE_OF_IT,
        re.I,
    ),
    "warranty": re.compile(
        r"\bno (?:\w+ )?warranty\b|(?:\bnot|n't) covered by (?:a|any)\b"
        r"|\bwarranty (?:doesn't|does not|won't|will not) (?:apply|cover)\b|\bwarranty: none\b"
        r"|\b(?:don't|do not|doesn't|does not) (?:offer|provide|give|have) (?:a|an|any|our|its)"
        r" (?:\w+ ){0,2}?warranty\b|\b(?:doesn't|does not|don't|do not) warranty\b"
        r"|\bonly (?:the |a |its )?manufacturer'?s? (?:\w+ )?warranty\b"
        r"|\bonly covered by (?:the |a |its )?manufacturer\b"
        r"|\b(?:doesn't|does not|don't|do not|won't|will not) (?:come with|include|have|carry)"
        r" (?:a|an|any) (?:\w+ )?warranty\b" + _NONE_OF_IT,
        re.I,
    ),
}
#: A restocking fee said to be zero as the refund it leaves whole: "you'll get a full refund".
ZERO_WORDS["restocking"] = re.compile(
    ZERO_WORDS["fee"].pattern + r"|\bfull refund\b|\bnothing (?:is |will be |gets )?deducted\b",
    re.I,
)


def zero_stated(text: str, kind: str) -> bool:
    """The text says the value (a ``ZERO_WORDS`` kind of value) is zero, in words.

    Said, not left open: "whether shipping is free depends on your location" says nothing.
    """
    pattern = ZERO_WORDS.get(kind)
    if pattern is None:
        return False
    low = plain(text)
    return any(
        not LEFT_OPEN.search(low, max(0, m.start() - 60), m.start()) for m in pattern.finditer(low)
    )


#: Zero offered as an alternative to a value: "either $7.99 or free", "free or $5.99". Not a
#: condition ("or free if you add $7 more", "or free with Premium").
_OR_ZERO = re.compile(
    r"\b(?:or|either)\s+(?:it(?:'s| is| will be| may be| might be| could be)\s+)?"
    r"(?:free|waived|nothing|no (?:fee|charge|cost))\b"
    r"(?!\s+(?:if|when|once|on|for|with|after|unless)\b)|\bfree\s+or\b"
)


def zero_offered(text: str) -> bool:
    """The text offers zero as an alternative ("$7.99 or free"): beside a value, a hedge."""
    return _OR_ZERO.search(plain(text)) is not None


def number_matches(value: float, truth: float, *, unit: str | None) -> bool:
    """Equal within exact cents for money, else a 1e-6 relative tolerance."""
    if unit in ("USD", "USD/year"):
        return round(value * 100) == round(float(truth) * 100)
    return abs(value - float(truth)) <= 1e-6 * max(1.0, abs(float(truth)))
