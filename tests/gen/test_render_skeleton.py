"""The render caches: the skeleton cache is bounded, lazy child streams draw what eager ones do.

That a skeleton's segments equal the plain Jinja render is tested in ``test_render_fast.py``.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen import render
from shopgen.gen.render import render_first_message, render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, example_slots


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
