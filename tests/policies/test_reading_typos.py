"""The discovery and substitution agents read customers through typos, shorthand and terse replies.

Each case is worded as the templates and the noise model (``gen/noise.py``) produce it; each
failed on the agent before it learnt to read past typos.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shopgen.policies.heuristic.common import (
    closest,
    edit_distance,
    fix_typos,
    near,
    template_words,
)
from shopgen.policies.heuristic.discovery import category_phrase
from shopgen.policies.heuristic.recommend import (
    Needs,
    bare_values,
    read_needs,
    renamed,
    resolve_bare,
)
from shopgen.policies.heuristic.substitution import _seen, product_name


def test_edit_distance_counts_a_swap_as_one_typo() -> None:
    assert edit_distance("yoga", "ygoa") == 1
    assert edit_distance("options", "optiond") == 1
    assert edit_distance("under", "under") == 0
    assert edit_distance("abc", "") == 3


def test_template_words_are_restored_and_product_words_kept() -> None:
    assert fix_typos("Sbow me 4 optiond.") == "Show me 4 options."
    assert fix_typos("Ideally somdthing delivered witgin 2 days") == (
        "Ideally something delivered within 2 days"
    )
    # Plurals of template words and words no template says stay as typed.
    assert fix_typos("tops, desks and Kaufman B0ABCDEFGH") == "tops, desks and Kaufman B0ABCDEFGH"


@given(st.sampled_from(sorted(template_words())))
def test_correct_text_is_left_alone(word: str) -> None:
    assert fix_typos(f"{word} {word.capitalize()}") == f"{word} {word.capitalize()}"


def test_a_typod_lead_still_finds_the_category() -> None:
    said = "Hello, could u pols help me fiknd lipstick?  I am looking 4 something under $8."
    assert category_phrase(said) == "lipstick"
    lead = "Good afternoon. I would aplreciats some recommendations 4 yoga mats, max $5."
    assert category_phrase(lead) == "yoga mats"


def test_a_product_word_read_as_a_template_word_is_put_back_by_the_cards() -> None:
    # "bands" is one typo from the template word "brands": the cards' category restores it.
    said = category_phrase("Good afternoon. I would like some recommendations for watch bands.")
    assert said == "watch brands"
    assert renamed(said, {"a": {"category": "Watch Bands"}}) == "watch bands"


def test_a_typod_count_and_labels_in_a_reply_are_read() -> None:
    needs = read_needs(
        "Oh, the budget is $488, the delivety time is 7 days, the brandi s Kaufman, "
        "the number lf options is 4 ad the priority order is a low price (very much: $53 is "
        "ideal, $570 the worst), then a high rating (a little: 5 stars is ideal, 1 star the "
        "worst), then the brand (not at all), then fast delivery (not at all)."
    )
    assert (needs.price_max, needs.ship_days_max, needs.k, needs.brand) == (488.0, 7, 4, "Kaufman")
    assert needs.price_anchors == (53.0, 570.0)


def test_a_change_of_mind_with_an_arrow_is_read() -> None:
    needs = read_needs("Change: the fit → Regular Fit. Oh, thebrand is  Freeman.")
    assert ("fit", "Regular Fit") in needs.attrs
    assert needs.brand == "Freeman"


def test_a_values_only_reply_is_read_and_its_names_settled_by_cards() -> None:
    reply = (
        '2 days, Fowler, 4, my favourite brands "Campbell" and "Lindson" (very much), then a '
        "low price (a little: $5 is ideal, $25 the worst) thx"
    )
    needs = read_needs(reply)
    assert (needs.ship_days_max, needs.k, needs.bare) == (2, 4, ["Fowler"])
    assert resolve_bare(needs, [{"brand": "Fowler"}]).brand == "Fowler"
    assert resolve_bare(needs, [{"brand": "Other"}]).attrs == [("value", "Fowler")]
    # A sentence is not a list of values: nothing is read as a bare name.
    assert bare_values("Hi, for me is important to find sweaters, neckline Mock Neck.") == (
        None,
        None,
        [],
    )


def test_a_typod_category_is_spelled_as_the_cards_spell_it() -> None:
    seen = {"a": {"category": "Bath Mats"}, "b": {"category": "Yoga Mats"}}
    assert renamed("ygoa mats", seen) == "yoga mats"
    assert renamed("jeans from men's clothing", {"a": {"category": "Jeans"}}) == (
        "jeans from men's clothing"
    )
    assert closest("und3rwear", ["Underwear", "Bras"]) == "Underwear"
    assert closest("lipstick", ["Mascara"]) is None
    assert near("sweatshidt", "sweatshirt")
    assert not near("bra", "bar")


def test_substitution_finds_a_typod_product_in_the_visit_history() -> None:
    said = fix_typos("Hello, the Oneal Men's Coastal Sofsthell Coat iss not available.")
    name = product_name(said)
    history = {
        "visits": [
            {"product_id": "B0AAAAAAAA", "title": "Oneal Men's Coastal Rain Jacket, Nylon"},
            {"product_id": "B0BBBBBBBB", "title": "Oneal Men's Coastal Softshell Coat, Polyester"},
        ]
    }
    assert _seen(history, name) == "B0BBBBBBBB"


def test_needs_merge_keeps_bare_values() -> None:
    needs = Needs()
    needs.merge(Needs(bare=["Fowler"]))
    needs.merge(Needs(bare=["Fowler", "Medium"]))
    assert needs.bare == ["Fowler", "Medium"]
