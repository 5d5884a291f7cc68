"""The paging step's fast paths around retrieval equal their plain formulations (issue #7).

- ``SearchIndex._degrade`` (draws read as Python floats, the pool marked in a byte per row)
  picks exactly the distractors the NumPy formulation (compare, ``flatnonzero``, the pool as
  a set) picked;
- ``CachedSearch._key`` (one probe of the memo with the finished key) accepts and refuses
  exactly the keys the per-part ``Hashable`` check did, and refuses the junk that check let
  through;
- the ``catalog_search`` tool's memoised seed equals the hash it replaces.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopgen.env.search import SearchIndex, cards_shown
from shopgen.env.search_cache import CachedSearch
from shopgen.env.tools.catalog import search_seed
from shopgen.gen.seeding import stable_hash, stream

SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def index(indexed_catalog_dir: Path) -> SearchIndex:
    return SearchIndex.open(indexed_catalog_dir)


def _reference_degrade(
    index: SearchIndex, pool: np.ndarray, top_k: int, eps_rank: float, seed: int, call_index: int
) -> list[int]:
    """The paging step as first written: the draws compared and indexed as NumPy arrays."""
    n_shown = cards_shown(top_k)
    shown = pool[:n_shown].tolist()
    if not shown or eps_rank == 0.0:
        return shown
    rng = stream(seed, "catalog_search", call_index)
    draws = rng.random((n_shown, 2))[: len(shown)]
    replaced = np.flatnonzero(draws[:, 0] < eps_rank).tolist()
    if not replaced:
        return shown
    in_pool = set(pool.tolist())
    on_page = set(shown)
    for i in replaced:
        u = float(draws[i, 1])
        distractor = index._distractor(shown[i], u, on_page, in_pool.__contains__)
        if distractor < 0:
            distractor = index._distractor(shown[i], u, on_page)
        if distractor >= 0:
            on_page.add(distractor)
            shown[i] = distractor
    return shown


@SETTINGS
@given(
    data=st.data(),
    top_k=st.integers(1, 250),
    eps_rank=st.one_of(st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.floats(0.0, 1.0)),
    seed=st.integers(0, 2**63 - 1),
    call_index=st.integers(0, 50),
)
def test_degrade_equals_the_numpy_formulation(index, data, top_k, eps_rank, seed, call_index):
    # Pools as retrieval makes them (distinct rows, any length up to the depth), including
    # short ones (fewer rows than cards shown), and whole categories first: then every
    # distractor must come from the fallback (the category lies inside the pool).
    rng = stream(data.draw(st.integers(0, 2**32)), "test-pool")
    rows = rng.permutation(index.size)
    if data.draw(st.booleans()):
        code = int(index._category[int(rows[0])])
        lo, hi = index._category_offsets[code], index._category_offsets[code + 1]
        members = index._category_rows[lo:hi]
        rows = np.concatenate([members, rows[~np.isin(rows, members)]])
    pool = rows[: data.draw(st.integers(0, min(top_k, index.size)))].astype(np.int64)
    expected = _reference_degrade(index, pool, top_k, eps_rank, seed, call_index)
    assert index._degrade(pool, top_k, eps_rank, seed, call_index) == expected
    # The pool is marked in the thread's row marks only while the page is made: the same
    # page again (a read-only pool, as the search memo hands out) sees no stale marks.
    assert not any(index._marks())
    shared = pool.copy()
    shared.flags.writeable = False
    assert index._degrade(shared, top_k, eps_rank, seed, call_index) == expected
    assert not any(index._marks())


def test_pool_marks_are_cleared_when_a_probe_fails(index, monkeypatch):
    pool = index.candidates("lamp", 100)

    def broken(*args, **kwargs):
        raise RuntimeError("probe failed")

    monkeypatch.setattr(index, "_distractor", broken)
    with pytest.raises(RuntimeError):
        index._degrade(pool, 100, 1.0, 7, 0)
    assert not any(index._marks())


def test_degrade_replaces_positions_on_real_pages(index):
    # Not vacuous: at eps 0.5 pages of real queries get distractors, the same as the reference.
    changed = 0
    for call_index, query in enumerate(["lamp", "shoes", "coffee mug", "wireless", "kids toy"]):
        pool = index.candidates(query, 100)
        got = index._degrade(pool, 100, 0.5, 7, call_index)
        assert got == _reference_degrade(index, pool, 100, 0.5, 7, call_index)
        changed += sum(a != b for a, b in zip(got, pool.tolist(), strict=False))
    assert changed > 0


def _reference_key(parts: tuple) -> tuple | None:
    """The memo key as first written: a ``Hashable`` check per part, then the frozenset."""
    kind, query, top_k, eps_rank, oos_ids, *rest = parts
    if not all(isinstance(part, Hashable) for part in (query, top_k, eps_rank, *rest)):
        return None
    try:
        return (kind, query, top_k, eps_rank, frozenset(oos_ids), *rest)
    except TypeError:
        return None


_atoms = st.one_of(
    st.text(max_size=8), st.binary(max_size=4), st.integers(), st.floats(allow_nan=False)
)
_junk = st.one_of(
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
_ids: st.SearchStrategy[Collection] = st.one_of(
    st.frozensets(st.text(max_size=4)),
    st.lists(st.text(max_size=4)).map(tuple),
    st.sets(st.text(max_size=4)),
)


@SETTINGS
@given(
    query=st.one_of(_atoms, _junk),
    top_k=st.one_of(st.integers(), _junk),
    eps_rank=st.one_of(st.floats(allow_nan=False), _junk),
    oos_ids=st.one_of(_ids, st.lists(_junk, min_size=1, max_size=2)),
    rest=st.lists(st.one_of(st.integers(), st.text(max_size=4), _junk), max_size=3),
)
def test_memo_key_equals_the_per_part_check(query, top_k, eps_rank, oos_ids, rest):
    parts = ("text", query, top_k, eps_rank, oos_ids, *rest)
    assert CachedSearch(object())._key(parts) == _reference_key(parts)


def test_memo_key_refuses_a_tuple_holding_a_list():
    # The per-part check passed it (a tuple is Hashable) and the look-up then raised.
    parts = ("text", ("lamp", ["x"]), 10, 0.1, (), 0, 0)
    assert CachedSearch(object())._key(parts) is None


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), task_id=st.text(max_size=20))
def test_search_seed_equals_the_hash(seed, task_id):
    assert search_seed(seed, task_id) == stable_hash(seed, task_id, bits=64) >> 1
