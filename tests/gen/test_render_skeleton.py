"""The render caches: the skeleton cache is bounded, lazy child streams draw what eager ones do.

That a skeleton's segments equal the plain Jinja render is tested in ``test_render_fast.py``.
"""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen import render
from shopgen.gen.difficulty import theta
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


@given(
    seed=st.integers(0, 2**63 - 1),
    env=st.sampled_from(ENVS),
    d=st.integers(0, 12),
    required=st.lists(st.booleans(), min_size=8, max_size=8),
)
@settings(max_examples=60, deadline=None)
def test_dropped_slots_follow_one_uniform_per_slot_of_the_drop_stream(seed, env, d, required):
    """The renderer draws only up to the last optional slot; the drops are the full rule's.

    The rule: child stream 1 of the message stream gives one uniform per slot, in order, and
    an optional slot is dropped when its uniform is below ``p_missing``.
    """
    goal = example_slots(env, stream(seed, "goal"), n=3)
    goal = tuple(
        replace(s, required=s.required or req) for s, req in zip(goal, required, strict=False)
    )
    r = render_first_message(env, goal, d=d, rng=stream(seed, "msg"))
    seeds = stream(seed, "msg").integers(0, 2**63, size=4).tolist()
    draws = np.random.Generator(np.random.PCG64(seeds[1])).random(len(goal))
    p_missing = theta(d).p_missing
    expected = tuple(
        s.name for s, u in zip(goal, draws, strict=True) if not s.required and u < p_missing
    )
    assert r.dropped == expected


def test_all_required_first_message_never_seeds_its_drop_stream(monkeypatch):
    goal = tuple(replace(s, required=True) for s in example_slots("returns", stream(1, "g")))
    rng = stream(1, "m")
    built = []
    real = np.random.PCG64
    monkeypatch.setattr(render.np.random, "PCG64", lambda s: built.append(s) or real(s))
    r = render_first_message("returns", goal, d=0, rng=rng)
    assert r.dropped == ()
    assert len(built) == 2  # the style and phrasing streams; d=0 has no noise to seed
