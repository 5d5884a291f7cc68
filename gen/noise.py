"""Typo and shorthand noise over rendered text, which never touches protected spans.

Text arrives as :class:`Segment` runs, each marked protected or not by the renderer (it knows
which values are order numbers or prices; a regex afterwards would only guess). Noise rewrites
the unprotected runs and copies the protected ones byte-for-byte, so a typo can never make a
task unsolvable.

Why not ``textnoisr``: it was evaluated (issue #4). Its realised character-error rate does
match the requested level, but it draws from a ``random.Random`` of its own, where every
stream here must come from :func:`shopgen.gen.seeding.stream`; it substitutes uniformly random
letters rather than keyboard neighbours; it has no doubled-letter typo; and it has no notion of
protected spans (splitting around them would apply its unbiasing per fragment). The model
below is small: each unprotected character starts a typo with probability ``p / E[cost]``,
where a transposition costs two character errors and every other typo one, so the expected
Levenshtein character-error rate equals ``p`` (``tests/gen/test_noise.py`` measures it).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Typo kinds and their shares. A transposition costs 2 edits; the others cost 1.
OPS: tuple[str, ...] = ("substitute", "delete", "insert", "double", "transpose")
_WEIGHTS = np.array([0.35, 0.2, 0.1, 0.15, 0.2])
_CDF = _WEIGHTS.cumsum() / _WEIGHTS.cumsum()[-1]
#: The CDF as floats: ``bisect_right`` on it is ``_CDF.searchsorted(u, side="right")``.
_CDF_LIST: list[float] = _CDF.tolist()
_COST = np.array([1, 1, 1, 1, 2])
EXPECTED_COST = float(_WEIGHTS @ _COST)

_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")
_STAGGER = (0.0, 0.5, 0.75, 1.25)


def _neighbours() -> dict[str, str]:
    pos = {ch: (x + _STAGGER[y], y) for y, row in enumerate(_ROWS) for x, ch in enumerate(row)}
    out: dict[str, str] = {}
    for ch, (x, y) in pos.items():
        near = [
            o for o, (ox, oy) in pos.items() if o != ch and abs(oy - y) <= 1 and abs(ox - x) <= 1
        ]
        out[ch] = "".join(sorted(near))
        if ch.isalpha():
            out[ch.upper()] = "".join(sorted(near)).upper()
    return out


#: QWERTY keys physically next to each key (the fat-finger model of substitution and insertion).
NEIGHBOURS: dict[str, str] = _neighbours()
#: The same, without the digit keys: a typo never types a digit ("into my cart 3 me" read as a
#: quantity, "7o ptions" hid one).
_TYPED: dict[str, str] = {
    ch: "".join(c for c in near if not c.isdigit()) for ch, near in NEIGHBOURS.items()
}

#: Word → chat shorthand. Lower-case keys; the first letter's case is carried over.
SHORTHAND: dict[str, str] = {
    "please": "pls",
    "thanks": "thx",
    "thank you": "ty",
    "quantity": "qty",
    "with": "w/",
    "without": "w/o",
    "you": "u",
    "your": "ur",
    "are": "r",
    "because": "bc",
    "tomorrow": "tmrw",
    "something": "smth",
    "really": "rly",
    "probably": "prob",
    "message": "msg",
    "about": "abt",
    "people": "ppl",
    "okay": "ok",
    "before": "b4",
    "for": "4",
}
_SHORT_WORDS = "|".join(sorted(map(re.escape, SHORTHAND), key=len, reverse=True))
_SHORT_FIRST = "".join(sorted({w[0] for w in SHORTHAND}))
# The lookahead changes no match (every word starts with one of those letters); it only spares
# the 20-way alternation at word starts that cannot match, which makes finditer ~2x faster.
_SHORT_RE = re.compile(rf"\b(?=[{_SHORT_FIRST}])({_SHORT_WORDS})\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of rendered text; a protected run must reach the customer's message unchanged."""

    text: str
    protected: bool = False


def join(segments: Sequence[Segment]) -> str:
    """The text of the segments, concatenated."""
    return "".join(s.text for s in segments)


@lru_cache(maxsize=1 << 14)
def _short_spots(text: str) -> tuple[tuple[int, int, str], ...]:
    """Each shorthand-able word of ``text``: where it starts and ends, and what replaces it.

    Remembered per text: most unprotected runs are a template skeleton's text between slot
    values, the same few strings in message after message.
    """
    spots = []
    for m in _SHORT_RE.finditer(text):
        word = m.group(0)
        short = SHORTHAND[word.lower()]
        spots.append((m.start(), m.end(), short.capitalize() if word[0].isupper() else short))
    return tuple(spots)


def shorthand(segments: Sequence[Segment], p: float, rng: np.random.Generator) -> list[Segment]:
    """Replace each shorthand-able word of the unprotected runs with probability ``p``.

    One uniform per match, in text order, drawn in one call for the whole message (the same
    draws as one call per run: a uniform is one raw word, so calls concatenate).
    """
    if p <= 0:
        return list(segments)
    found = [() if seg.protected else _short_spots(seg.text) for seg in segments]
    total = sum(map(len, found))
    if not total:
        return list(segments)
    hits = (rng.random(total) < p).tolist()
    out, at = [], 0
    for seg, spots in zip(segments, found, strict=True):
        if not spots:
            out.append(seg)
            continue
        text, parts, last = seg.text, [], 0
        for (start, end, short), h in zip(spots, hits[at : at + len(spots)], strict=True):
            if h:
                parts += [text[last:start], short]
                last = end
        at += len(spots)
        parts.append(text[last:])
        out.append(Segment("".join(parts), False))
    return out


def typos(segments: Sequence[Segment], p: float, rng: np.random.Generator) -> list[Segment]:
    """Per-character typos at expected character-error rate ``p`` in the unprotected runs.

    Each unprotected run, in order, takes one uniform per character (does a typo start
    here?), then one per typo for its kind and one per typo for its replacement key. Those
    uniforms are drawn in one block for the whole message instead of three calls per run:
    a uniform is one raw word of the stream, so the block holds the same values in the same
    order, and at most three per character are ever needed. The stream is spent afterwards
    (the block's unused tail is drawn too): give each message a stream of its own.
    ``tests/gen/test_noise_fast.py`` checks the output equals drawing run by run.

    Args:
        segments: rendered runs; protected ones are copied unchanged.
        p: expected Levenshtein edits per unprotected character (``θ.p_noise``).
        rng: the caller's keyed stream, used by this call alone.

    Returns:
        New segments, one per input segment, with the same protected flags.
    """
    if p <= 0:
        return list(segments)
    q = _start_rate(p)
    n = sum(len(seg.text) for seg in segments if not seg.protected)
    if n == 0:
        return list(segments)
    block = rng.random(3 * n)
    starts = (block < q).nonzero()[0].tolist()  # candidates anywhere in the block, ascending
    out, at, j = [], 0, 0
    for seg in segments:
        if seg.protected or not seg.text:
            out.append(seg)
            continue
        end = at + len(seg.text)
        j = bisect_left(starts, at, j)
        k = bisect_left(starts, end, j)
        hits = [i - at for i in starts[j:k]]
        if hits:
            draws = block[end : end + 2 * len(hits)].tolist()
            ops = [bisect_right(_CDF_LIST, u) for u in draws[: len(hits)]]
            seg = Segment(_typo_run(seg.text, hits, ops, draws[len(hits) :]))
            end += 2 * len(hits)
        out.append(seg)
        at, j = end, k
    return out


@lru_cache(maxsize=256)
def _start_rate(p: float) -> float:
    """The per-character probability that a typo starts, for edit rate ``p`` (see :func:`typos`).

    Typos are kept one character apart so two never merge into a cheaper edit (a deletion
    next to a doubled letter cancels out). Each typo then uses its own characters plus a gap,
    so the start probability q solves r = 1 / (1/q + 1 + share_transpose) for the target
    typo rate r = p / E[cost]. Remembered: a run uses a few rates (one per difficulty).
    """
    r = p / EXPECTED_COST
    return min(1.0, r / max(1e-9, 1.0 - r * (1.0 + float(_WEIGHTS[-1]))))


def _typo_run(text: str, hits: list[int], ops: list[int], picks: list[float]) -> str:
    """``text`` with a typo of kind ``OPS[op]`` at each hit position.

    Each hit's ``picks`` entry (a uniform) picks the neighbouring key a typo types. A number
    is kept as written: no typo falls on a digit or next to one, and none types a digit, so a
    model number ("64GB", "65% keyboard"), a count ("7 options") or a quantity reads as the
    customer meant it (an audit of 520 first messages found 13 numbers changed or glued to a
    word, and 12 digits typed where none was).
    """
    n = len(text)
    chars = list(text)
    # Each position becomes a string; a transposition consumes the next position too.
    skip = -1
    for i, op, pick in zip(hits, ops, picks, strict=True):
        if i <= skip or _near_digit(text, i, 3 if OPS[op] == "transpose" else 2):
            continue
        ch = text[i]
        near = _TYPED.get(ch, "")
        kind = OPS[op]
        if kind == "transpose":
            if i + 1 < n and text[i + 1] != ch:
                if not _negates(text, i, text[i + 1] + ch, 2):
                    chars[i], chars[i + 1] = text[i + 1], ch
                    skip = i + 2
                continue
            kind = "double"  # nothing to swap with: a one-edit typo instead
        if kind in ("substitute", "insert") and not near:
            kind = "double"
        if kind == "substitute":
            typed = near[int(pick * len(near))]
        elif kind == "delete":
            typed = ""
        elif kind == "insert":
            typed = ch + near[int(pick * len(near))]
        else:
            typed = ch + ch
        if not _negates(text, i, typed, 1):
            chars[i] = typed
            skip = i + 1
    return "".join(chars)


#: Words that say no: a typo never makes one ("now" → "no", "hold on" → "hold no", "note"
#: → "not"), which turned "the extra must-have is now a sketchbook" into "… is no
#: sketchbook" (3 of 171 bundle changes of mind at d = 0–12, 5k products).
NEGATIONS = frozenset({"no", "not", "nor", "non", "none", "never", "nope", "nah"})
_LETTER = re.compile(r"[A-Za-z']")
_WORD = re.compile(r"[A-Za-z']+")


def _negates(text: str, i: int, typed: str, width: int) -> bool:
    """Whether ``text[i : i + width]`` typed as ``typed`` makes a word a negation.

    The words the typo touches are read whole, a transposition across a space too ("now
    now" → "no wnow").
    """
    start = i
    while start > 0 and _LETTER.match(text[start - 1]):
        start -= 1
    end = i + width
    while end < len(text) and _LETTER.match(text[end]):
        end += 1
    was = {w.lower() for w in _WORD.findall(text[start:end])}
    now = {w.lower() for w in _WORD.findall(text[start:i] + typed + text[i + width : end])}
    return bool((now - was) & NEGATIONS)


def _near_digit(text: str, i: int, reach: int) -> bool:
    """Whether ``text[i - 1 : i + reach]`` holds a digit (what a typo at ``i`` could touch)."""
    return any(c.isdigit() for c in text[max(0, i - 1) : i + reach])


def edit_distances(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Levenshtein distance of each pair ``(a[i], b[i])``, vectorised over the pairs.

    Row ``i`` of the dynamic programme is ``min`` of substitution and deletion candidates,
    then the insertion chain ``D[i][j] = min(D[i][j], D[i][j-1] + 1)`` resolved for the whole
    row at once as ``j + cummin(cand[k] - k)``. Used to measure character-error rates in tests
    and benchmarks without a compiled dependency.
    """
    if len(a) != len(b):
        raise ValueError("edit_distances needs two sequences of the same length")
    if not a:
        return np.zeros(0, dtype=np.int64)
    la = np.array([len(s) for s in a])
    lb = np.array([len(s) for s in b])
    wa, wb = int(la.max()), int(lb.max())
    xa = np.full((len(a), max(wa, 1)), -1, dtype=np.int64)
    xb = np.full((len(b), max(wb, 1)), -2, dtype=np.int64)
    for k, (s, t) in enumerate(zip(a, b, strict=True)):
        xa[k, : len(s)] = [ord(c) for c in s]
        xb[k, : len(t)] = [ord(c) for c in t]
    cols = np.arange(wb + 1)
    prev = np.broadcast_to(cols, (len(a), wb + 1)).copy()
    out = np.where(la == 0, lb, 0)
    for i in range(1, wa + 1):
        sub = prev[:, :-1] + (xa[:, i - 1 : i] != xb[:, :wb])
        cand = np.empty_like(prev)
        cand[:, 0] = i
        cand[:, 1:] = np.minimum(sub, prev[:, 1:] + 1)
        row = cols + np.minimum.accumulate(cand - cols, axis=1)
        done = la == i
        out[done] = row[done, lb[done]]
        prev = row
    return out


def char_error_rate(
    noisy: Sequence[str], clean: Sequence[str], *, chars: int | None = None
) -> float:
    """Total edit distance over total characters (``chars``, or the length of ``clean``)."""
    total = sum(len(s) for s in clean) if chars is None else chars
    return float(edit_distances(noisy, clean).sum()) / max(total, 1)
