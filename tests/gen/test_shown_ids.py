"""base.shown_ids: the same ids, in the same order, as a plain recursive walk."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.tasks.base import shown_ids


def _reference(results: Any, key: str = "product_id") -> list[str]:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key and isinstance(v, str) and v not in found:
                    found.append(v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(results)
    return found


_KEYS = st.sampled_from(["product_id", "variant_id", "title", "results"])
_LEAF = st.one_of(st.sampled_from(["P1", "P2", "P3"]), st.integers(0, 3), st.none())
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.tuples(inner, inner),
    ),
    max_leaves=30,
)


@given(_JSON, st.sampled_from(["product_id", "variant_id"]))
def test_shown_ids_equals_the_plain_walk(results, key):
    assert shown_ids(results, key) == _reference(results, key)


def test_shown_ids_of_a_search_page():
    page = [{"results": [{"product_id": "B"}, {"product_id": "A"}, {"product_id": "B"}]}]
    assert shown_ids(page) == ["B", "A"]
    assert shown_ids([{"customer": "hello"}, {"reply": "P9"}]) == []
