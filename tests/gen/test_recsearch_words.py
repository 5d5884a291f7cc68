"""recsearch.KnownWords: what an oracle may type is every word it was told or shown, however read."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.tasks.base import words
from shopgen.gen.tasks.recsearch import KnownWords

# Few letters, so that cards repeat texts and words, as a page's cards do.
_TEXT = st.text("ab C-1", max_size=8)
_CARD = st.fixed_dictionaries(
    {"brand": _TEXT, "category": _TEXT, "key_attrs": st.lists(_TEXT, max_size=3)}
)
_RESULT = (
    st.fixed_dictionaries({"results": st.lists(_CARD, max_size=4)})
    | st.fixed_dictionaries({"reply": _TEXT})
    | st.fixed_dictionaries({"customer": _TEXT})
    | st.fixed_dictionaries({"product_id": _TEXT})
)


def _plain(script: dict[str, Any], said: list[str], turns: list[list[dict[str, Any]]]) -> set[str]:
    """Every word of the script's values, the customer's messages and the results' texts."""
    texts = [str(s["value"]) for s in script["slots"]] + said
    for result in (r for turn in turns for r in turn):
        for card in result.get("results", ()):
            texts += [card["brand"], card["category"], *card["key_attrs"]]
        texts += [result[k] for k in ("reply", "customer") if k in result]
    return {w for text in texts for w in words(text)}


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_TEXT | st.integers(), max_size=3),
    said=st.lists(_TEXT, max_size=2),
    turns=st.lists(st.lists(_RESULT, max_size=3), max_size=4),
    asked=st.lists(_TEXT, min_size=1, max_size=3),
)
def test_known_words_are_every_word_told_or_shown(values, said, turns, asked) -> None:
    script = {"slots": [{"value": v} for v in values], "switch": None}
    task = SimpleNamespace(messages=[SimpleNamespace(role="user", content=t) for t in said])
    known = KnownWords(task, script)  # type: ignore[arg-type]  (reads only .messages)
    for i, turn in enumerate(turns):
        known.read(turn)
        told = _plain(script, said, turns[: i + 1])
        for text in asked:
            assert known.knows(text) == told.issuperset(words(text))
