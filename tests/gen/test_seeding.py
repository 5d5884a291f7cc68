import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.seeding import FeistelIds, stable_hash, stream

keys = st.lists(st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=8)), max_size=4)


@given(seed=st.integers(0, 2**63 - 1), key=keys)
def test_same_key_same_stream(seed, key):
    assert (stream(seed, *key).random(4) == stream(seed, *key).random(4)).all()


@given(a=keys, b=keys)
def test_distinct_keys_give_distinct_hashes(a, b):
    if a != b:
        assert stable_hash(0, *a) != stable_hash(0, *b)


def test_key_parts_are_type_tagged_and_delimited():
    assert stable_hash(0, "ab", "c") != stable_hash(0, "a", "bc")
    assert stable_hash(0, 1) != stable_hash(0, "1")
    with pytest.raises(TypeError):
        stable_hash(0, 1.5)


def test_stream_does_not_depend_on_python_hash_seed():
    code = "from shopgen.gen.seeding import stream; print(stream(3, 'products', 7).integers(0, 10**9, 5).tolist())"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": s},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for s in ("0", "1", "12345")
    }
    assert len(outs) == 1


@given(
    index=st.lists(st.integers(0, 2**40 - 1), min_size=1, max_size=200, unique=True),
    seed=st.integers(0, 99),
)
def test_feistel_is_a_bijection(index, seed):
    ids = FeistelIds(seed, "product", prefix="B0", width=8)
    out = ids.permute(np.array(index))
    assert len(set(out.tolist())) == len(index)
    assert int(out.max()) < 2**40


def test_ids_look_like_asins_and_are_not_sequential():
    ids = FeistelIds(0, "product", prefix="B0", width=8).ids(np.arange(1000)).to_list()
    assert all(len(i) == 10 and i.startswith("B0") and i.isalnum() and i.isupper() for i in ids)
    assert len(set(ids)) == 1000
    assert ids != sorted(ids)  # neighbouring rows do not have neighbouring ids
    other_seed = FeistelIds(1, "product", prefix="B0", width=8).ids(np.arange(1000)).to_list()
    assert not set(ids) & set(other_seed[:10])
