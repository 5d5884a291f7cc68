"""The static encoder's row normalisation equals ``np.linalg.norm``'s, bit for bit (issue #7).

:func:`~shopgen.gen.encoders.static_encode` computes the norms as ``sqrt(add.reduce(x * x))``
(what ``np.linalg.norm(x, axis=1)`` does for real floats) to skip its argument handling on
every query; the vectors must stay bit-identical, since the dense index ranks by them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.encoders import load_encoder, static_encode


@pytest.fixture(scope="module")
def static_module():
    return load_encoder("static").model


def _reference(module, texts: list[str]) -> np.ndarray:
    """Mean of the query's embedding rows, normalised by ``np.linalg.norm`` (the plain path)."""
    out = np.zeros((len(texts), module.weight.shape[1]), dtype=np.float32)
    for i, text in enumerate(texts):
        ids = module.tokenizer.encode(text, add_special_tokens=False).ids[:512]
        if ids:
            out[i] = module.weight[ids].mean(axis=0)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


_WORDS = st.sampled_from(
    ["lamp", "table", "Glass", "shade", "wireless", "earbuds", "18+", "café", "", "x" * 60, "?!"]
)


@given(texts=st.lists(st.lists(_WORDS, max_size=12).map(" ".join), min_size=1, max_size=3))
@settings(max_examples=150, deadline=None)
def test_query_vectors_equal_the_linalg_norm_path(static_module, texts):
    got = static_encode(static_module, texts)
    assert got.dtype == np.float32
    assert got.tobytes() == _reference(static_module, texts).tobytes()
