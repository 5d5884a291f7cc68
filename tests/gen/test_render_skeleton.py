"""The render fast paths equal their references: skeleton fill == Jinja, lazy == eager streams."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen import render
from shopgen.gen.render import REPLY_KINDS, phrasings, render_first_message, render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, example_slots


def _plain(path, macro, context, shape, slots):
    """The reference: the macro rendered by Jinja with these slots' marked values."""
    return render._call(path, macro, context(shape, lambda i: render._mark(i, slots[i])))


def _kept(goal, mask):
    return tuple((i, s.name) for i, s in enumerate(goal) if s.required or mask >> i & 1)


@pytest.mark.parametrize("env", ENVS)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3), mask=st.integers(0, 2**12))
@settings(max_examples=15, deadline=None)
def test_first_message_skeleton_fill_equals_jinja_for_every_macro(env, seed, n, mask):
    """A skeleton made from one goal, filled with another goal's values, is the plain render."""
    a = example_slots(env, stream(seed, "a"), n=n)
    b = example_slots(env, stream(seed, "b"), n=n)
    assert [s.name for s in a] == [s.name for s in b]
    shape = _kept(a, mask)
    path = f"{env}/first.j2"
    render._SKELETONS.clear()  # a cache: emptying it only costs the next renders a miss
    for macros in phrasings(path).values():
        for macro in macros:
            first = render._render(path, macro, render._goal_context, shape, a)
            assert first == _plain(path, macro, render._goal_context, shape, a)
            assert (path, macro, render._goal_context, shape) in render._SKELETONS
            filled = render._render(path, macro, render._goal_context, shape, b)
            assert filled == _plain(path, macro, render._goal_context, shape, b)


@pytest.mark.parametrize("kind", REPLY_KINDS)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 4))
@settings(max_examples=15, deadline=None)
def test_reply_skeleton_fill_equals_jinja_for_every_macro(kind, seed, k):
    a = example_slots("returns", stream(seed, "a"))[:k]
    b = example_slots("returns", stream(seed, "b"))[:k]
    shape = tuple(s.label for s in a)
    path = f"user/{kind}.j2"
    render._SKELETONS.clear()  # a cache: emptying it only costs the next renders a miss
    for macros in phrasings(path).values():
        for macro in macros:
            render._render(path, macro, render._reply_context, shape, a)
            filled = render._render(path, macro, render._reply_context, shape, b)
            assert filled == _plain(path, macro, render._reply_context, shape, b)


def test_skeleton_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(render, "_SKELETONS", {})
    monkeypatch.setattr(render, "_SKELETONS_LIMIT", 5)
    for k in range(40):
        env = ENVS[k % len(ENVS)]
        render_first_message(env, example_slots(env, stream(k, "b")), d=8, rng=stream(k))
    assert len(render._SKELETONS) == 5


@given(seed=st.integers(0, 2**63 - 1), n=st.integers(1, 5))
@settings(max_examples=50)
def test_lazy_children_draw_what_eager_children_draw(seed, n):
    """Each lazy child is the eager ``Generator(PCG64(seed))`` stream, built on first use."""
    lazy = render._children(np.random.Generator(np.random.PCG64(seed)), n)
    seeds = np.random.Generator(np.random.PCG64(seed)).integers(0, 2**63, size=n)
    for child, s in zip(lazy, seeds.tolist(), strict=True):
        eager = np.random.Generator(np.random.PCG64(s))
        assert child.random(3).tolist() == eager.random(3).tolist()
        assert child.integers(1000) == eager.integers(1000)


def test_noise_free_render_leaves_its_noise_stream_unseeded(monkeypatch):
    """Zero shorthand and typo rates draw nothing, so the noise stream is never seeded."""
    goal, rng = example_slots("returns", stream(0, "quiet")), stream(0, "quiet", 1)
    built = []
    real = np.random.PCG64
    monkeypatch.setattr(render.np.random, "PCG64", lambda s: built.append(s) or real(s))
    r = render_user_reply("answer", goal[:2], style="polite", rng=rng)
    assert r.text == r.clean
    assert len(built) == 1  # the phrasing stream only
