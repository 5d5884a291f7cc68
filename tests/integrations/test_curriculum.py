"""AdaptiveDifficulty: RLVE promotion and sliding on scripted streams, checkpoints, axes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.curriculum import AXES, AdaptiveDifficulty, active_axes
from shopgen.schemas.errors import ConfigError


def test_starts_at_zero_and_draws_only_zero():
    c = AdaptiveDifficulty("cart", seed=1)
    assert c.window == (0, 0)
    assert {c.sample() for _ in range(50)} == {0}


def test_promotes_at_exactly_ninety_percent_and_not_below():
    c = AdaptiveDifficulty("cart", episodes_per_check=10)
    for i in range(10):
        c.record(0, i < 8)  # 80%
    assert c.window == (0, 0)
    for i in range(10):
        promoted = c.record(0, i < 9)  # 90%
    assert promoted
    assert c.window == (0, 1)


def test_counters_reset_at_each_check():
    c = AdaptiveDifficulty("cart", episodes_per_check=4)
    for ok in (False, False, False, False):  # a failed check
        c.record(0, ok)
    assert (c.count, c.correct) == (0, 0)
    for ok in (True, True, True, True):  # a clean check after it promotes: old failures forgotten
        c.record(0, ok)
    assert c.window == (0, 1)


def test_only_episodes_at_h_count():
    c = AdaptiveDifficulty("cart", episodes_per_check=2)
    c.record(0, True)
    c.record(0, True)
    assert c.window == (0, 1)
    for _ in range(10):
        assert not c.record(0, True)  # below h: ignored
    assert c.count == 0
    assert c.window == (0, 1)
    c.record(1, True)
    c.record(1, True)
    assert c.window == (0, 2)


def test_window_slides_with_width_four():
    c = AdaptiveDifficulty("cart", episodes_per_check=1)
    windows = []
    for _ in range(7):
        c.record(c.h, True)
        windows.append(c.window)
    assert windows == [(0, 1), (0, 2), (0, 3), (1, 4), (2, 5), (3, 6), (4, 7)]
    draws = {c.sample() for _ in range(400)}
    assert draws == {4, 5, 6, 7}


@given(st.lists(st.booleans(), min_size=1, max_size=300), st.integers(1, 20))
def test_h_equals_the_number_of_passed_checks(outcomes, per_check):
    """A scripted stream played at h: h rises once per block of per_check with ≥ 90% correct."""
    c = AdaptiveDifficulty("status", episodes_per_check=per_check)
    expected, block = 0, []
    for ok in outcomes:
        c.record(c.h, ok)
        block.append(ok)
        if len(block) == per_check:
            expected += sum(block) >= 0.9 * per_check
            block = []
    assert c.h == expected
    assert c.window == (max(0, expected - 3), expected)


@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=200), st.integers(0, 199)
)
def test_resumes_identically_from_a_checkpoint(stream, cut):
    def run(c, items):
        out = []
        for ok, switch in items:
            d = c.sample()
            c.record(d, ok, axes={"switch"} if switch else set())
            out.append((d, c.window))
        return out

    whole = AdaptiveDifficulty("cart", seed=7, episodes_per_check=3)
    full = run(whole, stream)
    first = AdaptiveDifficulty("cart", seed=7, episodes_per_check=3)
    head = run(first, stream[:cut])
    state = json.loads(json.dumps(first.state_dict()))
    resumed = AdaptiveDifficulty("cart", seed=999)
    resumed.load_state_dict(state)
    assert head + run(resumed, stream[cut:]) == full
    assert resumed.state_dict() == whole.state_dict()


def test_different_seeds_draw_differently():
    a, b = AdaptiveDifficulty("cart", seed=0), AdaptiveDifficulty("cart", seed=1)
    for c in (a, b):
        c.h = 7
    assert [a.sample() for _ in range(40)] != [b.sample() for _ in range(40)]


def test_per_axis_mode_holds_back_a_lagging_axis():
    def play(per_axis):
        c = AdaptiveDifficulty(
            "cart", episodes_per_check=20, per_axis=bool(per_axis), min_axis_episodes=5
        )
        for i in range(20):  # 19/20 overall, but the switch axis is 4/5
            c.record(0, i != 0, axes={"switch"} if i < 5 else set())
        return c.window

    assert play(False) == (0, 1)
    assert play(True) == (0, 0)


def test_axis_report_attributes_results(tasks):
    c = AdaptiveDifficulty(tasks[0].env)
    for t in tasks:
        c.record(t.d, False, task=t)
    report = c.axis_report()
    assert report["all"]["episodes"] == len(tasks)
    seen = set().union(*(active_axes(t) for t in tasks))
    assert set(report) == {"all", *seen}
    assert seen <= set(AXES)


def test_active_axes_reads_the_row(tasks):
    for t in tasks:
        script = t.decoded("user_script")
        assert ("omitted_slots" in active_axes(t)) == any(s["omitted"] for s in script["slots"])
        assert ("switch" in active_axes(t)) == (script.get("switch") is not None)


@pytest.mark.parametrize(
    "kwargs", [{"episodes_per_check": 0}, {"threshold": 0}, {"threshold": 1.5}, {"width": 0}]
)
def test_bad_config_is_refused(kwargs):
    with pytest.raises(ConfigError):
        AdaptiveDifficulty("cart", **kwargs)


def test_an_unknown_env_and_a_level_below_zero_are_refused():
    with pytest.raises(ConfigError, match="bogus"):
        AdaptiveDifficulty("bogus")
    c = AdaptiveDifficulty("cart")
    for d in (-3, 2.5, "4", True):
        with pytest.raises(ConfigError, match="level"):
            c.record(d, True)
    assert c.history == {}
    np = pytest.importorskip("numpy")
    c.record(np.int64(0), True)  # a numpy level is a level
    assert c.history == {"0:all": [1, 1]}


def test_state_of_another_env_is_refused():
    with pytest.raises(ConfigError, match="env"):
        AdaptiveDifficulty("cart").load_state_dict(AdaptiveDifficulty("status").state_dict())
