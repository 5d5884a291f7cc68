"""Fast paths of bundle generation give exactly what the plain computation gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, _build_slot, make_slot
from shopgen.gen.tasks.base import Redraw
from shopgen.gen.tasks.bundle import OOS_CANDIDATES, Kind, _cheapest, _stock_outs, title_names
from shopgen.schemas.errors import ConfigError


def _kind(i: int, n: int) -> Kind:
    return Kind(
        category=f"c{i}",
        noun=f"n{i}",
        aliases=(f"n{i}",),
        product_ids=tuple(f"P{i}-{j}" for j in range(n)),
        prices=np.arange(n, dtype=np.float64),
    )


def _stock_outs_per_kind(kinds, p_oos, rng):
    # The plain formulation: one draw per kind, in kind order.
    out = {}
    for kind in kinds:
        draws = rng.random(min(OOS_CANDIDATES, len(kind.product_ids) - 1)).tolist()
        out[kind.category] = tuple(i for i, u in enumerate(draws) if u < p_oos)
    return out


@given(
    st.lists(st.integers(1, 12), max_size=8),
    st.floats(0, 1),
    st.integers(0, 2**32),
)
def test_stock_outs_draw_as_one_draw_per_kind(sizes, p_oos, seed):
    kinds = [_kind(i, n) for i, n in enumerate(sizes)]
    fast, plain = stream(seed, "oos"), stream(seed, "oos")
    assert _stock_outs(kinds, p_oos, fast) == _stock_outs_per_kind(kinds, p_oos, plain)
    # The stream is left where the plain code leaves it: later draws agree too.
    assert fast.random() == plain.random()


_names = st.sampled_from(["project", "budget", "must.0", "must.3", "nope", "must.x"])
_values = st.one_of(
    st.sampled_from(["camping", "300", " ", 300, 0, -1, True, 2.5, -0.0, None]),
    st.text(max_size=12),
    st.integers(-5, 10**6),
    st.floats(-1, 1e6),
)


def _outcome(fn, env, name, value, required):
    try:
        return fn(env, name, value, required=required)
    except ConfigError as e:
        return ("error", str(e))


def _plain(env, name, value, *, required):
    return _build_slot(env, name, value, required)


@given(st.sampled_from(ENVS), _names, _values)
def test_make_slot_equals_building_it(other_env, name, value):
    # Both ``required`` values and the same call twice: a remembered slot must still be the
    # plain result for exactly these arguments.
    for env in ("bundle", other_env):
        for required in (False, True, False):
            got = _outcome(make_slot, env, name, value, required)
            assert got == _outcome(_plain, env, name, value, required)
            if not isinstance(got, tuple):
                assert type(got.value) is type(value)


def test_make_slot_keeps_int_and_float_apart():
    assert type(make_slot("bundle", "budget", 300, required=True).value) is int
    assert type(make_slot("bundle", "budget", 300.0, required=True).value) is float
    # Equal keys of other types must not be answered from the memo.
    make_slot("bundle", "budget", 0.0, required=True)
    assert str(make_slot("bundle", "budget", -0.0, required=True).value) == "-0.0"
    assert type(make_slot("bundle", "must.0", 1, required=True).value) is int
    assert make_slot("bundle", "must.0", True, required=True).value is True
    with pytest.raises(ConfigError):
        make_slot("bundle", "project", "camping", required=False)


def _cheapest_plain(noun, aliases, cards):
    # The plain formulation: every fitting card, then the smallest (price, product id).
    fits = [c for c in cards if c["stock_qty"] > 0 and title_names(c["title"], aliases)]
    if not fits:
        raise Redraw(f"no in-stock {noun} shown")
    best = min(fits, key=lambda c: (c["price"], c["product_id"]))
    return {**best, "noun": noun}


_cards = st.lists(
    st.fixed_dictionaries(
        {
            "product_id": st.sampled_from(["B1", "B2", "B3", "C1", "C2"]),
            "title": st.sampled_from(
                ["Trail Tent 2p", "Tents for two", "Tentative lamp", "Sleeping Bag", "lantern"]
            ),
            "price": st.sampled_from([0.0, 9.99, 10.0, 10.0, 25.5, 99.0]),
            "stock_qty": st.integers(-1, 3),
        }
    ),
    max_size=20,
)


@given(_cards, st.sampled_from([("tent",), ("sleeping bag", "bag"), ("lantern", "tent")]))
def test_cheapest_equals_filter_then_min(cards, aliases):
    def outcome(fn):
        try:
            return fn("kind", aliases, cards)
        except Redraw as e:
            return ("redraw", str(e))

    got = outcome(_cheapest)
    assert got == outcome(_cheapest_plain)
    if isinstance(got, dict):  # the very card object's fields, plus the noun
        assert got["noun"] == "kind"
