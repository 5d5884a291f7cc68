"""render's fast paths equal the plain computations they replace."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen import render
from shopgen.gen.noise import Segment
from shopgen.gen.render import REPLY_KINDS, phrasings
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, Slot, example_slots

_CHARS = st.sampled_from(
    ["a", " ", "{", "}", "\ue000", "\ue001", "\ue100", "\ue8ff", "\ue900", "é"]
)


def _plain_leaks(text):
    return "{" in text or "}" in text or any("\ue000" <= ch <= "\ue8ff" for ch in text)


@given(st.lists(_CHARS, max_size=12).map("".join) | st.text(max_size=20))
def test_leak_pattern_equals_the_per_character_check(text):
    assert (render._LEAK.search(text) is not None) == _plain_leaks(text)


def _plain_segments(raw, slots):
    """The reference: collapse the marked render's whitespace, then cut it at the marks."""
    text = " ".join(raw.split())
    segs, owners, last = [], [], 0
    for m in render._MARK.finditer(text):
        slot = slots[ord(m[1]) - render._BASE]
        segs += [
            Segment(render._SPACE_BEFORE_PUNCT.sub(r"\1", text[last : m.start()])),
            Segment(m[2], slot.protected),
        ]
        owners += [None, slot.name]
        last = m.end()
    segs.append(Segment(render._SPACE_BEFORE_PUNCT.sub(r"\1", text[last:]).rstrip()))
    owners.append(None)
    keep = [i for i, seg in enumerate(segs) if seg.text]
    return [segs[i] for i in keep], [owners[i] for i in keep]


def _plain(path, macro, context, shape, slots):
    return render._call(path, macro, context(shape, lambda i: render._mark(i, slots[i])))


_ODD = st.sampled_from(["", " ", "  x ", "\n", "a\tb", " , ", "x.", "\u3000y", "a  b", "(z)"])


def _spaced(goal, extras):
    """The goal with whitespace-odd values: runs, tabs, edges (titles can hold any of these)."""
    return [
        replace(s, value=f"{e}{s.value}{e}") if isinstance(s.value, str) else s
        for s, e in zip(goal, extras, strict=False)
    ] + list(goal[len(extras) :])


@pytest.mark.parametrize("env", ENVS)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 3),
    mask=st.integers(0, 2**12),
    extras=st.lists(_ODD, max_size=12),
)
@settings(max_examples=12, deadline=None)
def test_first_message_segments_equal_cutting_the_plain_render(env, seed, n, mask, extras):
    """A skeleton made from one goal cuts another goal's message as the plain render is cut."""
    a = example_slots(env, stream(seed, "a"), n=n)
    b = _spaced(example_slots(env, stream(seed, "b"), n=n), extras)
    shape = tuple((i, s.name) for i, s in enumerate(a) if s.required or mask >> i & 1)
    path = f"{env}/first.j2"
    render._SKELETONS.clear()  # a cache: emptying it only costs the next renders a miss
    for macros in phrasings(path).values():
        for macro in macros:
            skeleton = render._skeleton(path, macro, render._goal_context, shape, a)
            plain = _plain(path, macro, render._goal_context, shape, b)
            assert render._segments(skeleton, b) == _plain_segments(plain, b)


@pytest.mark.parametrize("kind", REPLY_KINDS)
@given(seed=st.integers(0, 10**6), extras=st.lists(_ODD, max_size=4))
@settings(max_examples=12, deadline=None)
def test_reply_segments_equal_cutting_the_plain_render(kind, seed, extras):
    env = ENVS[seed % len(ENVS)]
    a = example_slots(env, stream(seed, "a"), n=1)[:3]
    b = _spaced(example_slots(env, stream(seed, "b"), n=1)[:3], extras)
    shape = tuple(s.label for s in a)
    b = [replace(s, label=t.label) for s, t in zip(b, a, strict=False)][: len(a)]
    path = f"user/{kind}.j2"
    render._SKELETONS.clear()
    for macros in phrasings(path).values():
        for macro in macros:
            skeleton = render._skeleton(path, macro, render._reply_context, shape, a)
            plain = _plain(path, macro, render._reply_context, shape, b)
            assert render._segments(skeleton, b) == _plain_segments(plain, b)


_PLAIN_LABELS = ["budget", "minimum rating", "color", "size", "priority order", "Brand", "é"]
_ODD_LABELS = ["", " x", "x ", "a  b", "a\tb", ",x", ")", "x ,y", "x.", "{", "\ue900", "\ue011"]
_LABEL_TEXT = st.sampled_from([*_PLAIN_LABELS, *_ODD_LABELS])


@pytest.mark.parametrize("kind", REPLY_KINDS)
@given(seed=st.integers(0, 10**6), data=st.data(), extras=st.lists(_ODD, max_size=4))
@settings(max_examples=15, deadline=None)
def test_reply_skeletons_by_count_write_labels_as_rendering_them(kind, seed, data, extras):
    """A skeleton made for one set of labels serves another as rendering that one would."""
    env = ENVS[seed % len(ENVS)]
    a = example_slots(env, stream(seed, "a"), n=1)[:3]
    b = _spaced(example_slots(env, stream(seed, "b"), n=1)[: len(a)], extras)
    a = [replace(s, label=data.draw(_LABEL_TEXT)) for s in a]
    b = [replace(s, label=data.draw(_LABEL_TEXT)) for s in b]
    path = f"user/{kind}.j2"
    render._SKELETONS.clear()
    for macros in phrasings(path).values():
        for macro in macros:
            render._reply_skeleton(path, macro, a)  # the cache now holds a's skeletons
            got = render._segments(render._reply_skeleton(path, macro, b), b)
            shape = tuple(s.label for s in b)
            plain = _plain(path, macro, render._reply_context, shape, b)
            assert got == _plain_segments(plain, b), macro


def test_reply_skeletons_are_shared_across_plain_labels():
    slots = example_slots("discovery", stream(0, "a"), n=1)[:2]
    path, macro = "user/answer.j2", phrasings("user/answer.j2")["any"][0]
    render._SKELETONS.clear()
    assert len(slots) == 2
    for labels in (("budget", "color"), ("size", "minimum rating")):
        labelled = [replace(s, label=t) for s, t in zip(slots, labels, strict=True)]
        render._reply_skeleton(path, macro, labelled)
    assert len(render._SKELETONS) == 1  # one Jinja render for both


_KINDS = ("text", "order_ref", "brand")
_PIECE = st.lists(
    st.sampled_from(["", " ", "\n ", "Hi", "a,", " ,", " .", "x  y", "?"]), max_size=4
)


@given(st.lists(st.tuples(_PIECE, _ODD), max_size=4), _PIECE, st.data())
def test_segments_equal_cutting_any_marked_text(pieces, tail, data):
    """Any text with marked values (spaces at the ends, before punctuation, inside values)."""
    slots = [Slot(name=f"s{i}", value="", kind=k, label=k) for i, k in enumerate(_KINDS)]
    texts = ["".join(text) for text, _ in pieces]
    holes = [data.draw(st.integers(0, len(slots) - 1)) for _ in pieces]
    a = [
        replace(slots[i], value=f"{value}v{value}")
        for i, (_, value) in zip(holes, pieces, strict=True)
    ]
    values = {i: replace(slots[i], value=data.draw(_ODD) + "w") for i in holes}
    b = [values.get(i, s) for i, s in enumerate(slots)]

    def marked(said: list[Slot]) -> str:
        """The texts with each hole's slot value marked, as a template's render has them."""
        body = "".join(t + render._mark(i, s) for t, i, s in zip(texts, holes, said, strict=True))
        return body + "".join(tail)

    skeleton = render._Skeleton.of(marked(a))
    assert render._segments(skeleton, b) == _plain_segments(marked([b[i] for i in holes]), b)
