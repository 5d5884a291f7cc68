"""The cart generator's per-catalog index: its fast paths equal the plain definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.tasks.cart_items import CartIndex, cart_index, describe, intersect_sorted, words
from shopgen.taskgen import TaskFactory

sorted_rows = st.sets(st.integers(0, 60), max_size=30).map(lambda s: np.array(sorted(s), np.int64))


@given(sorted_rows, sorted_rows.filter(lambda a: a.size > 0))
def test_intersect_sorted_equals_intersect1d(small: np.ndarray, big: np.ndarray) -> None:
    got = intersect_sorted(small, big)
    assert got.tolist() == np.intersect1d(small, big, assume_unique=True).tolist()
    assert got.dtype == np.int64


@pytest.fixture(scope="module")
def index(factory: TaskFactory) -> CartIndex:
    return cart_index(factory.ctx)


@pytest.fixture(scope="module")
def title_words(index: CartIndex) -> list[set[str]]:
    return [set(words(t)) for t in index.frame["title"].to_list()]


def _reference(title_words: list[set[str]], desc: str) -> list[int]:
    """Every row whose title holds all the words of ``desc`` (the definition, by brute force)."""
    want = set(words(desc))
    return [r for r, have in enumerate(title_words) if want and want <= have]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_matching_equals_the_brute_force_definition(index, title_words, data) -> None:
    """Descriptions made of title words, with a stray word or not, and narrowed in two steps."""
    row = data.draw(st.integers(0, index.frame.height - 1))
    own = sorted(title_words[row])
    picked = data.draw(st.lists(st.sampled_from(own), min_size=1, max_size=4))
    other = data.draw(st.sampled_from(sorted(title_words[(row * 7 + 3) % index.frame.height])))
    stray = data.draw(st.sampled_from(["", "zzqx", other]))
    desc = " ".join([*picked, stray])
    assert index.matching(desc).tolist() == _reference(title_words, desc)
    head, tail = " ".join(picked[:1]), " ".join([*picked[1:], stray])
    assert index.matching(tail, within=index.matching(head)).tolist() == _reference(
        title_words, desc
    )


def test_matching_of_no_words_is_empty_or_the_given_rows(index) -> None:
    assert index.matching("").tolist() == []
    rows = np.array([1, 4, 9], np.int64)
    assert index.matching(" , ", within=rows).tolist() == [1, 4, 9]


def test_record_equals_the_frame_row(index) -> None:
    for row in range(0, index.frame.height, max(1, index.frame.height // 50)):
        assert index.record(row) == index.frame.row(row, named=True)


def test_description_is_describe_remembered(index) -> None:
    rows = range(0, index.frame.height, max(1, index.frame.height // 80))
    found = 0
    for row in rows:
        product = index.record(row)
        want = describe(index, product)
        assert index.description(product) == want
        assert index.description(index.record(row)) == want
        found += want is not None
    assert found > 0  # the sample reaches describable products
