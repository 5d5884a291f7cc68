"""seeding.generator: the same PCG64 streams as NumPy's own construction, for any entropy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.seeding import generator, stable_hash, stream


def _reference(entropy: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(entropy))


@given(st.integers(min_value=0, max_value=2**300))
def test_generator_equals_numpys_construction(entropy):
    fast, plain = generator(entropy), _reference(entropy)
    assert fast.bit_generator.state == plain.bit_generator.state
    assert fast.integers(0, 2**62, 4).tolist() == plain.integers(0, 2**62, 4).tolist()
    # Children spawned from the sequence (which keeps the entropy as words) are NumPy's too.
    for a, b in zip(fast.spawn(2), plain.spawn(2), strict=True):
        assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("entropy", [0, 1, 2**32 - 1, 2**32, 2**64, 2**128 - 1])
def test_generator_at_word_boundaries(entropy):
    assert generator(entropy).bit_generator.state == _reference(entropy).bit_generator.state


def test_stream_is_numpys_stream_of_the_key_hash():
    h = stable_hash(7, "task", "discovery", 5, 3, bits=128)
    assert (
        stream(7, "task", "discovery", 5, 3).random(3).tolist() == _reference(h).random(3).tolist()
    )


def test_other_state_requests_go_to_numpy():
    seq = generator(12345).bit_generator.seed_seq
    ref = np.random.SeedSequence(12345)
    assert seq.generate_state(8).tolist() == ref.generate_state(8).tolist()
    assert seq.generate_state(3, np.uint64).tolist() == ref.generate_state(3, np.uint64).tolist()


def test_negative_entropy_is_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        generator(-1)
