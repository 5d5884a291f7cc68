"""The text every reader reads: plain lower case, digits zeroed, number words as digits.

Assistants write markup, curly quotes and numbers in words; each reader matches words and
digits, so it reads the answer through these rewrites rather than the raw text.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: A Markdown table's rule under its header ("|---|:---:|", "---|---"), a line of its own:
#: the table's cells below it are labelled by the header's columns.
TABLE_RULE = re.compile(
    r"^[^\S\n]*\|?(?:[^\S\n]*:?-{3,}:?[^\S\n]*\|)+[^\S\n]*(?::?-{3,}:?[^\S\n]*)?$", re.M
)

#: What a number counts when it is not an amount of money: after "$4.99 - " a "2 business
#: days" is a delivery time, not the top of a price range.
COUNT_UNIT = (
    r"\s*(?:[%\uff05]|(?:percent|per cent|pct|calendar|business|working|days?|weeks?|months?"
    r"|years?|hours?|hrs?|minutes?|mins?|items?|units?|pieces?|orders?|times?|am|pm|a\.m"
    r"|p\.m|payments?|installments?|lbs?|pounds?|kg|oz|miles?)\b)"
)


@lru_cache(maxsize=1024)
def plain(text: str) -> str:
    """``text`` lower-cased without markdown emphasis, curly quotes or runs of blanks.

    Assistants write "**in transit**", "`1Z…`", "hasn’t" and raw field values ("in_transit");
    the readers below match words, so markup between the words must not hide them. Line
    breaks are kept: a bullet's first word starts a line. Remembered: one verdict reads the
    same answer for its status, weekdays and carrier. Most answers hold no markup and no run
    of blanks, so each rewrite runs only when its characters are there (it would change
    nothing otherwise).
    """
    low = text.lower()
    if _MARKUP.search(low):
        low = low.translate(_PLAIN)
    if "  " in low or any(blank in low for blank in "\t\r\f\v"):
        low = _BLANKS.sub(" ", low)
    return low


_PLAIN = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "*": " ", "`": " ", "_": " "})
_MARKUP = re.compile("[" + re.escape("".join(map(chr, _PLAIN))) + "]")
_BLANKS = re.compile(r"[ \t\r\f\v]+")


#: ASCII digits as 0. No status's words and no carrier's name hold a digit, and every digit is a
#: word character as 0 is, so the statuses and carriers a text names are those its copy with
#: digits zeroed names (same length, same word boundaries, same words).
ZERO_DIGITS = str.maketrans("123456789", "0" * 9)


@lru_cache(maxsize=256)
def zeroed(text: str) -> str:
    """``text`` with its digits zeroed (:data:`ZERO_DIGITS`), remembered for the verdict's readers.

    Answers differ mostly in their numbers (order ids, dates, tracking numbers): zeroed, the
    answers of many tasks are one text, and what it asserts is read once for all of them.
    """
    return text.translate(ZERO_DIGITS)


_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70}
_TENS |= {"eighty": 80, "ninety": 90}
_WORD_NUMBER = re.compile(
    rf"\b(?:({'|'.join(_TENS)})(?:[\s-]({'|'.join(_ONES[1:10])}))?|({'|'.join(_ONES)})|(a|an))"
    r"(?=[\s-]+(?:full[\s-]+)?(?:calendar[\s-]+|business[\s-]+|working[\s-]+)?"
    r"(?:percent|per cent|days?|weeks?|months?|years?)\b"
    # Money in words, never "a": "a dollar more" is no price.
    r"|(?<!\ba)(?<!\ban)[\s-]+(?:dollars?|cents?)\b)",
    re.I,
)
#: A number written in words and then in digits: "forty-five (45) days" is 45 days, once.
_WORD_THEN_DIGITS = re.compile(
    rf"\b(?:(?:{'|'.join(_TENS)})(?:[\s-](?:{'|'.join(_ONES[1:10])}))?|(?:{'|'.join(_ONES)}))"
    r"\s*\((\d[\d,.]*)\)",
    re.I,
)
#: Dollars and cents in words, once written as digits: "5 dollars and 99 cents" is $5.99.
_DOLLARS_AND_CENTS = re.compile(r"\b(\d+) dollars? and (\d{1,2}) cents?\b", re.I)


def digits(text: str) -> str:
    """Number words before a unit as digits: "fifteen percent", "a one-year warranty", "a year".

    And "ninety-nine dollars", "forty-five (45) days" (the number once), "five dollars and
    ninety-nine cents" ($5.99).
    """

    def value(m: re.Match[str]) -> str:
        tens, ones, small, article = m.groups()
        if article:
            return "1"
        if small:
            return str(_ONES.index(small.lower()))
        return str(_TENS[tens.lower()] + (_ONES.index(ones.lower()) if ones else 0))

    text = _SPANS.sub(lambda m: _SPAN_DIGITS[m.group(0).lower()], text)
    if "(" in text:
        text = _WORD_THEN_DIGITS.sub(r"\1", text)
    text = _WORD_NUMBER.sub(value, text)
    if "cent" in text:
        text = _DOLLARS_AND_CENTS.sub(lambda m: f"{m.group(1)}.{int(m.group(2)):02d} dollars", text)
    return text


#: Spans of time said without a number: "half a year", "the next business day".
_SPAN_DIGITS = {
    "half a year": "6 months",
    "a year and a half": "18 months",
    "next business day": "1 business day",
    "next-business-day": "1 business day",
}
_SPANS = re.compile("|".join(rf"\b{re.escape(k)}\b" for k in _SPAN_DIGITS), re.I)


#: What leaves the rest of its clause open: "whether it is free", "it depends", "I can't say
#: whether we'll match it", "you may or may not be able to": nothing after it is said.
LEFT_OPEN = re.compile(
    r"\b(?:whether|depends|depending|not sure|can't say|cannot say|can't confirm"
    r"|cannot confirm|may or may(?: not)?|might or might(?: not)?)\b[^.;:!?\n]*$"
)


#: A sentence that takes back what came before it: "Actually, …", "Correction: …", "Sorry, I
#: misspoke …". Only at a sentence's start: "it's actually free" corrects nothing.
_CORRECTION = re.compile(
    r"(?:^|(?<=[.!?\n])|(?<=[.!?]\s))\s*\W*(?=(?:actually|correction|wait\s*[,!:\u2014-]|scratch that"
    r"|on second thought|i stand corrected|let me correct (?:that|myself)|to correct (?:that|myself)"
    r"|sorry,? (?:i misspoke|i was wrong|i made a mistake|that was wrong|my mistake)"
    r"|my mistake|i misspoke)\b)",
    re.I,
)


def corrections(text: str) -> list[str]:
    """``text`` cut before each sentence that corrects what came before, first to last.

    An answer that states a value and then "Actually, …" another means the later one: a
    reader that takes the last part saying anything reads what the customer is left with.
    """
    return [part for part in _CORRECTION.split(text) if part.strip()] or [text]
