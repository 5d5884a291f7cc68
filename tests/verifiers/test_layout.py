"""How a journey's final message is cut into one answer per step (verifiers.layout)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from shopgen.verifiers.layout import texts

STATUS = "Your order 123-4567 was delivered on 2026-01-30."
POLICY = "Our policy gives 20% in your case."
CART = "Your cart is ready: 2 x Acme Lamp, $12.99 each."
KINDS = ("status", "policy")


def test_one_paragraph_per_step_is_read_as_it_is():
    assert texts(f"{STATUS}\n\n{POLICY}", KINDS) == (STATUS, POLICY)


def test_lines_that_answer_nothing_are_set_aside_around_the_answers():
    for before, after in [
        ("Here's what I found.", "Take care!"),
        ("Great, I've looked into everything for you.", "Anything else I can do?"),
        ("", "Please don't hesitate to reach out about your orders or returns any time at all."),
    ]:
        final = "\n\n".join(p for p in (before, STATUS, POLICY, after) if p)
        assert texts(final, KINDS) == (STATUS, POLICY), (before, after)


def test_a_line_that_says_something_is_never_set_aside():
    """A yes or no, a status, a zero said in words or a figure answers: whole message."""
    for said in [
        "Yes, you can.",
        "It has shipped.",
        "Return shipping is free.",
        "That item is not eligible for a return.",
        "It should arrive on 2026-02-02.",
        "Our policy gives 6 business days in your case.",
        "You have thirty days. Let me know if you need more help.",
    ]:
        final = f"{STATUS}\n\n{POLICY}\n\n{said}"
        assert texts(final, KINDS) == (final, final), said


def test_which_line_is_set_aside_follows_the_steps_kinds():
    """One line too many at either end: the reading whose parts answer their steps is kept."""
    found, listed = "Here's what I found.", "I've recommended the tent that fits."
    final = "\n\n".join([found, "Yes, you can return it.", listed])
    assert texts(final, ("policy", "discovery")) == ("Yes, you can return it.", listed)
    final = "\n\n".join([found, STATUS, listed])
    assert texts(final, ("status", "discovery")) == (STATUS, listed)
    # With nothing to tell them apart, the earliest parts are kept.
    assert texts(f"{found}\n\n{CART}\n\n{listed}", ("cart", "discovery")) == (found, CART)


def test_numbered_answers_on_single_lines_are_one_part_each():
    numbered = [f"{i}. {a}" for i, a in enumerate((STATUS, CART, POLICY), 1)]
    kinds = ("status", "cart", "policy")
    assert texts("\n".join(numbered), kinds) == tuple(numbered)
    intro = "Here is where everything stands:\n" + "\n".join(numbered)
    assert texts(intro, kinds) == tuple(numbered)
    # A list of another kind inside an item stays with it.
    bundle = "1. Your office set:\n- a lamp: $12.99\n- a desk: $80.00\nTotal: $92.99."
    assert texts(f"{bundle}\n2. {POLICY}", ("bundle", "policy")) == (bundle, f"2. {POLICY}")
    # A wrapped line stays with its item.
    wrapped = "\n".join([numbered[0], "It was left at the front door.", *numbered[1:]])
    assert texts(wrapped, kinds)[0] == f"{numbered[0]}\nIt was left at the front door."


def test_a_numbered_list_wrapped_in_lines_that_answer_nothing_is_one_part_per_item():
    """Paragraph count can equal the steps' by chance: a greeting and one list for two steps,
    a greeting, a list and a sign-off for three (a cheat audit found the greeting graded as
    a policy answer: 0.79 and 0.62 of such oracle journeys correct)."""
    numbered = [f"{i}. {a}" for i, a in enumerate((POLICY, STATUS, CART), 1)]
    two = "Here's what I found.\n\n" + "\n".join(numbered[:2])
    assert texts(two, ("policy", "status")) == tuple(numbered[:2])
    three = "Hi!\n\n" + "\n".join(numbered) + "\n\nTake care!"
    assert texts(three, ("policy", "status", "cart")) == tuple(numbered)


def test_a_courtesy_line_that_holds_an_answer_is_no_courtesy():
    """ "Sure, happy to help! No, you can't." says no: it is not set aside for the yes after it."""
    final = "Sure, happy to help! No, you can't.\n\nYes, you can.\n\n" + STATUS
    assert texts(final, KINDS) == (final, final)


def test_a_list_inside_one_answer_is_not_cut_when_the_paragraphs_fit():
    listed = "Here are 2 lamps, best first:\n1. Acme Lamp: $12.99\n2. Brio Lamp: $14.99"
    assert texts(f"{listed}\n\n{POLICY}", ("discovery", "policy")) == (listed, POLICY)


def test_a_cart_confirmed_without_figures_keeps_the_paragraphs_of_a_listed_bundle():
    """A bundle's list, a status and a cart confirmed in words alone ("1 x …" is a count, no
    figure), one paragraph each: the cart's paragraph, answering nothing a text reader reads,
    made the bundle's list items the parts, and the status step got its second item (a
    journey whose oracle failed, 100k products, d = 5)."""
    bundle = (
        "Here is your set, one of each kind you need:\n- yarn: Wooent Yarn ($2.99)\n"
        "- crochet hook set: Medina Hook Set, 2.25mm-8mm ($7.69)\nTotal: $10.68."
    )
    cart = "Your cart is ready: 1 x Webify Boxers, 5-Pack; 3 x Wilson Dog Harness."
    final = f"{bundle}\n\n{STATUS}\n\n{cart}"
    assert texts(final, ("bundle", "status", "cart")) == (bundle, STATUS, cart)


@given(
    before=st.lists(st.sampled_from(["Hi!", "Here's what I found.", "Sure!"]), max_size=2),
    after=st.lists(st.sampled_from(["Take care!", "Let me know if you need more."]), max_size=2),
)
def test_any_wrapping_of_answer_lines_keeps_each_answer_with_its_step(before, after):
    final = "\n\n".join([*before, STATUS, POLICY, *after])
    assert texts(final, KINDS) == (STATUS, POLICY)


@given(st.text(max_size=300), st.lists(st.sampled_from(["status", "policy", "cart"]), min_size=1))
def test_every_step_gets_a_part_of_the_message_or_the_whole_of_it(final, kinds):
    got = texts(final, tuple(kinds))
    assert len(got) == len(kinds)
    whole = got == (final,) * len(kinds)
    lines = re.sub(r"\n\s*\n", "\n", final)
    assert whole or all(part.strip() and part.strip() in lines for part in got)


def test_a_table_of_the_requests_is_one_row_per_step():
    """A final message laid out as a table, one row per request, was one part for all: 7 of
    108 honest journey messages of a bank written apart from the reader failed."""
    final = (
        "Thanks for waiting while I checked on these.\n\n"
        "| # | Your question | Answer |\n|---|---|---|\n"
        f"| 1 | Your order | {STATUS} |\n| 2 | Our policy | {POLICY} |"
    )
    status, policy = texts(final, KINDS)
    assert STATUS in status
    assert POLICY not in status
    assert POLICY in policy
    assert STATUS not in policy
