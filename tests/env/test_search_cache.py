"""The runtime's search memo: exact (same answers as the index), bounded, and shared retrieval."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.env.search_cache import CANDIDATE_CACHE_LIMIT, CachedSearch


class FakeIndex:
    """An index whose search is a pure function of its arguments and counts its work."""

    def __init__(self) -> None:
        self.searches = 0
        self.retrievals = 0
        self.size = 42

    def candidates(self, query, depth, *, mode="hybrid"):
        self.retrievals += 1
        base = sum(map(ord, str(query))) % 97
        return np.arange(base, base + depth, dtype=np.int64)

    def search(
        self, query, *, top_k=200, eps_rank=0.0, oos_ids=(), seed=0, call_index=0, mode="hybrid"
    ):
        if not isinstance(query, str):
            raise TypeError("query must be text")
        self.searches += 1
        rows = self.candidates(query, top_k, mode=mode)
        shift = (seed + call_index + int(eps_rank * 10)) % 3
        return [f"{query}:{r + shift}:{sorted(oos_ids)}" for r in rows[:5].tolist()]


@given(
    query=st.text(max_size=12),
    top_k=st.integers(1, 50),
    seed=st.integers(0, 5),
    call_index=st.integers(0, 3),
    oos=st.frozensets(st.sampled_from(["A", "B", "C"])),
)
def test_memo_answers_exactly_what_the_index_answers(query, top_k, seed, call_index, oos):
    plain, memo = FakeIndex(), CachedSearch(FakeIndex())
    kwargs = dict(top_k=top_k, eps_rank=0.2, oos_ids=oos, seed=seed, call_index=call_index)
    first = memo.search(query, **kwargs)
    again = memo.search(query, **kwargs)
    assert first == again == plain.search(query, **kwargs)
    assert memo.index.searches == 1
    assert memo.hits == 1


def test_any_differing_key_part_misses():
    memo = CachedSearch(FakeIndex())
    memo.search("tent", seed=1, call_index=0)
    for kwargs in (
        {"seed": 2},
        {"call_index": 1},
        {"oos_ids": {"A"}},
        {"top_k": 10},
        {"eps_rank": 0.1},
    ):
        memo.search("tent", **{"seed": 1, "call_index": 0, **kwargs})
    assert memo.index.searches == 6
    assert memo.hits == 0


def test_retrieval_is_shared_across_tasks_but_not_results():
    memo = CachedSearch(FakeIndex())
    a = memo.search("tent", seed=1)
    b = memo.search("tent", seed=2)
    assert a != b  # task-dependent part is recomputed
    assert memo.index.searches == 2
    assert memo.index.retrievals == 1


def test_memo_is_bounded_and_returns_fresh_lists():
    memo = CachedSearch(FakeIndex(), limit=3)
    for i in range(10):
        memo.search(f"q{i}")
    assert len(memo) == 3
    got = memo.search("q9")
    got.clear()
    assert memo.search("q9")  # the caller's edit did not reach the memo
    for i in range(CANDIDATE_CACHE_LIMIT + 5):
        memo.index.candidates(f"c{i}", 3)
    assert len(memo._candidates) == CANDIDATE_CACHE_LIMIT


def test_bad_arguments_reach_the_index_error_and_attributes_pass_through():
    memo = CachedSearch(FakeIndex())
    with pytest.raises(TypeError):
        memo.search(["unhashable"])  # type: ignore[arg-type]
    assert memo.size == 42
    memo.clear()
    assert len(memo) == 0
