"""The world's fast paths give exactly what the straightforward NumPy call would."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from shopgen.gen.world import _event_order
from shopgen.gen.world_products import sorted_search

_ints = st.integers(min_value=-(2**40), max_value=2**40)


@given(
    st.integers(0, 300).flatmap(
        lambda n: st.tuples(
            arrays(np.int64, n, elements=st.integers(0, 2**20)),
            arrays(np.int64, n, elements=_ints),
            arrays(np.int64, n, elements=st.integers(0, 2)),
        )
    )
)
def test_event_order_is_the_stable_lexsort(cols):
    session, ts, kind = cols
    assert (_event_order(session, ts, kind) == np.lexsort((kind, ts, session))).all()


def test_event_order_falls_back_when_the_key_would_overflow():
    session = np.array([2**40, 0, 2**40, 0], dtype=np.int64)
    ts = np.array([2**30, 5, -(2**30), 5], dtype=np.int64)
    kind = np.array([0, 2, 1, 1], dtype=np.int64)
    assert (_event_order(session, ts, kind) == np.lexsort((kind, ts, session))).all()


@given(
    arrays(np.float64, st.integers(1, 200), elements=st.floats(0, 10)),
    arrays(np.float64, st.integers(0, 200), elements=st.floats(0, 2000)),
)
def test_sorted_search_is_searchsorted_right(weights, target):
    cum = np.cumsum(weights)
    assert (sorted_search(cum, target) == np.searchsorted(cum, target, side="right")).all()
