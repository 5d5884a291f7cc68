"""Reading facts out of an agent's final message: order statuses, dates, codes, numbers.

Answers given in free text are graded by what they *assert*. A status counts as asserted when
it follows a verb or a "status" label ("is delivered", "has shipped", "status: cancelled"),
so narrative mentions ("the order you placed on March 1") assert nothing. A date counts in any
common written form.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from datetime import date, timedelta
from functools import lru_cache
from types import MappingProxyType

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
#: What a number counts when it is not an amount of money: after "$4.99 - " a "2 business
#: days" is a delivery time, not the top of a price range.
_COUNT_UNIT = (
    r"\s*(?:[%\uff05]|(?:percent|per cent|pct|calendar|business|working|days?|weeks?|months?"
    r"|years?|hours?|hrs?|minutes?|mins?|items?|units?|pieces?|orders?|times?|am|pm|a\.m"
    r"|p\.m|payments?|installments?|lbs?|pounds?|kg|oz|miles?)\b)"
)
#: Every month name starts with one of these: a text holding none names no month. Looked for
#: in the case-folded text, which holds them wherever the case-insensitive regexes see them
#: ("ſep", with a long s, folds to "sep", as ``re.I`` reads it).
_MONTH_PREFIXES = frozenset(name[:3] for name in _MONTHS)

#: Status → the words that assert it.
STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "placed": ("placed", "received", "confirmed"),
    "processing": ("processing", "being processed", "being prepared"),
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
_LEAD = (
    r"(?:\bis\b|\bwas\b|\bhas\b|\bhave\b|\bbeen\b|\bgot\b|'s\b|\bstatus\b\s*(?:is|:)?"
    r"|\bcurrently\b|\bnow\b|\balready\b|\b(?:shows?|shown|showing|listed|marked)\s+as\b)"
)
#: What the order is called when it is the subject of a bare past verb ("your order shipped",
#: "the package arrived on March 4"): history told in the past tense.
_SUBJECT = r"\b(?:order|package|parcel|shipment|it|item|items)"
#: An order id written after the order's name ("order 356-1234567-1234567 arrived"), digits
#: zeroed as the statuses are read (:func:`_zeroed`).
_ORDER_ID = r"(?:\s+#?\d[\d-]*\d)?"


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
    if "/" in text:
        for m, d, y in _SLASH.findall(text):
            yy = int(y) + 2000 if y and len(y) == 2 else (int(y) if y else None)
            add(yy, *_month_day(int(m), int(d)))
    if today is not None:
        low = text.lower()
        if any(word in low for word in _RELATIVE):
            found |= {today + timedelta(days=_RELATIVE[w]) for w in _RELATIVE_RE.findall(low)}
    return found


def _month_day(first: int, second: int) -> tuple[int, int]:
    """A slash date's (month, day): month first, unless the first can be no month.

    "21/02/2026" is February 21 (day first, as much of the world writes it); it was read as
    no date, and an honest answer so written was graded wrong. "02/03" stays February 3.
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
    sentences of their own are labelled by that text, and the same date written twice
    ("2026-02-20 (February 20)") is no list.
    """
    forms = (_ISO, _MONTH_DAY, _DAY_MONTH, _SLASH, *((_RELATIVE_WORD,) if today else ()))
    spans = sorted((m.start(), m.end()) for pattern in forms for m in pattern.finditer(text))
    run: set[date] = set()
    end = -1
    for start, stop in spans:
        if start < end:  # one date matched by two forms ("2026-02-14" holds no slash)
            continue
        found = dates_in(text[start:stop], year=year, today=today)
        if not found:
            continue
        if end < 0 or not _LIST_GAP.fullmatch(text[end:start]):
            if day in run and len(run) > 1:
                return True
            run = set()
        run |= found
        end = stop
    return day in run and len(run) > 1


def _valid(y: int, m: int, d: int) -> bool:
    try:
        date(y, m, d)
    except ValueError:
        return False
    return True


#: Days that need no calendar: the answer's "today" is the episode's.
_RELATIVE = {"today": 0, "tomorrow": 1, "yesterday": -1}
_RELATIVE_RE = re.compile(r"\b(today|tomorrow|yesterday)\b")
_RELATIVE_WORD = re.compile(_RELATIVE_RE.pattern, re.I)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: A weekday standing for a date ("arrives Friday", "last Tuesday"), not naming one's day
#: ("Friday, March 6", "Fri 3/6", "Tuesday (Mar 17)": followed by a written date).
_WEEKDAY_RE = re.compile(
    rf"\b(?:(this|next|last|coming|past)\s+)?({'|'.join(_WEEKDAYS)})\b"
    rf"(?!,?\s+\(?(?:the\s+)?(?:\d|{_MONTH}))"
)


#: The end of a written date right before a weekday ("March 10 (Tuesday)", "3/10, Tue").
_DATE_BEFORE = re.compile(r"\d(?:st|nd|rd|th)?\.?\s*[,(]?\s*$")


#: A date's day-of-month partners in a range or alternative ("Mar 6–8", "March 7 or 8", "6–8
#: March", "between March 6 and 8"): group "tail" holds the partners written after the date.
_DAY_TAIL = (
    r"(?P<tail>(?:\s*(?:[-\u2010-\u2015]|\bto\b|\bor\b|\band\b|\bthrough\b|\bthru\b|&)\s*"
    rf"(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b(?![:.]\d|/|{_COUNT_UNIT}|\s+(?:of\s+)?(?:{_MONTH})\b))+)"
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
        for pattern in (_ISO, _MONTH_DAY, _DAY_MONTH, _SLASH)
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
        for m in _DAYS_FROM_TODAY.finditer(_digits(low)):
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
        if _DATE_BEFORE.search(low, max(0, m.start() - 8), m.start()):
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
    statuses asserts them all.
    Or right after the order as a bare past verb ("your order shipped", "order 356-… arrived":
    an order id may stand between), after "and" ("it shipped on March 1 and arrived on the
    4th"), or opening a line (a bullet or an emoji: "- Delivered: March 4", "✅ Delivered"):
    these tell what happened, in
    the past, and so does the present perfect "has been …" followed by "and" and a present
    clause ("has been placed and is being processed" tells the order's history, then its
    status; "has been placed and is not processed yet" tells its status). A lead may end in a colon ("is:
    Processing"), and a heading may set the status after the order by a dash or a colon
    ("Order 123 — In transit"). "Shows as"/"listed as"/"marked as" lead too.
    """
    alts = "|".join(re.escape(w) for w in words)
    return re.compile(
        rf"(?P<past>\bha(?:s|ve)\s+(?:(?:already|now)\s+)?been\s+(?:{alts})\b{_THEN_NOW}"
        rf"|(?:{_SUBJECT}{_ORDER_ID}|\band)\s+(?:{alts})\b|^[^\w\n]*(?:{alts})\b)"
        rf"|{_LEAD}:?(?:\s+\w+){{0,2}}?\s+(?:{alts})\b|\bstatus\b[^.]{{0,20}}\b(?:{alts})\b"
        rf"|\bor\b(?:\s+\w+){{0,2}}?\s+(?:{alts})\b|(?<=\w)\s*/\s*(?:{alts})\b"
        rf"|\b(?:order|package|parcel|shipment){_ORDER_ID}\s*(?:[:|\u2013\u2014]|\s-)\s*(?:{alts})\b",
        re.M,
    )


_WORDS = {**STATUS_WORDS, UNDER_WAY: _UNDER_WAY_WORDS}
_ASSERTIONS = {status: _assertion(tuple(words)) for status, words in _WORDS.items()}
#: A negation, a condition or a modal in an assertion's words or just before them ("has not
#: been", "hasn't been", "if it has shipped", "should have arrived"): nothing is asserted.
_NEGATED = re.compile(
    r"\bnot\b|n't\b|\bnever\b|\byet to\b|\bif\b|\bonce\b|\bunless\b|\bshould\b|\bwould\b"
    r"|\bcould\b|\bmight\b|\bwill\b|\bbefore\b|\buntil\b|\bnothing\b"
)
#: A modal earlier in the clause of a status joined by "and" ("should be shipped and
#: delivered by March 5"): the joined status is as unasserted as the first.
_MODAL_CLAUSE = re.compile(
    r"\b(?:should|would|could|might|may|will|expected to|going to|yet to)\b[^.;:!?\n]*$"
)
#: How many characters before an assertion a negation still negates it.
_NEGATION_REACH = 12
#: Words that look like a status's but are not the order's: the agent telling what it did
#: ("I have confirmed …", "we've received your question"), the delivery being confirmed
#: ("delivery is confirmed for March 6"), and an order "being delivered" (it is on its way).
#: A stage the order waits for ("awaiting processing", "ready to be shipped") is not its
#: status yet; the store doing a stage's work ("we're preparing your order", "we are
#: processing it") is the order being processed.
_NOT_STATUS = (
    (re.compile(r"\b(?:i|we)(?:'ve| have)? (?:confirmed|received|checked)\b"), "i looked"),
    (re.compile(r"\bdelivery (?:is |was |has been )?(?:confirmed|scheduled)\b"), "delivery noted"),
    (re.compile(r"\bbeing delivered\b"), "in transit"),
    (
        re.compile(
            r"\b(?:awaiting|pending|waiting (?:for|to be)|ready (?:for|to be)|about to be)"
            r" (?:processing|processed|shipment|shipping|shipped|dispatch|dispatched|delivery"
            r"|delivered)\b"
        ),
        "waiting",
    ),
    (
        re.compile(
            r"\bwe(?:'re| are) (?:currently |now |still )?(?:preparing|processing|packing)\b"
        ),
        "it is being prepared",
    ),
)


def _status_text(text: str) -> str:
    low = plain(text)
    for pattern, repl in _NOT_STATUS:
        low = pattern.sub(repl, low)
    return _table_statuses(low) if "|" in low else low


def _table_statuses(low: str) -> str:
    """``low`` with each Markdown table cell under a "Status" heading led by "status".

    "| 441-… | In Transit |" under "| Order | Status |" states the status as "status: in
    transit" does; the cell alone has no lead word (83 of 260 table answers failed).
    """
    lines = low.split("\n")
    column = None
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            column = None
            continue
        cells = line.split("|")
        if column is None:
            column = next((j for j, c in enumerate(cells) if c.strip() == "status"), None)
        elif column < len(cells) and not set(cells[column].strip()) <= set("-: "):
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


#: ASCII digits as 0. No status's words and no carrier's name hold a digit, and every digit is a
#: word character as 0 is, so the statuses and carriers a text names are those its copy with
#: digits zeroed names (same length, same word boundaries, same words).
_ZERO_DIGITS = str.maketrans("123456789", "0" * 9)


@lru_cache(maxsize=256)
def _zeroed(text: str) -> str:
    """``text`` with its digits zeroed (:data:`_ZERO_DIGITS`), remembered for the verdict's readers.

    Answers differ mostly in their numbers (order ids, dates, tracking numbers): zeroed, the
    answers of many tasks are one text, and what it asserts is read once for all of them.
    """
    return text.translate(_ZERO_DIGITS)


def _statements(text: str) -> Mapping[str, bool]:
    """Each asserted status, and whether every assertion of it is in the past tense ("was …").

    Read once per text with digits zeroed (:func:`_zeroed`); the mapping is shared, read-only.
    """
    return _statements_of(_zeroed(text))


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
            for m in pattern.finditer(low)
            if not _NEGATED.search(low, max(0, m.start() - _NEGATION_REACH), m.end())
            and not (m.group(0).startswith("and") and _MODAL_CLAUSE.search(low, 0, m.start()))
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
    order.
    """
    alts = "|".join(re.escape(w) for w in words)
    modal = r"\b(?:may|might|could)\s+(?:(?:also|well|even|very)\s+)*"
    return re.compile(
        rf"{modal}(?:already\s+)?have\s+(?:already\s+)?(?:been\s+)?(?:{alts})\b"
        rf"|{modal}(?:already|still)\s+be\s+(?:{alts})\b"
        rf"|{modal}be\s+still\s+(?:{alts})\b"
        rf"|{modal}be\s+(?:already\s+)?(?:{alts})\b(?=[^.;!?\n]{{0,30}}\b(?:already|by now)\b)"
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
    return _possible_of(_zeroed(text))


def status_stated(text: str, truth: str) -> bool:
    """The text asserts ``truth`` and no status that contradicts it.

    Compatible statuses (shipped, for an order in transit or delivered) may be asserted in any
    tense; the stages before ``truth`` (:data:`HISTORY`) only in the past tense, as history:
    "it has been placed and is not processed yet" claims a current status. Words true of any
    order under way ("it's on its way") state a shipped or an in-transit order's status. A
    status said to be possible now (:func:`possible_statuses`) must be compatible too: a hedge
    over statuses states a wrong one.
    """
    said = _statements(text)
    allowed = COMPATIBLE.get(truth, frozenset())
    history = HISTORY.get(truth, frozenset())
    stated = truth in said or (UNDER_WAY in said and UNDER_WAY in allowed and not said[UNDER_WAY])
    return (
        stated
        and all(
            status == truth or status in allowed or (past and status in history)
            for status, past in said.items()
        )
        and all(status == truth or status in allowed for status in possible_statuses(text))
    )


#: What may set a written code's digit groups apart: up to two of a space of any width but a
#: line break, a dash of any kind, an underscore, a dot or a slash (a tracking-like token
#: also reads across one bare comma).
_SEP = r"(?:[^\S\n]|[\-\u2010-\u2015\u2212_./])"
#: Characters a code may carry that no reader sees: zero-width ones, soft hyphens, Markdown.
_INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad`*"
_INVISIBLE = str.maketrans("", "", _INVISIBLE_CHARS)
#: ``_INVISIBLE`` and every ``_SEP`` character (none lies past U+3000), deleted: a
#: translation, as a regex pass over the whole text cost as much as the scan.
_SQUASHED = str.maketrans(
    "",
    "",
    _INVISIBLE_CHARS + "".join(c for c in map(chr, range(0x3001)) if re.fullmatch(_SEP, c)),
)


def _code_text(text: str) -> str:
    return text.translate(_INVISIBLE).lower()


def code_stated(text: str, code: str) -> bool:
    """A code (tracking number, order id) appears, ignoring case and group separators."""
    return code.translate(_SQUASHED).lower() in text.translate(_SQUASHED).lower()


#: A tracking-number-like token: 11+ digits in groups set apart by ``_SEP``, after a
#: digit-letter prefix whose digit counts ("1Z…", which may stand apart). The world's
#: tracking numbers are a carrier prefix ("1Z", "94", "7", "C") and 12 digits. No word
#: boundary is asked for on either side: a number glued to a word ("REF1Z…", "…1111x") is
#: still written, and a boundary would let a list of such numbers hide every one but the
#: right one.
_TRACKING_LIKE = re.compile(
    r"(?=\d)(?:"  # a token starts with a digit: the look-ahead skips other places at once
    # An order id (group 1), its groups set apart or not: a long number, but not a tracking one.
    rf"(\d{{3}}{_SEP}?\d{{7}}{_SEP}?\d{{7}})(?!{_SEP}?\d)"
    rf"|(?:\d[a-z]{_SEP}{{0,2}})?\d(?:(?:{_SEP}{{0,2}}|,)\d){{10,}})"
)
_NOT_DIGIT = re.compile(r"\D")
#: A calendar date (2026-02-24, 02/24/2026): read apart before the scan, so dates written
#: side by side ("2026-02-24/2026-02-26") make no long number. A tracking number's random
#: digits seldom form one, so a number cannot hide in them.
_DATE_LIKE = re.compile(
    r"\b(?:(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)\d\d)\b"
)


def only_code_stated(text: str, code: str) -> bool:
    """:func:`code_stated`, and no other tracking-number-like token is written.

    Quoting the tracking number of every order states the right one among them: the customer
    was not told which is theirs. Grouped digits count as one token, so spacing the others
    out does not hide them; tokens are told apart by their digits, so a letter glued on in
    front ("REF1Z…") neither hides another number nor makes the right one another. The
    right number must itself be read as a token: written in a way the scan does not read
    (no-break spaces once), it hid every other number written the same way. Order ids are
    matched first, in the same scan, and skipped.
    """
    tokens = {
        _NOT_DIGIT.sub("", m.group(0))
        for m in _TRACKING_LIKE.finditer(_DATE_LIKE.sub(";", _code_text(text)))
        if m.group(1) is None
    }
    return tokens == {_NOT_DIGIT.sub("", code)} and code_stated(text, code)


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
    one of its readings is ``day``, and is another date when none is ``day`` or allowed.
    """
    found = dates_in(text, year=year, today=today) | more_dates(text, year=year, today=today)
    claims = [frozenset({x}) for x in found]
    if today is not None:
        claims += weekday_claims(text, today)
    if not any(day in c for c in claims):
        return False
    if allowed is None:
        return all(min(c) <= day for c in claims)
    ok = allowed | {day}
    return all(c & ok for c in claims)


# -- numbers, money, yes/no (policy answers) and return refusals (issue #7) -----------------------

_NUM = r"(\d[\d,]*(?:\.\d+)?)"
_MONEY_RE = (
    re.compile(rf"\$\s?{_NUM}"),
    re.compile(rf"\b{_NUM}\s*(?:dollars?|usd)\b", re.I),
    re.compile(rf"\busd\s?{_NUM}", re.I),
)
#: "N%", "N percent", "N-percent", "N per cent", "N pct" (and the fullwidth sign).
_PERCENT = r"[\s-]*(?:[%\uff05]|percent\b|per cent\b|pct\b)"
_PERCENT_RE = re.compile(rf"\b{_NUM}{_PERCENT}", re.I)
_DAYS_RE = re.compile(
    rf"\b{_NUM}[\s-]*(?:calendar[\s-]+|business[\s-]+|working[\s-]+)?"
    # "Two-day shipping" names a method, not how long this delivery takes.
    r"(?:days\b|day\b(?![\s-]*(?:shipping|delivery|air|express|service)\b))",
    re.I,
)
_WEEKS_RE = re.compile(rf"\b{_NUM}[\s-]*weeks?\b", re.I)
_MONTHS_RE = re.compile(rf"\b{_NUM}[\s-]*(?:months?\b|mos?\b\.?)", re.I)
_YEARS_RE = re.compile(rf"\b{_NUM}[\s-]*(?:years?|yrs?)\b(?!\s*membership)", re.I)
_INTERJECTION = (
    r"(?:unfortunately|sadly|regrettably|fortunately|happily|good news|great news|sorry"
    r"|i'm sorry|i am sorry|i'm afraid|i am afraid|actually|well|so)"
)
#: A list item's marker at the start of a line or sentence: "3)", "(3)", "b)", "3 -" ("3."
#: ends a sentence already). Not after a decimal point: "$4.50 - no fee" lists nothing.
_LIST_MARKER = r"(?:^|\n|[.!?:;]\s)\W*(?:\(?(?:\d{1,2}|[a-h])\)|\d{1,2}\s*[-\u2013\u2014])"
_YES_NO = re.compile(
    rf"(?:{_LIST_MARKER}|^|[.!?:;\n]\s*|\banswer is\s+|\b(?:that|it|this) is a\s+"
    r"|,\s*(?:and|so|but)\s+|\b(?:or|and)\s+(?:(?:maybe|possibly|perhaps|probably|even)\s+)?"
    rf"|\b{_INTERJECTION}\W+(?:but\s+)?)\W*(yes|yeah|yep|yup|no|nope)\b"
    r"(?![\s-]+(?:problem|worries|worry)\b)"
    # "No" before a word opens a sentence about something ("No receipt is needed", "No
    # doubt"), unless the word begins the answer's reason ("No, you can't", "No it isn't")
    # or its condition ("No if the item was used": a no, for that case).
    r"(?!(?<=no)\s+(?!(?:sorry|unfortunately|i|i'm|you|it|that|this|we|they|there|not|and|or|but"
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
    r"(?=[\s-]+(?:calendar[\s-]+|business[\s-]+|working[\s-]+)?"
    r"(?:percent|per cent|days?|weeks?|months?|years?)\b)",
    re.I,
)


def _digits(text: str) -> str:
    """Number words before a unit as digits: "fifteen percent", "a one-year warranty", "a year"."""

    def value(m: re.Match[str]) -> str:
        tens, ones, small, article = m.groups()
        if article:
            return "1"
        if small:
            return str(_ONES.index(small.lower()))
        return str(_TENS[tens.lower()] + (_ONES.index(ones.lower()) if ones else 0))

    return _WORD_NUMBER.sub(value, _SPANS.sub(lambda m: _SPAN_DIGITS[m.group(0).lower()], text))


#: Spans of time said without a number: "half a year", "the next business day".
_SPAN_DIGITS = {
    "half a year": "6 months",
    "a year and a half": "18 months",
    "next business day": "1 business day",
    "next-business-day": "1 business day",
}
_SPANS = re.compile("|".join(rf"\b{re.escape(k)}\b" for k in _SPAN_DIGITS), re.I)


#: What joins the numbers of a range or of alternatives ("6-12", "5–7", "8 to 10", "6 or 12").
_JOIN = r"\s*(?:[-\u2010-\u2015]|\bto\b|\bor\b|\bthrough\b|\bthru\b)\s*"
#: A bare number right before a range's last number: "6-" of "6-12 months", "between 34.99
#: and " of "between 34.99 and 39.99 dollars". Not a number glued to another token ("#2-",
#: "2026-03-06 -", "3/6-"): those are ids and dates, not a range's first value.
_RANGE_LEFT = re.compile(
    rf"(?:(?<![\w.,$#/\-]){_NUM}{_JOIN}|\bbetween\s+{_NUM}\s+and\s+)(?:\$\s?)?$", re.I
)
#: A range's later numbers after a money amount whose sign comes first ("$49.00–54.00",
#: "between $30 and 35"): the sign applies to them too.
_RANGE_RIGHT = re.compile(
    rf"(?:{_JOIN}|\s+(?P<and>and)\s+)(?:\$\s?)?{_NUM}(?![\d.,]*\d)(?!{_COUNT_UNIT})", re.I
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
    patterns: tuple[re.Pattern[str], ...], text: str, scale: float = 1.0, *, leading: bool = False
) -> list[float]:
    """Every number ``patterns`` read, with the ranges they end or start (:func:`_range_values`)."""
    out = []
    for pattern in patterns:
        for m in pattern.finditer(text):
            for raw in _range_values(text, m, leading=leading):
                with contextlib.suppress(ValueError):
                    out.append(float(raw.replace(",", "")) * scale)
    return out


#: A percentage said as the share paid back ("90% back", "90% of the price back", "90%
#: refunded", "a 90% refund", "refund of 90%", "you'd receive 90% of the price"): group 1,
#: 2 or 3 is the share.
_OF_THE_PRICE = (
    r"\s+of\s+(?:(?:the\s+|your\s+|its\s+)?(?:\w+\s+)?"
    r"(?:price|cost|purchase|amount|total|money|payment)|what\s+you\s+(?:paid|spent))"
)
_REFUND_SHARE_RE = re.compile(
    # On one line: "Restocking fee: 10%" over "Refund: $443.25" is a fee and an amount.
    rf"\b{_NUM}{_PERCENT}(?:{_OF_THE_PRICE})?"
    r"[^\S\n]+(?:(?:is|are|will\s+be|gets?)[^\S\n]+)?"
    r"(?:back|refunded|refund(?!\s+(?:fee|charge|deduction))|returned to you)\b"
    rf"|\brefund(?:ed)?:?\s+\(?(?:of\s+)?{_NUM}{_PERCENT}"
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
    text = _digits(text)
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


def numbers_stated(text: str, unit: str | None) -> list[float]:
    """Every value of ``unit`` the text states (``USD``, ``percent``, ``days``, ``months`` …).

    Money is a ``$`` amount, "N dollars" or "USD N"; percentages "N%" or "N percent"; days
    any "N days" (business or calendar) or, for calendar days, "N weeks" (×7); months
    "N months" or "N years" (×12). A count may be written in words ("fifteen percent", "a
    one-year warranty"); "a month" is not 30 days. Values of other units are ignored, so
    "within 30 days for $5.99" states one day count and one amount.
    """
    if unit in ("USD", "USD/year"):
        # "$N" and "USD N" carry their sign forward, "N dollars" back.
        return _floats((_MONEY_RE[0], _MONEY_RE[2]), text, leading=True) + _floats(
            (_MONEY_RE[1],), text
        )
    text = _digits(text)
    if unit == "percent":
        return _floats((_PERCENT_RE,), text)
    if unit == "days":
        return _floats((_DAYS_RE,), text) + _floats((_WEEKS_RE,), text, 7.0)
    if unit == "business days":
        return _floats((_DAYS_RE,), text)
    if unit == "months":
        return _floats((_MONTHS_RE,), text) + _floats((_YEARS_RE,), text, 12.0)
    return _floats((re.compile(rf"\b{_NUM}\b"),), text)


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
        r"|\b(?:won't|will not|don't|do not) (?:have|need) to pay\b",
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
        r"|\bdiscount (?:doesn't|does not|won't|will not) apply\b"
        r"|\b(?:doesn't|does not|don't|do not|won't|will not) (?:get|receive) (?:a|any) "
        r"(?:\w+ )?discount\b",
        re.I,
    ),
    "warranty": re.compile(
        r"\bno (?:\w+ )?warranty\b|(?:\bnot|n't) covered by (?:a|any)\b"
        r"|\bwarranty (?:doesn't|does not|won't|will not) (?:apply|cover)\b|\bwarranty: none\b"
        r"|\b(?:don't|do not|doesn't|does not) (?:offer|provide|give) (?:a|an|any) (?:\w+ )?warranty\b"
        r"|\bonly (?:the |a |its )?manufacturer'?s? (?:\w+ )?warranty\b"
        r"|\bonly covered by (?:the |a |its )?manufacturer\b"
        r"|\b(?:doesn't|does not|don't|do not|won't|will not) (?:come with|include|have|carry)"
        r" (?:a|an|any) (?:\w+ )?warranty\b",
        re.I,
    ),
}
#: A restocking fee said to be zero as the refund it leaves whole: "you'll get a full refund".
ZERO_WORDS["restocking"] = re.compile(
    ZERO_WORDS["fee"].pattern + r"|\bfull refund\b|\bnothing (?:is |will be |gets )?deducted\b",
    re.I,
)


def zero_stated(text: str, kind: str) -> bool:
    """The text says the value (a ``ZERO_WORDS`` kind of value) is zero, in words."""
    pattern = ZERO_WORDS.get(kind)
    return pattern is not None and bool(pattern.search(plain(text)))


def number_matches(value: float, truth: float, *, unit: str | None) -> bool:
    """Equal within exact cents for money, else a 1e-6 relative tolerance."""
    if unit in ("USD", "USD/year"):
        return round(value * 100) == round(float(truth) * 100)
    return abs(value - float(truth)) <= 1e-6 * max(1.0, abs(float(truth)))


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
    and saying both is no answer.
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
    no = [m.span() for m in _SAID_NO.finditer(low)]
    yes = [
        m
        for m in _SAID_YES.finditer(low)
        if not any(a <= m.start() < b or _INSTEAD.fullmatch(low, b, m.start()) for a, b in no)
    ]
    return ({False} if no else set()) | ({True} if yes else set())


#: Between a no and a later yes in the same sentence, "but" offers the yes as what the customer
#: can do instead: "Pickup isn't offered, but you can return it by mail" is a no.
_INSTEAD = re.compile(r"[^.!?\n]*\bbut\b[^.!?\n]*")


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
    r"|(?:can't|cannot|can not|unable to|not able to) help (?:you )?with (?:a |an |the |your |this )?"
    r"(?:return|exchange))\b",
    re.I,
)
#: A hedge in the clause before a refusal's words ("may not be eligible", "possibly because the
#: window has closed", "if the window has closed"): the refusal is not said.
_HEDGED = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|maybe|probably|likely|if|unless|whether)\b[^.,;:!?()\n]*$"
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


# -- carriers (status answers, issue #9) -----------------------------------------------------------

#: Carrier names as the world writes them (``shopgen.gen.world.CARRIERS``) and as people do.
CARRIER_WORDS: dict[str, tuple[str, ...]] = {
    "UPS": ("ups", "united parcel service"),
    "USPS": ("usps", "postal service"),
    "FedEx": ("fedex", "fed ex", "federal express"),
    "OnTrac": ("ontrac", "on trac"),
}
#: A carrier's name as a word, not the tail of a hyphenated one ("follow-ups", "mix-ups").
_CARRIER_RES = {
    name: re.compile(r"(?<!-)\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
    for name, words in CARRIER_WORDS.items()
}


def carriers_named(text: str) -> set[str]:
    """The carriers the text names (word by word, so "USPS" does not also name "UPS")."""
    return set(_carriers_of(_zeroed(text)))


@lru_cache(maxsize=4096)
def _carriers_of(text: str) -> frozenset[str]:
    """:func:`carriers_named`, remembered per text with digits zeroed (:func:`_zeroed`).

    A carrier's pattern is searched only when one of its names is in the text.
    """
    low = " ".join(plain(text).split())
    return frozenset(
        name
        for name, pattern in _CARRIER_RES.items()
        if any(word in low for word in CARRIER_WORDS[name]) and pattern.search(low)
    )


def carrier_stated(text: str, carrier: str) -> bool:
    """The text names ``carrier`` and no other carrier."""
    return _carriers_of(_zeroed(text)) == {carrier}
