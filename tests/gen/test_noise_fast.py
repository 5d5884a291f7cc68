"""noise's one-draw-per-message typos and shorthand equal drawing run by run (the plain code)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen import noise
from shopgen.gen.noise import NEIGHBOURS, OPS, SHORTHAND, Segment
from shopgen.gen.seeding import generator


def _plain_typo_run(text, q, rng):
    """The reference: one run's uniforms drawn by three calls of its own, as before."""
    n = len(text)
    if n == 0:
        return text
    hits = (rng.random(n) < q).nonzero()[0]
    if hits.size == 0:
        return text
    ops = noise._CDF.searchsorted(rng.random(hits.size), side="right")
    picks = rng.random(hits.size)
    chars, skip = list(text), -1
    for i, op, pick in zip(hits.tolist(), ops.tolist(), picks.tolist(), strict=True):
        reach = 3 if OPS[op] == "transpose" else 2
        if i <= skip or any(c.isdigit() for c in text[max(0, i - 1) : i + reach]):
            continue  # numbers are kept as written
        near = "".join(c for c in NEIGHBOURS.get(text[i], "") if not c.isdigit())
        ch, kind = text[i], OPS[op]
        if kind == "transpose":
            if i + 1 < n and text[i + 1] != ch:
                chars[i], chars[i + 1] = text[i + 1], ch
                skip = i + 2
                continue
            kind = "double"
        if kind in ("substitute", "insert") and not near:
            kind = "double"
        skip = i + 1
        if kind == "substitute":
            chars[i] = near[int(pick * len(near))]
        elif kind == "delete":
            chars[i] = ""
        elif kind == "insert":
            chars[i] = ch + near[int(pick * len(near))]
        else:
            chars[i] = ch + ch
    return "".join(chars)


def _plain_typos(segments, p, rng):
    if p <= 0:
        return list(segments)
    r = p / noise.EXPECTED_COST
    q = min(1.0, r / max(1e-9, 1.0 - r * (1.0 + float(noise._WEIGHTS[-1]))))
    return [s if s.protected else Segment(_plain_typo_run(s.text, q, rng)) for s in segments]


def _plain_shorthand(segments, p, rng):
    """The reference: one draw per run that has matches."""
    if p <= 0:
        return list(segments)
    out = []
    for seg in segments:
        matches = [] if seg.protected else list(noise._SHORT_RE.finditer(seg.text))
        if not matches:
            out.append(seg)
            continue
        hit = rng.random(len(matches)) < p
        parts, last = [], 0
        for m, h in zip(matches, hit, strict=True):
            if h:
                short = SHORTHAND[m.group(0).lower()]
                cap = m.group(0)[0].isupper()
                parts += [seg.text[last : m.start()], short.capitalize() if cap else short]
                last = m.end()
        parts.append(seg.text[last:])
        out.append(Segment("".join(parts), False))
    return out


_WORDS = st.sampled_from(
    [*SHORTHAND, "Please", "THANKS", "With", "qwerty", "a", "aa", "order", "#A1", "é", " ", ""]
)
_TEXT = st.lists(_WORDS, max_size=12).map(" ".join) | st.text(max_size=30)
_SEGMENTS = st.lists(st.builds(Segment, _TEXT, st.booleans()), max_size=8)


@given(_SEGMENTS, st.floats(0.0, 0.6) | st.sampled_from([0.05, 0.12, 2.0]), st.integers(0, 2**63))
@settings(max_examples=300, deadline=None)
def test_typos_equal_run_by_run_draws(segments, p, seed):
    assert noise.typos(segments, p, generator(seed)) == _plain_typos(segments, p, generator(seed))


@given(_SEGMENTS, st.floats(0.0, 1.0), st.integers(0, 2**63))
@settings(max_examples=300, deadline=None)
def test_shorthand_equals_run_by_run_draws_and_leaves_the_stream_alike(segments, p, seed):
    fast, plain = generator(seed), generator(seed)
    assert noise.shorthand(segments, p, fast) == _plain_shorthand(segments, p, plain)
    assert fast.bit_generator.state == plain.bit_generator.state  # typos may follow on it


def test_a_noisy_message_with_many_runs_equals_the_reference():
    segs = [Segment("Please send it with care, thanks " * 3, i % 2 == 1) for i in range(9)]
    for seed in range(40):
        assert noise.typos(segs, 0.3, generator(seed)) == _plain_typos(segs, 0.3, generator(seed))
        short = noise.shorthand(segs, 0.5, generator(seed))
        assert short == _plain_shorthand(segs, 0.5, generator(seed))
    assert np.mean([noise.typos(segs, 0.3, generator(s)) != segs for s in range(40)]) == 1.0
