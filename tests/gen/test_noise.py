import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen import noise
from shopgen.gen.noise import (
    NEIGHBOURS,
    Segment,
    char_error_rate,
    edit_distances,
    join,
    shorthand,
    typos,
)
from shopgen.gen.seeding import stream

SENTENCE = "Hello there, I am looking for a pair of waterproof hiking boots that are comfortable"


def _lev(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@given(st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12)), min_size=1, max_size=20))
def test_vectorised_edit_distance_matches_reference(pairs):
    a, b = zip(*pairs, strict=True)
    assert edit_distances(list(a), list(b)).tolist() == [_lev(x, y) for x, y in pairs]


@pytest.mark.parametrize("p", [0.02, 0.05, 0.1, 0.125])
def test_realised_char_error_rate_matches_p(p):
    rng = stream(0, "test-noise", int(p * 1000))
    clean = [SENTENCE] * 2500
    noisy = [join(typos([Segment(s)], p, rng)) for s in clean]
    # ~200k characters: the estimate's relative standard error is ≤ 2% at p = 0.02.
    assert char_error_rate(noisy, clean) == pytest.approx(p, rel=0.07)


def test_zero_rate_is_identity():
    segs = [Segment(SENTENCE)]
    assert typos(segs, 0.0, stream(0, "z")) == segs
    assert shorthand(segs, 0.0, stream(0, "z")) == segs


@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=15), st.booleans()), min_size=1, max_size=8),
    st.floats(0.0, 0.5),
    st.integers(0, 2**32),
)
def test_protected_segments_survive_byte_for_byte(parts, p, seed):
    segs = [Segment(t, prot) for t, prot in parts]
    rng = stream(seed, "prop")
    out = typos(shorthand(segs, 1.0, rng), p, rng)
    assert len(out) == len(segs)
    for before, after in zip(segs, out, strict=True):
        assert after.protected == before.protected
        if before.protected:
            assert after.text == before.text


@given(
    st.lists(
        st.one_of(
            st.from_regex(r"[a-z]{1,8}", fullmatch=True),
            st.from_regex(r"\d{1,5}[%a-zA-Z]{0,3}", fullmatch=True),
        ),
        min_size=1,
        max_size=12,
    ),
    st.floats(0.0, 0.5),
    st.integers(0, 2**32),
)
def test_numbers_are_kept_as_written(words, p, seed):
    """A typo never falls on a digit or next to one, and never types one: "64GB", "65%" and
    "7 options" stay readable ("6GB", "56%", "7o ptions" and a stray "3" were typed before)."""
    text = " ".join(words)
    out = join(typos([Segment(text)], p, stream(seed, "digits")))
    assert re.findall(r"\d", out) == re.findall(r"\d", text)
    for m in re.finditer(r"\d+", text):
        assert text[max(0, m.start() - 1) : m.end() + 1] in out


def test_typos_are_keyboard_neighbours_or_doubles():
    rng = stream(1, "kinds")
    seen_sub = 0
    for _ in range(400):
        out = join(typos([Segment("qwerty")], 0.3, rng))
        if len(out) == 6 and sum(a != b for a, b in zip(out, "qwerty", strict=True)) == 1:
            i = next(i for i in range(6) if out[i] != "qwerty"[i])
            assert out[i] in NEIGHBOURS["qwerty"[i]]
            seen_sub += 1
    assert seen_sub > 20


def test_shorthand_rate_and_case():
    rng = stream(2, "short")
    text = "Please add it with care, thanks. " * 200
    out = join(shorthand([Segment(text)], 0.5, rng))
    n_pls = out.count("Pls")
    assert 60 < n_pls < 140  # 200 words at rate 0.5
    assert "w/" in out
    assert "thx" in out
    assert out.count("Pls") + out.count("Please") == 200


def test_same_stream_same_noise():
    a = join(typos([Segment(SENTENCE)], 0.1, stream(5, "same")))
    b = join(typos([Segment(SENTENCE)], 0.1, stream(5, "same")))
    c = join(typos([Segment(SENTENCE)], 0.1, stream(6, "same")))
    assert a == b != c


def test_edit_distances_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same length"):
        edit_distances(["a"], [])
    assert edit_distances([], []).shape == (0,)
    assert np.array_equal(edit_distances([""], ["abc"]), [3])


_WORDS = st.sampled_from(["please", "Thank you", "THANKS", "for", "your", "you", "ſomething", "K"])


@given(st.lists(st.one_of(_WORDS, st.text(max_size=6)), max_size=12))
def test_shorthand_regex_lookahead_finds_what_the_plain_alternation_finds(parts):
    """The first-letter lookahead is a pure speed-up: same matches as the bare alternation."""
    plain = re.compile(rf"\b({noise._SHORT_WORDS})\b", re.IGNORECASE)
    text = " ".join(parts)
    assert [m.span() for m in noise._SHORT_RE.finditer(text)] == [
        m.span() for m in plain.finditer(text)
    ]


@given(
    words=st.lists(
        st.sampled_from(["now", "on", "note", "knot", "one", "nose", "hold", "is", "a", "no"]),
        min_size=1,
        max_size=12,
    ),
    seed=st.integers(0, 2**32),
)
def test_a_typo_never_makes_a_word_a_negation(words, seed):
    """ "the extra must-have is now a sketchbook" read "… is no sketchbook" (3 of 171 bundle
    changes of mind), "hold on" read "hold no"."""
    text = " ".join(words)
    noisy = typos([Segment(text, False)], 0.3, stream(seed, "negation"))[0].text
    said = {w.lower() for w in re.findall(r"[A-Za-z']+", text)}
    for word in re.findall(r"[A-Za-z']+", noisy):
        assert word.lower() not in noise.NEGATIONS or word.lower() in said, (text, noisy)
