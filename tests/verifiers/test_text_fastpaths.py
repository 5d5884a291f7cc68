"""The status verifier's text readers equal the plain computations their fast paths replaced.

``verifiers.text`` reads statuses and carriers once per text with its digits zeroed (and
remembers them), rewrites markup and blanks only when there are some, and scans for each
written form of a date only when the text holds what the form cannot match without. Each
plain computation is kept here as the reference and compared with the reader on texts
Hypothesis assembles from status words, negations, dates in every form, weekdays, carriers,
tracking-like numbers, markup and the characters case-insensitive matching treats specially
("ſ", "İ", "ı", the Kelvin sign, non-ASCII digits).
"""

from __future__ import annotations

import contextlib
import re
import sys
from datetime import date, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shopgen.verifiers import text as T
from shopgen.verifiers.text import carriers, codes, dates, normalize, statuses

# -- the plain computations (the readers before their fast paths) ----------------------------------


def plain_ref(text: str) -> str:
    return re.sub(r"[ \t\r\f\v]+", " ", text.lower().translate(normalize._PLAIN))


def _sentence_start(low: str, at: int) -> int:
    """How far back a negation reaches: ``_NEGATION_REACH`` characters, not past a sentence's end."""
    start = max(0, at - statuses._NEGATION_REACH)
    ends = [m.end() for m in re.finditer(r"[.!?](?:\s|$)|\n", low[start:at])]
    return start + (ends[-1] if ends else 0)


def statements_ref(text: str) -> dict[str, bool]:
    low = plain_ref(text)
    for rewrite in statuses._REWRITES:
        low = rewrite.pattern.sub(rewrite.repl, low)
    low = statuses._table_statuses(low)
    said = {}
    for status, pattern in statuses._ASSERTIONS.items():
        past = [
            m.group(0).startswith("was ")
            or m.group("past") is not None
            or statuses._DATED.match(low, m.end()) is not None
            for m in pattern.finditer(low)
            if not statuses._NEGATED.search(low, _sentence_start(low, m.start()), m.end())
            and not (
                m.group(0).startswith("and") and statuses._MODAL_CLAUSE.search(low[: m.start()])
            )
            and not statuses._NEGATED_AFTER.match(low, m.end())
            and not (
                m.group(0).startswith("or")
                and statuses._NEGATED_BEFORE_OR.search(low[: m.start()][-40:])
            )
        ]
        if past:
            said[status] = all(past)
    return said


def dates_in_ref(text: str, *, year: int, today: date | None = None) -> set[date]:
    found: set[date] = set()

    def add(y: int | None, m: int, d: int) -> None:
        with contextlib.suppress(ValueError):
            if y or today is None:
                found.add(date(y or year, m, d))
                return
            near = [
                date(today.year + k, m, d) for k in (-1, 0, 1) if dates._valid(today.year + k, m, d)
            ]
            found.add(min(near, key=lambda x: (abs((x - today).days), x)))

    for y, m, d in dates._ISO.findall(text):
        add(int(y), int(m), int(d))
    for mon, d, y in dates._MONTH_DAY.findall(text):
        if mon.lower() in dates._MONTHS:
            add(int(y) if y else None, dates._MONTHS[mon.lower()], int(d))
    for d, mon, y in dates._DAY_MONTH.findall(text):
        if mon.lower() in dates._MONTHS:
            add(int(y) if y else None, dates._MONTHS[mon.lower()], int(d))
    for m, d, y in dates._SLASH.findall(text):
        yy = int(y) + 2000 if y and len(y) == 2 else (int(y) if y else None)
        first, second = int(m), int(d)
        add(yy, *((second, first) if first > 12 and second <= 12 else (first, second)))
    for d, m, y in dates._DOTTED.findall(text):
        first, second = int(m), int(d)
        add(int(y), *((second, first) if first > 12 and second <= 12 else (first, second)))
    if today is not None:
        found |= {
            today + timedelta(days=dates._RELATIVE[w])
            for w in dates._RELATIVE_RE.findall(text.lower())
        }
    return found


def weekday_claims_ref(text: str, today: date) -> list[frozenset[date]]:
    claims = []
    low = plain_ref(text)
    for m in dates._WEEKDAY_RE.finditer(low):
        if dates._DATE_BEFORE.search(low[: m.start()][-dates.DATE_BEFORE_REACH :]):
            continue
        which, name = m.groups()
        index = dates._WEEKDAYS.index(name)
        ahead = (index - today.weekday()) % 7 or 7
        behind = (today.weekday() - index) % 7 or 7
        future, past = today + timedelta(days=ahead), today - timedelta(days=behind)
        if which in ("last", "past"):
            claims.append(frozenset({past}))
        elif which:
            claims.append(frozenset({future}))
        else:
            claims.append(frozenset({past, future}))
    return claims


def carriers_ref(text: str) -> set[str]:
    low = " ".join(plain_ref(text).split())
    return {name for name, pattern in carriers._CARRIER_RES.items() if pattern.search(low)}


def code_stated_ref(text: str, code: str) -> bool:
    squash = re.compile(rf"{codes._SEP}|[{codes._INVISIBLE_CHARS}]")
    return squash.sub("", code).lower() in squash.sub("", text).lower()


def test_the_squash_table_deletes_exactly_the_separators_and_invisibles():
    # code_stated's translation must delete what the tracking scan reads as a separator:
    # a character only one of them knew once let a list of numbers hide behind it.
    sep = re.compile(codes._SEP)
    deleted = {c for c in map(chr, range(0x110000)) if c.translate(codes._SQUASHED) == ""}
    wanted = {c for c in map(chr, range(0x110000)) if sep.fullmatch(c)}
    assert deleted == wanted | set(codes._INVISIBLE_CHARS)


def outcome(fn, *args, **kwargs):
    """What a call returns, or the kind of error it raises (both ways must agree)."""
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as error:  # an error must be the same error both ways
        return "raised", type(error).__name__


# -- texts ---------------------------------------------------------------------------------------

TOKENS = [
    *(w for words in T.STATUS_WORDS.values() for w in words),
    *statuses._UNDER_WAY_WORDS,
    *("is", "was", "has", "have", "been", "got", "it's", "status", "status:", "currently", "now"),
    *("already", "or", "and", "order", "package", "it", "items", "your", "the", "on"),
    *("not", "n't", "hasn't", "hasn’t", "never", "yet to", "if", "once", "should", "will"),
    *("i have confirmed", "we've received", "delivery is scheduled", "being delivered"),
    *("March", "mar.", "SEPT", "Sep", "december", "May", "of", "21st", "6th", "5", "31", "2026"),
    *("2026-03-04", "2025-12-21", "2026-02-30", "3/4", "12/31/25", "03/06/2026", "06/03"),
    *("20.02.2026", "02.20.2026", "4.99", "1.2.2026", "31.02.2026"),
    *("today", "Tomorrow", "YESTERDAY", "day", "days", "birthday", "Friday", "last", "next"),
    *("this", "coming", "past", "tuesday", "Sunday,", "mon"),
    *("UPS", "ups", "USPS", "fed ex", "FedEx", "Federal Express", "ontrac", "follow-ups"),
    *("1Z 2672 1545 5453", "1Z742870316384", "C123456789012", "123-4567890-1234567"),
    *("**", "`", "_", "’", "‘", "“", "”", "- ", "•", ">", ".", ",", ":", "\n", "\t"),
    *("ſ", "ſep", "İ", "aprİl", "ı", "\u212a", "٣", "١٢"),
]
SEPARATORS = [" ", " ", " ", "", "  ", "\n", "\t", ". ", ", ", "\r\n", "\f"]
texts = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(TOKENS), st.text("0123456789ſİaeiou- ", max_size=4)),
        st.sampled_from(SEPARATORS),
    ),
    max_size=16,
).map(lambda pairs: "".join(token + sep for token, sep in pairs))
todays = st.dates(date(2025, 1, 1), date(2027, 12, 31))


@settings(max_examples=400, deadline=None)
@given(texts)
def test_plain_equals_the_plain_rewrite(text):
    assert T.plain(text) == plain_ref(text)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from("0123456789"))
def test_statements_equal_the_plain_reading_whatever_the_digits(text, digit):
    # Texts differing only in their digits share one remembered reading: it must be each one's.
    for variant in (text, re.sub("[0-9]", digit, text)):
        assert dict(statuses._statements(variant)) == statements_ref(variant)
        assert T.asserted_statuses(variant) == set(statements_ref(variant)) - {T.UNDER_WAY}
        assert T.carriers_named(variant) == carriers_ref(variant)


@settings(max_examples=400, deadline=None)
@given(texts, todays)
@example("it ſhipped ſep 5", date(2026, 3, 2))  # re.I reads a long s as an s
@example("the 5th of SEPT and 3/4", date(2026, 3, 2))
def test_dates_and_weekdays_equal_the_unguarded_scans(text, today):
    assert outcome(T.dates_in, text, year=today.year, today=today) == outcome(
        dates_in_ref, text, year=today.year, today=today
    )
    assert outcome(T.dates_in, text, year=today.year) == outcome(
        dates_in_ref, text, year=today.year
    )
    assert T.weekday_claims(text, today) == weekday_claims_ref(text, today)


@settings(max_examples=200, deadline=None)
@given(texts, st.sampled_from(["1Z742870316384", "C123456789012", "7529393822065"]))
def test_code_stated_equals_the_plain_squash(text, code):
    assert T.code_stated(text, code) == code_stated_ref(text, code)


@pytest.mark.parametrize("text", ["It was delivered on ſep 5.", "Arrives aprİl 3", "3 ſeptember"])
def test_a_month_spelled_with_look_alike_letters_is_no_date_and_no_error(text):
    """re.I reads "ſ" as "s" and "İ" as "i": no month's name, so no date, and grading never fails."""
    assert T.dates_in(text, year=2026, today=date(2026, 3, 2)) == set()


def test_case_folding_holds_every_month_prefix_the_case_insensitive_regexes_see():
    # The month guard looks for the prefixes in text.casefold(): every character re.I reads as
    # one of their letters must fold to that letter, or a month would be missed.
    letters = sorted({c for prefix in dates._MONTH_PREFIXES for c in prefix})
    every = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000)
    for letter in letters:
        seen = set(re.findall(letter, every, re.I))
        assert {c.casefold() for c in seen} == {letter}, letter


def test_the_guards_keep_the_forms_they_guard():
    today = date(2026, 3, 2)
    assert T.dates_in("SEPT 5 and 3/4 and tomorrow", year=2026, today=today) == {
        date(2025, 9, 5),
        date(2026, 3, 4),
        date(2026, 3, 3),
    }
    assert T.weekday_claims("arrives Friday", today) == [
        frozenset({date(2026, 2, 27), date(2026, 3, 6)})
    ]
    assert T.plain("**In**\t\tTransit’s") == " in transit's"
    assert (
        T.asserted_statuses("Order 123 has shipped")
        == T.asserted_statuses("Order 987 has shipped")
        == {"shipped"}
    )
    assert T.carriers_named("via UPS 1Z999") == {"UPS"}
