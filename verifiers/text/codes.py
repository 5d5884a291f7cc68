"""Codes an answer writes (tracking numbers, order ids), however their groups are spaced."""

from __future__ import annotations

import re

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
#: A calendar date (2026-02-24, 02/24/2026, 24.02.2026): read apart before the scan, so dates
#: written side by side ("2026-02-24/2026-02-26") make no long number. A tracking number's random
#: digits seldom form one, so a number cannot hide in them.
_DATE_LIKE = re.compile(
    r"\b(?:(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)\d\d"
    r"|(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.(?:19|20)\d\d)\b"
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
    return _tracking_like(text) == {_NOT_DIGIT.sub("", code)} and code_stated(text, code)


def _tracking_like(text: str) -> set[str]:
    """The digits of every tracking-number-like token the text writes (order ids skipped)."""
    return {
        _NOT_DIGIT.sub("", m.group(0))
        for m in _TRACKING_LIKE.finditer(_DATE_LIKE.sub(";", _code_text(text)))
        if m.group(1) is None
    }


def other_code_stated(text: str, code: str | None) -> bool:
    """A tracking-number-like token other than ``code`` is written (any one, if ``code`` is None)."""
    held = set() if code is None else {_NOT_DIGIT.sub("", code)}
    return bool(_tracking_like(text) - held)
