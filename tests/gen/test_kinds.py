"""Kinds of product within one leaf: read from titles, filtered and graded alike.

A substitute for a leash is a leash: the taxonomy groups a leaf's nouns by kind
(``Category.kinds``), a title's kind is its longest noun's (``gen.tasks.kinds``), and
:class:`Constraints` filters (:meth:`~Constraints.mask`, the Polars reference
:meth:`~Constraints.expr`) and grades (:meth:`~Constraints.broken`) a required kind the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.tasks.constraints import Columns, Constraints
from shopgen.gen.tasks.kinds import kind_of, title_noun
from shopgen.gen.taxonomy import load_taxonomy

LEAVES = [c for _, c in load_taxonomy().leaves()]
KINDED = [c for c in LEAVES if c.kinds]
#: Title words around the noun that name no noun of any leaf.
BEFORE = ["Acme", "Acme Pro Blue", "Boys' Everyday Nylon", "Bolt 3-Pack Classic"]
AFTER = ["", ", Pack of 2", " for Medium Dogs, Reflective", ", Hooded, Water-Resistant"]


def _others(leaf, kind) -> tuple[str, ...]:
    return tuple(n for group in leaf.kinds if group != kind for n in group)


def test_the_packaged_taxonomy_separates_kinds_and_audiences():
    ids = {c.id for c in KINDED}
    assert {"dog_collars_leashes", "mens_underwear", "kids_jackets"} <= ids
    audience = {c.id: c.audience for c in LEAVES if c.audience}
    assert audience["kids_jackets"] == "kids_gender"
    assert audience["running_shoes"] == "adult_gender"


@given(st.sampled_from(KINDED), st.data())
def test_a_title_is_of_the_kind_of_its_noun_and_no_other(leaf, data):
    kind = data.draw(st.sampled_from(leaf.kinds))
    noun = data.draw(st.sampled_from(kind))
    title = f"{data.draw(st.sampled_from(BEFORE))} {noun}{data.draw(st.sampled_from(AFTER))}"
    assert title_noun(title, [n for group in leaf.kinds for n in group]) == noun
    assert kind_of(title, tuple(kind), _others(leaf, kind))
    for other in leaf.kinds:
        if other != kind:
            assert not kind_of(title, tuple(other), _others(leaf, other))


def test_the_longest_whole_word_noun_decides():
    underwear = ["Briefs", "Boxer Briefs", "Trunks", "Boxers"]
    assert title_noun("Acme Men's Cotton Boxer Briefs, 3-Pack", underwear) == "Boxer Briefs"
    assert title_noun("Acme Men's Cotton Briefs, 3-Pack", underwear) == "Briefs"
    assert title_noun("Acme Hooded Sweatshirt", ["Sweatshirt", "Hooded Sweatshirt"]) == (
        "Hooded Sweatshirt"
    )
    assert title_noun("Acme Coated Denim Jacket", ["Coat", "Jacket"]) == "Jacket"
    assert title_noun("Acme Raincoat", ["Coat", "Jacket"]) is None


def test_every_catalog_title_of_a_kinded_leaf_names_one_kind(catalog_dir: Path):
    products = pl.read_parquet(catalog_dir / "products" / "*.parquet")
    seen = 0
    for leaf in KINDED:
        nouns = [n for group in leaf.kinds for n in group]
        for title in products.filter(pl.col("category_id") == leaf.id)["title"]:
            noun = title_noun(title, nouns)
            assert noun is not None, title
            low = title.lower()
            # No noun of another kind stands in the title beside it (outside the noun itself).
            rivals = [n for n in _others(leaf, next(g for g in leaf.kinds if noun in g))]
            assert not [n for n in rivals if n.lower() in low and n.lower() not in noun.lower()]
            seen += 1
    assert seen > 50


def _frame(titles: list[str]) -> pl.DataFrame:
    n = len(titles)
    return pl.DataFrame(
        {
            "product_id": [f"P{i:03d}" for i in range(n)],
            "title": titles,
            "brand": ["Acme"] * n,
            "category_id": ["dog_collars_leashes"] * n,
            "price": [10.0] * n,
            "rating": [4.0] * n,
            "ship_days": [2] * n,
            "stock_qty": [3] * n,
            "attributes": [json.dumps({"dog_size": "Medium"})] * n,
            "key_attrs": [["Medium"]] * n,
        },
        schema_overrides={"ship_days": pl.Int8, "stock_qty": pl.Int32},
    )


LEASHES = next(c for c in KINDED if c.id == "dog_collars_leashes")


@given(
    st.lists(
        st.tuples(
            st.sampled_from(BEFORE),
            st.sampled_from([n for g in LEASHES.kinds for n in g]),
            st.sampled_from(AFTER),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(LEASHES.kinds),
)
def test_kind_mask_is_the_polars_filter_and_the_graders_check(parts, kind):
    titles = [f"{a} {noun}{b}" for a, noun, b in parts]
    raw = _frame(titles)
    cons = Constraints(
        category="dog_collars_leashes", kind=tuple(kind), other_kinds=_others(LEASHES, kind)
    )
    mask = cons.mask(Columns(raw))
    expected = raw.with_row_index("i").filter(cons.expr())["i"].to_list()
    assert np.flatnonzero(mask).tolist() == expected
    for title, ok in zip(titles, mask.tolist(), strict=True):
        fact = {"category_id": "dog_collars_leashes", "title": title, "price": 10.0}
        fact.update(rating=4.0, ship_days=2, brand="Acme", attributes={})
        assert cons.holds("P", fact) is ok
        assert ("kind" in cons.broken("P", fact)) is not ok
    assert Constraints.from_dict(cons.to_dict()) == cons


def test_no_kind_keeps_the_stored_constraints_as_they_were():
    """Goals of other environments (discovery) store the same constraint keys as before."""
    cons = Constraints(category="c", attrs={"color": "Red"})
    assert set(cons.to_dict()) == {
        "category",
        "price_max",
        "rating_min",
        "ship_days_max",
        "brand",
        "attrs",
        "exclude",
    }
    assert Constraints.from_dict(cons.to_dict()) == cons
