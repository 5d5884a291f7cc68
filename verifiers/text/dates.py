"""Dates an answer writes: calendar forms, ranges, offsets, days alone and weekdays.

A date counts in any common written form ("2026-03-06", "March 6", "6 March", "3/6",
"tomorrow", "on the 6th", "in 4 days", "Friday"), read against the episode's today.
"""

from __future__ import annotations

import contextlib
import re
from datetime import date, timedelta

from shopgen.verifiers.text.normalize import COUNT_UNIT, TABLE_RULE, digits, plain

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I
)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?(?:,?\s+(\d{{4}}))?\b", re.I
)
#: A slash date ("3/6", "03/06/2026"). Not a fraction of a size in a product's title: one
#: glued to a number ("7-1/4-Inch") or followed by its unit ("3/4 Sleeve", "1/2 lb") — 112
#: of 5,000 catalog titles hold one, and naming the item added a date to the answer.
_SLASH = re.compile(
    # Glued to a whole number ("7-1/4"), not to a date ("3/6-3/8" is a range of two).
    r"(?<![\w.])(?<![^/\d]\d-)(?<![^/\d]\d\d-)(?<!^\d-)(?<!^\d\d-)(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b"
    r"(?![-\s]*(?:inch|\"|sleeve|length|cup|tsp|tbsp|teaspoon|tablespoon|oz|ounce|lb"
    r"|pound|ft|foot|feet|gallon|gal\b|yard|mile|size|zip|hp|carat|ct\b))",
    re.I,
)
#: A dotted date, day first as it is written where dates have dots ("20.02.2026"). Only with
#: its four-digit year: "4.99", "11.2" and "2.5.1" are prices and versions, not dates.
_DOTTED = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.((?:19|20)\d\d)\b(?!\.\d)")


def _may_hold_dotted(text: str) -> bool:
    """A dotted date's year starts ".19" or ".20": a text holding neither holds none."""
    return ".20" in text or ".19" in text


#: Every month name starts with one of these: a text holding none names no month. Looked for
#: in the case-folded text, which holds them wherever the case-insensitive regexes see them
#: ("ſep", with a long s, folds to "sep", as ``re.I`` reads it).
_MONTH_PREFIXES = frozenset(name[:3] for name in _MONTHS)


def dates_in(text: str, *, year: int, today: date | None = None) -> set[date]:
    """Every calendar date written in ``text``.

    A date without a year gets ``year``, or, when ``today`` is given, the year that puts it
    nearest to today ("December 21" written on March 2 is last December's). With ``today``,
    "today", "tomorrow" and "yesterday" are dates too. Each written form is looked for only
    when the text holds what it cannot match without (a month's first letters, a slash, the
    word): most answers write one form, and a regex scan of a whole answer costs more than
    a substring test.
    """
    found: set[date] = set()

    def add(y: int | None, m: int, d: int) -> None:
        with contextlib.suppress(ValueError):  # "February 30" is not a date
            if y or today is None:
                found.add(date(y or year, m, d))
                return
            near = [date(today.year + k, m, d) for k in (-1, 0, 1) if _valid(today.year + k, m, d)]
            found.add(min(near, key=lambda x: (abs((x - today).days), x)))

    for y, m, d in _ISO.findall(text):
        add(int(y), int(m), int(d))
    folded = text.casefold()  # what _MONTH_DAY and _DAY_MONTH match, ignoring case
    if any(prefix in folded for prefix in _MONTH_PREFIXES):
        # re.I matches a few non-ASCII spellings of a month ("ſep", "aprİl") that are no
        # month's name: those are not dates (the look-up must not fail on an agent's text).
        for mon, d, y in _MONTH_DAY.findall(text):
            if (m := _MONTHS.get(mon.lower())) is not None:
                add(int(y) if y else None, m, int(d))
        for d, mon, y in _DAY_MONTH.findall(text):
            if (m := _MONTHS.get(mon.lower())) is not None:
                add(int(y) if y else None, m, int(d))
    numeric: list[tuple[int | None, int, int]] = []
    if "/" in text:
        for m, d, y in _SLASH.findall(text):
            yy = int(y) + 2000 if y and len(y) == 2 else (int(y) if y else None)
            numeric.append((yy, *_month_day(int(m), int(d))))
    if _may_hold_dotted(text):
        numeric += [(int(y), *_month_day(int(m), int(d))) for d, m, y in _DOTTED.findall(text)]
    written = set(found)
    for y, m, d in numeric:
        other = _other_reading(written, y, m, d) if d <= 12 else None
        if other is not None:
            found.add(other)
        else:
            add(y, m, d)
    if today is not None:
        low = text.lower()
        if any(word in low for word in _RELATIVE):
            found |= {today + timedelta(days=_RELATIVE[w]) for w in _RELATIVE_RE.findall(low)}
    return found


def _other_reading(written: set[date], y: int | None, month: int, day: int) -> date | None:
    """The date of ``written`` that a numeric date states read the other way round, if only that.

    Either number of "06/03/2026" may be its month: beside "Friday, March 6, 2026" it restates
    that date, and read month first it was a second date (June 3) in an honest answer.
    """

    def among(m: int, d: int) -> date | None:
        return next(
            (w for w in written if (w.month, w.day) == (m, d) and y in (None, w.year)), None
        )

    return None if among(month, day) else among(day, month)


def _month_day(first: int, second: int) -> tuple[int, int]:
    """A numeric date's (month, day), ``first`` as its month unless it can be no month.

    "21/02/2026" is February 21 (day first, as much of the world writes it); it was read as
    no date, and an honest answer so written was graded wrong. "02/03" stays February 3. A
    dotted date is read day first, so its month is its second number: "02.20.2026" is
    February 20 all the same.
    """
    return (second, first) if first > 12 >= second else (first, second)


#: What may stand between the dates of a bare list ("Feb 14, Feb 15 and Feb 20", "2026-02-14 /
#: 2026-02-15", one per bullet): separators and a joining word, no label saying what a date is.
_LIST_GAP = re.compile(
    r"[\s,;/|&()\[\]*•·\-–—]*(?:(?:and|or|then)\b(?:\s+(?:maybe|possibly|perhaps|probably"
    r"|potentially|else|even))?(?:\s+(?:on|by|around))?[\s,;/|&()\[\]*•·\-–—]*)?"
)


def date_listed(text: str, day: date, *, year: int, today: date | None = None) -> bool:
    """``day`` is written in a bare list with another date: nothing says which one it is.

    "Dates: 2026-02-14, 2026-02-15, 2026-02-20" names an order's placed, shipped and expected
    days without saying which is which; each is one of the order's own dates (allowed by
    :func:`date_stated_alone`), so the list states the expected one only for a reader who
    already knows it; so does an alternative ("today or March 10", "February 11, or maybe
    February 20"). Dates apart by a word ("placed on Feb 14, expected Feb 20") or in
    sentences of their own are labelled by that text, and so are dates in cells of a table,
    by its header ("| Placed on | Expected delivery |"); the same date written twice
    ("2026-02-20 (February 20)", "March 6, 2026 (06/03/2026)") is no list.
    """
    forms = (_ISO, _MONTH_DAY, _DAY_MONTH, _SLASH, *((_RELATIVE_WORD,) if today else ()))
    forms += (_DOTTED,) if _may_hold_dotted(text) else ()
    spans = sorted((m.start(), m.end()) for pattern in forms for m in pattern.finditer(text))
    whole = dates_in(text, year=year, today=today)
    table = "|" in text and TABLE_RULE.search(text) is not None
    run: set[date] = set()
    end = -1
    for start, stop in spans:
        if start < end:  # one date matched by two forms ("2026-02-14" holds no slash)
            continue
        found = {_as_read(x, whole) for x in dates_in(text[start:stop], year=year, today=today)}
        if not found:
            continue
        gap = text[end:start]
        if end < 0 or not _LIST_GAP.fullmatch(gap) or (table and "|" in gap):
            if day in run and len(run) > 1:
                return True
            run = set()
        run |= found
        end = stop
    return day in run and len(run) > 1


def _as_read(day: date, whole: set[date]) -> date:
    """A numeric date read alone, as the whole text reads it (:func:`_other_reading`)."""
    return _other_reading(whole, None, day.month, day.day) or day


def _valid(y: int, m: int, d: int) -> bool:
    try:
        date(y, m, d)
    except ValueError:
        return False
    return True


#: Days that need no calendar: the answer's "today" is the episode's.
_RELATIVE = {"today": 0, "tomorrow": 1, "yesterday": -1}
_RELATIVE |= {"day after tomorrow": 2, "day before yesterday": -2}
_RELATIVE_RE = re.compile(r"\b(day after tomorrow|day before yesterday|today|tomorrow|yesterday)\b")
_RELATIVE_WORD = re.compile(_RELATIVE_RE.pattern, re.I)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: A weekday standing for a date ("arrives Friday", "last Tuesday"), not naming one's day
#: ("Friday, March 6", "Fri 3/6", "Tuesday (Mar 17)": followed by a written date).
_WEEKDAY_RE = re.compile(
    rf"\b(?:(this|next|last|coming|past)\s+)?({'|'.join(_WEEKDAYS)})\b"
    rf"(?!,?\s+\(?(?:the\s+)?(?:\d|{_MONTH}))"
)


#: The end of a written date right before a weekday ("March 10 (Tuesday)", "3/10, Tue").
#: "2/20/2026, a Friday", "March 10, which is a Tuesday" too.
_DATE_BEFORE = re.compile(
    r"\d(?:st|nd|rd|th)?\.?\s*[,(]?\s*(?:(?:which|that) (?:is|was|'s) )?(?:on )?(?:a )?$"
)
#: How far before a weekday :data:`_DATE_BEFORE` looks.
DATE_BEFORE_REACH = 24


#: A date's day-of-month partners in a range or alternative ("Mar 6–8", "March 7 or 8", "6–8
#: March", "between March 6 and 8"): group "tail" holds the partners written after the date.
_DAY_TAIL = (
    r"(?P<tail>(?:\s*(?:[-\u2010-\u2015]|\bto\b|\bor\b|\band\b|\bthrough\b|\bthru\b|&)\s*"
    rf"(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b(?![:.]\d|/|{COUNT_UNIT}|\s+(?:of\s+)?(?:{_MONTH})\b))+)"
)
_MONTH_DAY_RANGE = re.compile(
    rf"\b(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b{_DAY_TAIL}", re.I
)
_DAY_HEAD = re.compile(
    rf"\b(?P<head>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:[-\u2010-\u2015]|\bto\b|\bor\b|\band\b|&)\s*"
    rf"(?=\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b)",
    re.I,
)
_DAY_NUMBER = re.compile(r"\d{1,2}")
#: A day offset from the date just written: "March 6 or the day after", "or the next day", "or
#: a day later", "give or take a couple of days", "± 2 days". The date's neighbours within the
#: offset are stated with it.
_OFFSET = re.compile(
    r"\s*[,(—–-]?\s*(?:(?P<alt>or)\s+(?:(?:maybe|possibly|perhaps|probably)\s+)?(?:the\s+)?"
    r"(?:(?P<after>day after|next day|following day"
    r"|day later|a day later)|(?P<before>day before|previous day|day earlier|a day earlier))"
    r"|(?:give or take|plus or minus|±|\+/-|\+/−|more or less)\s*(?P<n>a|one|a day or two|two"
    r"|a couple(?: of)?|a few|few|\d+)(?:\s+(?:business\s+)?days?)?)",
    re.I,
)
_OFFSET_N = {"a": 1, "one": 1, "a day or two": 2, "two": 2, "a couple": 2, "a couple of": 2}
_OFFSET_N |= {"a few": 3, "few": 3}
#: A day of the month written alone, after a preposition or a weekday: "arrives on the 6th",
#: "by the 28th", "Friday the 6th", "Fri 6th". Not a month's day ("the 6th of March", "March
#: the 6th" are read as dates) nor a count ("the 2nd attempt").
_WEEKDAY_NAMES = "|".join((*_WEEKDAYS, *(w[:3] for w in _WEEKDAYS), "tues", "thurs"))
_BARE_DAY = re.compile(
    rf"(?:\b(?:on|by|before|after|until|till|from|since|around|for|of)\s+the\s+"
    rf"|\b(?P<wd>{_WEEKDAY_NAMES})\.?,?\s+(?:the\s+)?)(?P<d>\d{{1,2}})(?:st|nd|rd|th)\b"
    rf"(?!\s+(?:of\s+)?(?:{_MONTH})\b)"
    r"(?![\s-]+(?:time|attempt|try|order|item|package|call|floor|day|week|month|year|percent)s?\b)",
    re.I,
)
#: "in 4 days", "in 3-5 days", "4 days ago", "4 days from now": calendar days from today.
_DAYS_FROM_TODAY = re.compile(
    r"\bin\s+(\d{1,2})(?:\s*(?:[-\u2010-\u2015]|to|or)\s*(\d{1,2}))?\s+days?\b(?!\s+(?:of|after))"
    r"|\b(\d{1,2})\s+days?\s+(ago|from\s+(?:now|today))\b",
    re.I,
)


def _day_of_month(
    today: date, day: int, weekday: int | None, tense: str | None = None
) -> date | None:
    """The date a day of the month written alone means.

    Alone ("arrives on the 17th"), this month's: the month people leave out is the current
    one. With a weekday ("Saturday the 14th"), the date nearest today with that day and that
    weekday (ties to the earlier, looked for within a year either side): the weekday ties the
    day to the calendar, and a month whose 14th is a Saturday is seldom nearer than a month.
    Told in the past or of the future (``tense``, :func:`_tense_before`), the nearest such date
    on that side of today: "it was delivered on Tuesday the 10th", written on March 2, 2026,
    is February 10 (March 10 is a Tuesday too, and nearer), and "delivered on the 20th" is
    last month's 20th.
    """
    if weekday is None:
        y, m = today.year, today.month
        if tense == "past" and day > today.day:
            y, m = (y - 1, 12) if m == 1 else (y, m - 1)
        elif tense == "future" and day < today.day:
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return date(y, m, day) if _valid(y, m, day) else None
    found = []
    for k in range(-12, 13):
        y, m = divmod(today.month - 1 + k, 12)
        if _valid(today.year + y, m + 1, day):
            cand = date(today.year + y, m + 1, day)
            if cand.weekday() == weekday:
                found.append(cand)
    sided = [
        c for c in found if (tense == "past" and c <= today) or (tense == "future" and c >= today)
    ]
    return min(sided or found, key=lambda c: (abs((c - today).days), c), default=None)


#: Words that put a date written without its month in the past or the future.
_PAST_WORDS = re.compile(r"\b(?:was|were|delivered|arrived|shipped|placed|cancell?ed|came|got)\b")
_FUTURE_WORDS = re.compile(
    r"\b(?:will|expected|expect|estimated|eta|arriving|arrives|due|should|scheduled)\b"
)


def _tense_before(low: str, at: int) -> str | None:
    """``past`` or ``future`` by the last tense word of the sentence before ``at``, or None."""
    start = max(low.rfind(mark, 0, at) for mark in ".!?\n") + 1
    head = low[start:at]
    past = max((m.end() for m in _PAST_WORDS.finditer(head)), default=-1)
    future = max((m.end() for m in _FUTURE_WORDS.finditer(head)), default=-1)
    if past == future:
        return None
    return "past" if past > future else "future"


def more_dates(text: str, *, year: int, today: date | None = None) -> set[date]:
    """Dates :func:`dates_in` does not read: ranges, offsets and days without their month.

    With ``today``, days written without their month or as days from today count too.
    "Mar 6–8", "March 7 or 8" and "6–8 March" state every day of them; "March 6 or the day
    after" and "give or take a couple of days" the neighbouring days too, so a hedge over dates
    holds a wrong one. A day of the month written alone ("arrives on the 6th", "Friday the
    6th") is that day of today's month (:func:`_day_of_month`), and "in 4 days" or "4 days
    ago" counts from today: the answer is read against the episode's today alone, never
    against the date asked about. Kept apart from :func:`dates_in`, whose fast paths are
    checked against a reference of its forms.
    """
    found: set[date] = set()
    low = plain(text)
    if any(prefix in low for prefix in _MONTH_PREFIXES):
        for m in _MONTH_DAY_RANGE.finditer(low):
            base = dates_in(low[m.start() : m.start("tail")], year=year, today=today)
            for first in base:
                for raw in _DAY_NUMBER.findall(m.group("tail")):
                    d = int(raw)
                    y, mo = (first.year, first.month)
                    if d < first.day:  # "March 30 - 2": the next month's
                        y, mo = (y + 1, 1) if mo == 12 else (y, mo + 1)
                    if _valid(y, mo, d):
                        found.add(date(y, mo, d))
        for m in _DAY_HEAD.finditer(low):
            for later in dates_in(low[m.end() :][:40], year=year, today=today):
                d = int(m.group("head"))
                if d < later.day and _valid(later.year, later.month, d):
                    found.add(date(later.year, later.month, d))
    spans = [
        (mt.start(), mt.end())
        for pattern in (_ISO, _MONTH_DAY, _DAY_MONTH, _SLASH, _DOTTED)
        if pattern is not _DOTTED or _may_hold_dotted(low)
        for mt in pattern.finditer(low)
    ]
    for start, stop in spans:
        off = _OFFSET.match(low, stop)
        if off is None:
            continue
        for first in dates_in(low[start:stop], year=year, today=today):
            if off.group("alt"):
                found.add(first + timedelta(days=1 if off.group("after") else -1))
            else:
                n = off.group("n").lower()
                k = int(n) if n.isdigit() else _OFFSET_N.get(n, 1)
                found |= {first + timedelta(days=i) for i in range(-k, k + 1) if i}
    if today is not None:
        for m in _BARE_DAY.finditer(low):
            wd = m.group("wd")
            weekday = None if wd is None else _weekday_index(wd)
            tense = _tense_before(low, m.start())
            if (near := _day_of_month(today, int(m.group("d")), weekday, tense)) is not None:
                found.add(near)
        for m in _DAYS_FROM_TODAY.finditer(digits(low)):
            if m.group(1):
                found |= {today + timedelta(days=int(n)) for n in m.group(1, 2) if n}
            else:
                found.add(
                    today - timedelta(days=int(m.group(3)))
                    if m.group(4) == "ago"
                    else today + timedelta(days=int(m.group(3)))
                )
    return found


def _weekday_index(name: str) -> int:
    return next(i for i, w in enumerate(_WEEKDAYS) if w.startswith(name.lower()[:3]))


def weekday_claims(text: str, today: date) -> list[frozenset[date]]:
    """The dates each weekday written for a date may mean, one set per weekday written.

    "last Friday" is the one in the past week, "this/next/coming Friday" the one in the coming
    week, a bare "Friday" either (the tense decides, and reading tense is left to the answer's
    other words): graders accept a weekday when one of its readings is the day asked about.
    """
    low = plain(text)
    if "day" not in low:  # every weekday's name ends so: no scan for most answers
        return []
    claims = []
    for m in _WEEKDAY_RE.finditer(low):
        if _DATE_BEFORE.search(low, max(0, m.start() - DATE_BEFORE_REACH), m.start()):
            continue  # "March 10 (Tuesday)": the date's day, not a date of its own
        which, name = m.groups()
        index = _WEEKDAYS.index(name)
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


#: A weekday's name, whole or cut short ("Friday", "Fri."), as it stands beside a date.
_DAY_NAME = (
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?"
    r"|fri|sat|sun)\b\.?"
)
_ANY_DAY = re.compile(_DAY_NAME, re.I)
#: A weekday right before a date ("Friday, February 20", "Fri 20 Feb", "Thursday the 5th …").
_DAY_THEN_DATE = re.compile(rf"{_DAY_NAME},?\s+(?:the\s+)?(?=\d|(?:{_MONTH})\b)", re.I)
#: A weekday right after a date, in brackets or after a comma ("March 6 (Friday)", "2/20, Fri").
_DATE_THEN_DAY = re.compile(
    rf"\s*(?:,|\()\s*(?:(?:which|that) (?:is|was) )?(?:a\s+)?{_DAY_NAME}", re.I
)


def _day_index(name: str) -> int:
    return next(i for i, day in enumerate(_WEEKDAYS) if day.startswith(name[:3].lower()))


def weekday_mismatched(text: str, *, year: int, today: date | None = None) -> bool:
    """A date is written beside a weekday it does not fall on.

    "Thursday, February 20, 2026" of a Friday tells the customer two days, one of them wrong.
    """
    if _ANY_DAY.search(text) is None:
        return False
    forms = (_MONTH_DAY, _DAY_MONTH, _ISO, _SLASH)
    for m in _DAY_THEN_DATE.finditer(text):
        for form in forms:
            if (d := form.match(text, m.end())) is not None:
                read = dates_in(d.group(0), year=year, today=today)
                if read and all(x.weekday() != _day_index(m.group(1)) for x in read):
                    return True
                break
    for form in forms:
        for d in form.finditer(text):
            after = _DATE_THEN_DAY.match(text, d.end())
            if after is not None:
                read = dates_in(d.group(0), year=year, today=today)
                if read and all(x.weekday() != _day_index(after.group(1)) for x in read):
                    return True
    return False


def date_claims(text: str, *, year: int, today: date | None = None) -> list[frozenset[date]]:
    """Each date the text writes, as the set of days it may mean.

    One day, or a weekday's two readings (:func:`weekday_claims`, with ``today``).
    """
    found = dates_in(text, year=year, today=today) | more_dates(text, year=year, today=today)
    claims = [frozenset({x}) for x in found]
    if today is not None:
        claims += weekday_claims(text, today)
    return claims


def date_stated_alone(
    text: str,
    day: date,
    *,
    year: int,
    allowed: frozenset[date] | None = None,
    today: date | None = None,
) -> bool:
    """``day`` is written in ``text`` and every other date written is an ``allowed`` one.

    ``allowed`` holds the dates that are true of the same thing (an order's placed and shipped
    days, today); without it, no date later than ``day`` may be written (the day asked about
    is an order's last). A list of candidate dates states the right one only by luck. With
    ``today``, yearless dates are read nearest to it, "today"/"tomorrow"/"yesterday" count,
    and so does a weekday written for a date (:func:`weekday_claims`): it states ``day`` when
    one of its readings is ``day``, and is another date when none is ``day`` or allowed. A
    weekday written beside a date it does not fall on is another day (:func:`weekday_mismatched`).
    """
    claims = date_claims(text, year=year, today=today)
    if not any(day in c for c in claims) or weekday_mismatched(text, year=year, today=today):
        return False
    if allowed is None:
        return all(min(c) <= day for c in claims)
    ok = allowed | {day}
    return all(c & ok for c in claims)
