"""render's fast paths equal the plain computations they replace."""

from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen import render

_CHARS = st.sampled_from(
    ["a", " ", "{", "}", "\ue000", "\ue001", "\ue100", "\ue8ff", "\ue900", "é"]
)


def _plain_leaks(text):
    return "{" in text or "}" in text or any("\ue000" <= ch <= "\ue8ff" for ch in text)


@given(st.lists(_CHARS, max_size=12).map("".join) | st.text(max_size=20))
def test_leak_pattern_equals_the_per_character_check(text):
    assert (render._LEAK.search(text) is not None) == _plain_leaks(text)
