"""Wordings the final-message readers must grade as a reader would.

Found by replaying oracles of status, policy and returns tasks (d = 0–12, 5k and 100k products)
with their final answer reworded as an assistant would write it, and with hedges of it.

First the hedges that were graded correct (a hedge over values, dates, statuses, answers or
eligibility states a wrong one), then honest answers that were graded wrong. The cases of
each fix failed on the readers before it; the guards beside them (negations, numbers that
are no range, counts that are no dates) keep the fixes from reading more than was said.
"""

from __future__ import annotations

from datetime import date

import pytest

from shopgen.verifiers.policy import answer_right
from shopgen.verifiers.text import (
    date_listed,
    date_stated_alone,
    fee_percents_stated,
    not_eligible_stated,
    numbers_stated,
    only_code_stated,
    refusal_reasons_stated,
    status_stated,
    yes_no_stated,
    zero_stated,
)

TODAY = date(2026, 3, 2)  # a Monday


def _goal(value, unit, topic="warranty"):
    return {"kind": "number", "value": value, "unit": unit, "topic": topic}


# -- a range or alternative states every number ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "unit", "truth", "other"),
    [
        ("The warranty is 6-12 months.", "months", 12, 6),
        ("The warranty is 6 or 12 months.", "months", 12, 6),
        ("Refunds take 5–7 business days.", "business days", 7, 5),
        ("Refunds take 8 to 10 business days.", "business days", 10, 8),
        ("The fee is $49.00–54.00.", "USD", 49, 54),
        ("The fee is 49.00–$54.00.", "USD", 54, 49),
        ("The fee is between 34.99 and 39.99 dollars.", "USD", 39.99, 34.99),
        ("The fee is between $30 and 35.", "USD", 30, 35),
        ("The restocking fee is 10–15%.", "percent", 15, 10),
        ("The restocking fee is 10 or 15 percent.", "percent", 15, 10),
        ("The window is 2-3 weeks.", "days", 21, 14),
    ],
)
def test_a_range_states_every_number_so_a_hedge_is_wrong(text, unit, truth, other):
    values = numbers_stated(text, unit)
    assert truth in values
    assert other in values
    assert not answer_right(text, _goal(truth, unit))


def test_a_percentage_fee_range_states_both_fees():
    assert sorted(fee_percents_stated("A 10–15% restocking fee applies.")) == [10.0, 15.0]


@pytest.mark.parametrize(
    ("text", "unit", "values"),
    [
        # Not ranges: a price then a delivery time, ids and dates glued to a dash.
        ("Shipping is $4.99 - 2 business days.", "USD", [4.99]),
        ("It costs $20 and takes 5 days.", "days", [5.0]),
        ("Order 469-0030617-0101557: 30 days.", "days", [30.0]),
        ("Delivered 2026-03-06 - 30 days to return.", "days", [30.0]),
        ("It costs $49 or more.", "USD", [49.0]),
    ],
)
def test_numbers_that_are_no_range_stay_apart(text, unit, values):
    assert numbers_stated(text, unit) == values


# -- date ranges and alternatives state every date -------------------------------------------------

ALLOWED = frozenset({date(2026, 2, 27), TODAY})


@pytest.mark.parametrize(
    "text",
    [
        "It should arrive Mar 6–8.",
        "It should arrive March 6 or 7.",
        "It should arrive 6–8 March.",
        "It should arrive between March 6 and 8.",
        "It should arrive on March 6 or the day after.",
        "It should arrive March 6, give or take a couple of days.",
        "It should arrive March 6 (in 4-6 days).",
        # A status audit (260 tasks): each passed.
        "It should arrive on March 6, or possibly a day later.",
    ],
)
def test_a_date_range_states_a_wrong_date(text):
    assert not date_stated_alone(text, date(2026, 3, 6), year=2026, allowed=ALLOWED, today=TODAY)


@pytest.mark.parametrize(
    "text",
    [
        "It will arrive today or on March 6.",  # today is an allowed date on its own
        "It was delivered on February 27, or maybe March 6.",  # so is an order's own date
        "It will arrive March 6 or else tomorrow.",
    ],
)
def test_an_alternative_of_allowed_dates_is_a_hedge(text):
    assert date_listed(text, date(2026, 3, 6), year=2026, today=TODAY)


# -- a status offered as possible is offered -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("Your order is in transit (it might have been delivered already).", "in_transit"),
        ("Your order is processing; it may also be shipped by now.", "processing"),
        ("It has shipped and could already be delivered.", "shipped"),
        ("It's being processed, though it may have shipped.", "processing"),
        # An audit of status answers (39 tasks, 5k products) found these passing:
        ("Delivered on February 20, though it might still be in transit.", "delivered"),
        ("Your order was delivered or in transit.", "delivered"),
        ("Your order is in transit/delivered.", "delivered"),  # 260 of 260 passed
        ("Your order is in transit/delivered.", "in_transit"),
    ],
)
def test_a_possible_second_status_is_a_hedge(text, truth):
    assert not status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("Your order is in transit and has not been delivered yet.", "in_transit"),
        ("Your order is processing; it hasn't shipped yet.", "processing"),
        ("Your order is in transit. It may not have been delivered yet.", "in_transit"),
        ("Your order is in transit. It could be delivered as early as tomorrow.", "in_transit"),
        ("Your order is in transit and should be delivered by Friday.", "in_transit"),
        ("It was placed on March 1, shipped on the 2nd and was delivered on the 4th.", "delivered"),
        ("Your order is still in transit.", "in_transit"),
        # A status audit: each read a second status (22 of 260 tasks).
        ("It's being processed and should be shipped and delivered by March 5.", "processing"),
        ("It was cancelled before it shipped.", "cancelled"),
        ("It was cancelled, so there's nothing on its way.", "cancelled"),
    ],
)
def test_negations_and_future_events_still_state_no_second_status(text, truth):
    assert status_stated(text, truth)


# -- yes and no ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Sure! Unfortunately, no, you can't return opened headphones.", {False}),
        ("Of course! No, it is not eligible.", {False}),
        ("Sure, let me check. Yes, that is allowed.", {True}),
        ("Yes. I'm afraid not, though, if it was opened.", {True, False}),
    ],
)
def test_an_affirming_opener_beside_a_stated_answer_is_courtesy(text, said):
    assert yes_no_stated(text) == said


def test_a_no_offered_after_a_yes_is_a_hedge():
    assert yes_no_stated("Yes, you can. Or possibly no, you can't.") == {True, False}


def test_a_yes_and_a_conditional_no_are_both_answers():
    assert yes_no_stated("Yes in most cases. No if the item was used.") == {True, False}
    assert yes_no_stated("No receipt is needed.") == set()  # a sentence about something


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Unfortunately, this item can't be returned under our policy.", False),
        ("Unfortunately, that can't be done under our policy in your case.", False),
        ("Unfortunately, this item is non-returnable in your case.", False),
        ("Unfortunately, that isn't an option for your order.", False),
        ("Unfortunately, we can't price-match this item in your case.", False),
        ("Sure thing! Drop-off points are an option for headphones.", True),
        ("Your order qualifies under our policy, so you're all set.", True),
        ("You can do that: our policy allows it in your case.", True),
        ("Your order doesn't qualify.", False),
        # A passive "not" about something else beside a yes is no "no".
        ("You can return it, and you won't be charged a restocking fee.", True),
        ("Your order qualifies for free shipping and will not be delayed.", True),
        ("We can price-match it and you will not be billed twice.", True),
        # An honest-agent audit: each was read the other way, or not at all.
        ("Sorry, but that's not something we can offer in your case.", False),
        ("I'm afraid that isn't something you can use for this order.", False),
        ("It can be returned under our policy.", True),
        ("Good news: the price can be adjusted in your case.", True),
        ("Yep, that works in your case.", True),
        ("Yeah, you can.", True),
    ],
)
def test_yes_and_no_in_other_words(text, said):
    assert yes_no_stated(text) == {said}


# -- not eligible, said and not hedged -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "This item may not be eligible for a return, possibly because the return window has closed.",
        "It might not be returnable.",
    ],
)
def test_hedged_eligibility_is_no_refusal(text):
    assert not not_eligible_stated(text)


@pytest.mark.parametrize(
    "text",
    [
        "Unfortunately, this item isn't eligible for a return because the return window has closed.",
        "Unfortunately, we don't accept returns on this item: it's a perishable item.",
        "Unfortunately, returns aren't accepted for this item because it's a perishable item.",
        "Unfortunately, this item is non-refundable because it's a perishable item.",
        "Unfortunately, I can't help with a return for this item because it's perishable.",
        "I'm sorry, but returns for this item are not possible because it's perishable.",
        # A returns audit (348 refusals): each was read as no refusal.
        "**Return not possible**\n- Reason: perishable item",
        "Return denied: it's a perishable item.",
        "The 90-day window to return it expired 4 days ago.",
        "I wasn't able to set up a return: the window has closed.",
        "It's past its 90-day return window.",
        "This item can't be sent back.",
        "Perishable goods are excluded from returns.",
        "We can't refund perishable items.",
    ],
)
def test_refusals_in_other_words(text):
    assert not_eligible_stated(text)


# -- reasons in other words ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "It was delivered 19 days ago, and our policy only allows returns within 15 days.",
            "window",
        ),
        ("Returns are accepted within 30 days of delivery, and it's been 35 days.", "window"),
        ("Food items can't be returned once delivered.", "perishable"),
        ("Grocery items can't be returned.", "perishable"),
        ("For food-safety reasons we can't take it back.", "perishable"),
        ("The seal has been broken.", "hygiene"),
        ("Opened shampoo can't be returned.", "hygiene"),
        ("It's a custom item.", "personalised"),
        ("It has your name printed on it.", "personalised"),
        # A returns audit (348 refusals): each named no reason or another too.
        ("It's been 94 days, which exceeds our 90-day return limit.", "window"),
        ("It's no longer within the return period, so it can't be returned.", "window"),
        (
            "Even though your return window is still open, opened hygiene items can't be returned.",
            "hygiene",
        ),
        (
            "The return window doesn't apply here: opened hygiene items can't be returned.",
            "hygiene",
        ),
        ("It wasn't a final-sale item, but the return window has closed.", "window"),
    ],
)
def test_reasons_in_other_words(text, reason):
    assert refusal_reasons_stated(text) == {reason}


@pytest.mark.parametrize(
    "text",
    [
        # A cheat audit: each was graded as the true reason on every window (or any) refusal.
        "This item falls outside our return policy, so it can't be returned.",
        "It's past the point where we can help, so it can't be returned.",
        "It isn't eligible, most likely because the return window has passed.",
        "It can't be returned, probably because it's perishable.",
    ],
)
def test_a_vague_or_guessed_reason_names_none(text):
    assert refusal_reasons_stated(text) == set()


def test_the_window_rule_without_elapsed_days_is_context():
    text = "Returns are accepted within 60 days of delivery; opened hygiene items are not."
    assert refusal_reasons_stated(text) == {"hygiene"}


# -- zero in words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("There's no return shipping fee.", "fee"),
        ("It won't cost you anything in your case.", "fee"),
        ("You won't pay anything for it.", "fee"),
        ("In your case, it's on us.", "fee"),
        ("In your case, it's complimentary.", "fee"),
        ("You get free returns no matter how much you spend.", "threshold"),
        ("Returns are free for orders of any amount.", "threshold"),
        ("This item doesn't come with a warranty.", "warranty"),
        ("The item isn't covered by any warranty.", "warranty"),
        ("Your order isn't eligible for a bulk discount.", "discount"),
        ("You don't qualify for any discount on this order.", "discount"),
        ("The bulk discount doesn't apply to your order.", "discount"),
        ("Our store warranty doesn't apply to this item.", "warranty"),
    ],
)
def test_zero_in_words(text, kind):
    assert zero_stated(text, kind)


def test_a_full_refund_in_brackets_is_no_fee():
    assert fee_percents_stated("You'll receive a full refund (100% of the price).") == [0.0]


# -- statuses in other words -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("Your order 469-0030617-0101557 shows as processing.", "processing"),
        ("The status of your order 469-0030617-0101557 is: Processing.", "processing"),
        ("**Order 469-0030617-0101557** — In transit", "in_transit"),
        ("Good news — order 356-0030617-0101557 arrived on February 25, 2026.", "delivered"),
        ("Your order is making its way to you.", "in_transit"),
        ("Your order has been placed and is being processed.", "processing"),
        ("We're preparing your order for shipment.", "processing"),
        ("Your order has been received and is awaiting processing.", "placed"),
        ("✅ Delivered on Fri, Feb 20", "delivered"),  # a status audit: 260 of 260 failed
        ("🚚 In transit — arriving Mar 3", "in_transit"),
        # A table's status cell (83 of 260 table answers failed).
        (
            "| Order | Status | ETA |\n|---|---|---|\n| 441-0047503 | In Transit | Mar 10 |",
            "in_transit",
        ),
    ],
)
def test_statuses_in_other_words(text, truth):
    assert status_stated(text, truth)


def test_a_perfect_is_the_status_now_unless_a_present_clause_follows():
    assert not status_stated("Your order has been placed.", "processing")
    assert not status_stated(
        "Your order has been placed and is not processed yet. It was delivered.", "delivered"
    )


# -- days written without their month --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("It should arrive on Friday the 6th.", date(2026, 3, 6)),
        ("It should arrive on the 17th.", date(2026, 3, 17)),  # this month's
        ("It should arrive in 4 days.", date(2026, 3, 6)),
        ("It was delivered 3 days ago.", date(2026, 2, 27)),
        ("It should arrive Tuesday (Mar 17).", date(2026, 3, 17)),
        ("It was delivered on 21/02/2026.", date(2026, 2, 21)),  # day first: no month 21
        # Told in the past or of the future, the nearest such day on that side of today (a
        # status audit: "delivered on Tuesday the 10th" was read as March 10, 5 of 35).
        ("It was delivered on Tuesday the 10th.", date(2026, 2, 10)),
        ("It was delivered on the 28th.", date(2026, 2, 28)),
        ("It is expected to arrive on Monday the 16th.", date(2026, 3, 16)),
        ("It will arrive by the 1st.", date(2026, 4, 1)),
        # A status audit: the weekday after a date was read as another date (127 of 260), and
        # "last Monday" said on a Monday as today (5 of 260).
        ("It should arrive on March 10 (Tuesday).", date(2026, 3, 10)),
        ("It was delivered on February 20, Friday.", date(2026, 2, 20)),
        ("It was delivered last Monday.", date(2026, 2, 23)),
    ],
)
def test_days_read_against_today(text, day):
    assert date_stated_alone(text, day, year=2026, allowed=frozenset({TODAY}), today=TODAY)


def test_a_day_alone_is_not_read_from_the_answer():
    # "the 28th" is this month's whatever the date asked about: Feb 28 is not stated.
    text = "It is on the 28th."
    assert not date_stated_alone(text, date(2026, 2, 28), year=2026, today=TODAY)
    # Told of the future, "the 28th" is still this month's, whatever was asked about.
    text = "It should arrive on the 28th."
    assert not date_stated_alone(text, date(2026, 2, 28), year=2026, today=TODAY)
    # Counts are no days of the month.
    assert not date_stated_alone(
        "Delivered on the 2nd attempt.", date(2026, 3, 2), year=2026, today=TODAY
    )


@pytest.mark.parametrize(
    "text",
    [
        # 112 of 5,000 catalog titles hold a fraction: naming the item added a date.
        "Your Circular Saw, 7-1/4-Inch Blade was delivered on March 6.",
        "Your Men's 3/4 Sleeve Raglan Tee was delivered on March 6.",
        "Your 1/2 lb coffee was delivered on March 6.",
    ],
)
def test_a_fraction_in_a_title_is_no_date(text):
    assert date_stated_alone(text, date(2026, 3, 6), year=2026, allowed=ALLOWED, today=TODAY)


def test_slash_dates_joined_by_a_dash_are_still_two_dates():
    assert date_listed("It arrives 3/6-3/8.", date(2026, 3, 6), year=2026, today=TODAY)


# -- a policy audit (520 tasks, 5k products, d = 0–12): honest answers that were read wrong -------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("I checked, and yes, that works.", True),
        ("That's a no, unfortunately.", False),
        ("Pickup isn't offered, but you can return it by mail.", False),
        ("We'll refund the difference.", True),
        ("You can send it back.", True),
        ("You can schedule a pickup.", True),
        ("We can't take it back.", False),
        ("You sure can!", True),
        ("You won't be able to return it, but we can offer store credit.", False),
        ("We will not refund it.", False),
    ],
)
def test_yes_and_no_as_assistants_say_them(text, said):
    assert yes_no_stated(text) == {said}


def test_yes_and_no_together_is_no_answer():
    assert yes_no_stated("Yes and no.") == {True, False}
    assert yes_no_stated("Yes, and no restocking fee applies.") == {True}


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("Two-day shipping arrives within 3 business days.", "business days", 3),
        ("It arrives the next business day.", "business days", 1),
        ("You're covered for half a year.", "months", 6),
        ("Warranty: 12 mo.", "months", 12),
        ("Warranty: 2 yrs.", "months", 24),
    ],
)
def test_numbers_as_assistants_write_them(text, unit, value):
    assert numbers_stated(text, unit) == [value]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("It costs you nothing.", "fee"),
        ("Return shipping fee: none", "fee"),
        ("You don't have to pay for it.", "fee"),
        ("Premium members always get free shipping.", "threshold"),
        ("Shipping is free regardless of how much you spend.", "threshold"),
        ("Perishable items aren't eligible for bulk discounts.", "discount"),
        ("You'd pay full price.", "discount"),
        ("We don't offer a store warranty on it.", "warranty"),
        ("It carries only the manufacturer's warranty.", "warranty"),
        ("You'll get a full refund.", "restocking"),
    ],
)
def test_zero_as_assistants_say_it(text, kind):
    assert zero_stated(text, kind)


def test_a_full_refund_says_nothing_of_return_shipping():
    assert not zero_stated("You'll get a full refund.", "fee")


def test_a_restated_fact_is_skipped_only_in_its_own_unit():
    """The item's $10 price hid "10%" beside the true 15% (a cheat audit)."""
    goal = _goal(15, "percent", topic="bulk_discount")
    assert not answer_right("It depends: 10% or 15%.", goal, ignore=())
    assert answer_right("It's 15% on your $10.00 item.", goal, ignore=(10.0,))


@pytest.mark.parametrize(
    ("text", "fee"),
    [
        ("You'll get back 90% of what you paid (a 10% restocking fee).", 10),
        ("- Restocking fee: 10%\n- Your refund: 90% of the item price", 10),
        ("Restocking fee: 10%\nRefund: $443.25", 10),  # a fee line over an amount line
    ],
)
def test_a_fee_said_beside_the_share_refunded(text, fee):
    assert set(fee_percents_stated(text)) == {fee}


def test_a_discount_said_as_the_share_paid():
    text = "The bulk discount is 5%, so you pay 95% of the usual line price."
    assert answer_right(text, _goal(5, "percent", topic="bulk_discount"))
    assert not answer_right("It's 5%.", _goal(95, "percent", topic="bulk_discount"))


def test_no_and_yes_together_is_no_answer_either_way_round():
    assert yes_no_stated("No and yes — it depends on your situation.") == {False, True}


# -- a paraphrase probe of status and policy answers (53 status, 62 policy wordings) -------------


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Your order was delivered on 20.02.2026.", date(2026, 2, 20)),  # day first
        ("Estimated delivery: 05.03.2026.", date(2026, 3, 5)),
        ("Estimated delivery: 03.25.2026.", date(2026, 3, 25)),  # no month 25: month first
    ],
)
def test_dotted_dates_are_dates(text, day):
    assert date_stated_alone(text, day, year=2026, allowed=ALLOWED, today=TODAY)


@pytest.mark.parametrize(
    "text",
    [
        "It costs 4.99 and arrives on March 6.",  # a price
        "Firmware 2.5.1 ships with it; it arrives on March 6.",  # a version
        "It arrives on March 6 (order 1.2.3026 in our old system).",  # no year of ours
    ],
)
def test_prices_and_versions_are_no_dotted_dates(text):
    assert date_stated_alone(text, date(2026, 3, 6), year=2026, today=TODAY)


def test_dotted_dates_side_by_side_are_a_list_and_no_tracking_number():
    text = "Dates: 14.02.2026, 20.02.2026. Tracking: 1Z742870316384"
    assert date_listed(text, date(2026, 2, 20), year=2026, today=TODAY)
    assert only_code_stated("Shipped 17.02.2026/20.02.2026, 1Z742870316384", "1Z742870316384")


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("It was delivered on February 20. I hope you have received it!", "delivered"),
        ("It was delivered on Feb 20; if you haven't received it, tell me.", "delivered"),
        ("Delivery was completed on 2026-02-20.", "delivered"),
        ("Your order reached you on February 20.", "delivered"),
        ("Your order has left our warehouse and should arrive on March 5.", "shipped"),
        ("It has left the warehouse and is in transit.", "in_transit"),
    ],
)
def test_statuses_said_without_their_word(text, truth):
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        # The customer receiving it is no order just placed ("received" is a placed word).
        ("I hope you have received it.", "placed"),
        # Negated or awaited, the new wordings assert nothing.
        ("It hasn't left our warehouse yet.", "shipped"),
        ("It should have reached you by now.", "delivered"),
        ("Once delivery is completed you'll get an email.", "delivered"),
    ],
)
def test_the_new_status_wordings_assert_nothing_negated_or_awaited(text, truth):
    assert not status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("The store warranty covers it for two full years.", "months", 24),
        ("You have 30 full days to return it.", "days", 30),
        ("You have 45 days, so you still have 35 days left.", "days", 45),
        ("You have 30 days left to return it.", "days", 30),  # alone, the days left answer
    ],
)
def test_spans_as_assistants_write_them(text, unit, value):
    assert answer_right(text, _goal(value, unit, topic="return_window"))


def test_days_left_beside_a_wrong_window_do_not_make_it_right():
    goal = _goal(45, "days", topic="return_window")
    assert not answer_right("The window is 30 days; you have 45 days left.", goal)
    assert not answer_right("You have 30 or 45 days left.", goal)


def test_the_remaining_share_refunded_is_no_second_fee():
    text = "We keep 15% as a restocking fee and refund the remaining 85%."
    assert set(fee_percents_stated(text)) == {15}


# -- a paraphrase bank written apart from the readers (300 status, 400 policy answers) ----------
# Honest answers read wrong: status 32 of 210, policy 31 of 280; now 4 each. Hedges and wrong
# answers read right: status 23 of 90 (most give a fact the customer did not ask for, which is
# not graded), policy 10 of 120; now 16 and 3, none of them a hedge over two answers.


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("You placed it on February 14 and UPS delivered it on February 20.", "delivered"),
        ("UPS marked the package as delivered on Friday, February 20.", "delivered"),
        ("1. Order placed: Feb 14\n2. Shipped: Feb 17\n3. Delivered: Feb 20", "delivered"),
        ("Order 356-0030617-0101557 → Delivered (2026-02-20).", "delivered"),
        ("The package was handed over to you on February 20, 2026.", "delivered"),
        ("Your order reached its destination on February 20.", "delivered"),
        ("It was dropped off by UPS on Friday, Feb 20.", "delivered"),
        ("Your shipment is moving through the FedEx network.", "in_transit"),
        ("Your package was handed to USPS on Saturday, February 28.", "shipped"),
        ("We shipped your order on February 28, 2026.", "shipped"),
        ("Still processing ⏳ — expected delivery Fri, Mar 6.", "processing"),
        (
            "1. Order placed — Feb 28 ✅\n2. Processing — in progress\n3. Shipped — not yet",
            "processing",
        ),
        ("We're getting your order ready! It hasn't shipped yet.", "processing"),
        ("Your order is being packed and prepared for shipment.", "processing"),
        ("It's currently in the 'placed' stage — it hasn't moved into processing yet.", "placed"),
        ("Your order has been placed and is queued for processing.", "placed"),
        ("We've received your order and it's waiting to be processed.", "placed"),
        ("* Status: Cancelled\n* Placed: February 20, 2026\n* Cancelled: February 21", "cancelled"),
        ("This order has been cancelled, so it won't be shipped or delivered.", "cancelled"),
    ],
)
def test_statuses_as_a_paraphrase_bank_writes_them(text, truth):
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        # A guess at the status states none, and beside another status it is a hedge.
        ("It looks like your order was probably delivered on February 20.", "delivered"),
        ("Your order is probably in transit.", "in_transit"),
        ("Your order has been placed or is possibly already processing.", "placed"),
        ("Your order has been placed or is possibly already processing.", "processing"),
        # A status line does not lead the next line's status.
        ("Status: Delivered\nPlaced: February 14", "placed"),
    ],
)
def test_guessed_statuses_and_other_lines_state_nothing(text, truth):
    assert not status_stated(text, truth)


def test_the_day_after_tomorrow_is_one_date():
    text = "It is expected the day after tomorrow — Wednesday, March 4, 2026."
    assert date_stated_alone(text, date(2026, 3, 4), year=2026, today=TODAY)
    assert not date_listed(text, date(2026, 3, 4), year=2026, today=TODAY)


@pytest.mark.parametrize(
    ("text", "goal", "ignore"),
    [
        # Arithmetic on the answer beside it: a refund left, a total, the rest to a threshold.
        (
            "The $9.99 fee leaves you with a refund of $35.51.",
            _goal(9.99, "USD", "return_shipping_fee"),
            (45.5,),
        ),
        (
            "**Return shipping fee:** $9.99\n**Refund after fee:** $35.51",
            _goal(9.99, "USD", "return_shipping_fee"),
            (45.5,),
        ),
        (
            "Shipping is $5.99, bringing your total to $27.99.",
            _goal(5.99, "USD", "shipping_cost"),
            (22.0, 35.0),
        ),
        (
            "Shipping is $5.99; add $13.00 more to reach $35 and it's free.",
            _goal(5.99, "USD", "shipping_cost"),
            (22.0, 35.0),
        ),
        (
            "There's no shipping fee; you're $29.00 over the minimum.",
            _goal(0, "USD", "shipping_cost"),
            (64.0, 35.0),
        ),
        ("It's $99 per year, about $8.25 a month.", _goal(99, "USD/year", "membership_fee"), ()),
        (
            "- Return window: 45 days\n- Time remaining: 35 days",
            _goal(45, "days", "return_window"),
            (10.0,),
        ),
        (
            "You have a 45-day window: any time in the next 35 days.",
            _goal(45, "days", "return_window"),
            (10.0,),
        ),
        (
            "The window is 30 days, so you have 27 days from today.",
            _goal(30, "days", "return_window"),
            (3.0,),
        ),
        # Numbers in words, once with their digits.
        ("The return period is forty-five (45) days.", _goal(45, "days", "return_window"), ()),
        (
            "Gold membership is ninety-nine dollars per year.",
            _goal(99, "USD/year", "membership_fee"),
            (),
        ),
        (
            "Free shipping on orders of thirty-five dollars or more.",
            _goal(35, "USD", "free_shipping_threshold"),
            (),
        ),
        (
            "Shipping is five dollars and ninety-nine cents.",
            _goal(5.99, "USD", "shipping_cost"),
            (),
        ),
        # Zero in words.
        ("We don't provide our own warranty on this product.", _goal(0, "months", "warranty"), ()),
        ("Our store doesn't warranty this item at all.", _goal(0, "months", "warranty"), ()),
        ("There isn't a bulk discount for 3 items.", _goal(0, "percent", "bulk_discount"), ()),
        ("- Quantity: 3\n- Discount: none", _goal(0, "percent", "bulk_discount"), ()),
        (
            "It's free of any restocking fee: 100% of your $120.00 comes back to you.",
            _goal(0, "percent", "restocking_fee"),
            (),
        ),
    ],
)
def test_policy_answers_as_a_paraphrase_bank_writes_them(text, goal, ignore):
    assert answer_right(text, goal, ignore)


@pytest.mark.parametrize(
    ("text", "goal"),
    [
        # A monthly amount is no yearly fee, and arithmetic alone does not hide a hedge.
        ("Gold membership is $99 per month.", _goal(99, "USD/year", "membership_fee")),
        ("It has a 1- or 2-year store warranty.", _goal(24, "months", "warranty")),
        ("It has a 1- or 2-year store warranty.", _goal(12, "months", "warranty")),
        ("Whether shipping is free depends on your location.", _goal(0, "USD", "shipping_cost")),
        # Told as arithmetic, a wrong value beside the answer still decides nothing: the
        # stated one does.
        ("Shipping is $9.99; your total comes to $5.99.", _goal(5.99, "USD", "shipping_cost")),
    ],
)
def test_policy_hedges_and_wrong_units_stay_wrong(text, goal):
    assert not answer_right(text, goal)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("**Returnable:** No\n**Reason:** Final sale", {False}),
        ("In-store drop-off isn't an option. You can still send it back by mail, though.", {False}),
        ("It depends on the retailer, so I can't say whether we'll match it.", set()),
        ("Whether it's returnable depends on several factors.", set()),
        ("You may or may not be able to drop it off in store.", set()),
    ],
)
def test_yes_and_no_in_a_paraphrase_bank(text, said):
    assert yes_no_stated(text) == said


# -- returns refusals (130) and journey final messages (150) written apart from the readers -----
# Honest refusals read wrong: 5 of 100, now none; honest journey answers: 8 of 110, now none.


@pytest.mark.parametrize(
    "text",
    [
        "Unfortunately that coffee can't go back; it's a perishable item.",
        "Unfortunately that jacket was a final-sale purchase, so there's no return option for it.",
        "No return possible here, I'm sorry: the jacket was a final-sale item.",
    ],
)
def test_refusals_said_as_nothing_going_back(text):
    assert not_eligible_stated(text)


def test_a_weekday_after_its_date_is_no_other_date():
    text = "Your order was delivered on 2/20/2026, a Friday."
    assert date_stated_alone(text, date(2026, 2, 20), year=2026, allowed=ALLOWED, today=TODAY)
    # Alone, "a Friday" is still a date of its own: last Friday or the next.
    assert not date_stated_alone(
        "It was delivered on 2/20/2026. It arrives a Friday.",
        date(2026, 2, 20),
        year=2026,
        allowed=frozenset({TODAY}),
        today=TODAY,
    )


def test_yes_after_a_labels_dash():
    assert yes_no_stated("- **Price matching** — Yes! We match lower prices.") == {True}
    assert yes_no_stated("Price match - no, not for marketplace sellers.") == {False}


# -- honest answers the answer banks still read wrong, now read as written ---------------------------


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("Your items are being picked and packed right now.", "processing"),
        ("Both items were delivered on February 20.", "delivered"),
        ("We have your order (placed March 1) and it's expected on March 9.", "placed"),
    ],
)
def test_statuses_of_the_orders_items_and_in_brackets(text, truth):
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    "text",
    [
        "Your order is being processed. Orders are typically delivered in 3-5 days.",
        "It is being processed; most orders are shipped within 2 business days.",
    ],
)
def test_what_orders_generally_are_is_no_status_of_this_one(text):
    assert status_stated(text, "processing")
    assert not status_stated(text, "delivered")
    assert not status_stated(text, "shipped")


def test_a_numeric_date_beside_the_same_date_in_words_is_that_date():
    text = "Estimated delivery: Friday, March 6, 2026 (06/03/2026)."
    assert date_stated_alone(text, date(2026, 3, 6), year=2026, today=TODAY)
    assert not date_listed(text, date(2026, 3, 6), year=2026, today=TODAY)
    # Alone, or beside another date, it is still read month first.
    assert date_stated_alone("Estimated delivery: 06/03/2026.", date(2026, 6, 3), year=2026)
    assert not date_stated_alone(
        "Expected March 5 or 06/03/2026.", date(2026, 3, 6), year=2026, today=TODAY
    )


def test_dates_in_a_tables_columns_are_labelled_by_its_header():
    table = "| Status | Placed on | Expected delivery |\n|---|---|---|\n| Placed | 2026-03-01 | 2026-03-09 |"
    assert not date_listed(table, date(2026, 3, 9), year=2026, today=TODAY)
    # Without the header's rule the cells are a bare list.
    assert date_listed("2026-03-01 | 2026-03-09", date(2026, 3, 9), year=2026, today=TODAY)
    assert date_listed(table + "\n| ETA | 2026-03-09 or 2026-03-10 |", date(2026, 3, 9), year=2026)


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Unfortunately you won't get one: the bulk discount starts at 10 units.", "bulk_discount"),
        ("I'm afraid there isn't one for an order of 3.", "bulk_discount"),
        ("Sorry, you don't qualify for it.", "bulk_discount"),
        ("Unfortunately, that isn't possible. Bulk pricing needs 10 units.", "bulk_discount"),
        ("That item doesn't come with one.", "warranty"),
        ("You won't pay for return shipping.", "return_shipping_fee"),
        ("Shipping is on the house.", "shipping_cost"),
    ],
)
def test_none_said_of_the_thing_asked_about(text, topic):
    unit = {"warranty": "months", "shipping_cost": "USD", "return_shipping_fee": "USD"}
    assert answer_right(text, _goal(0, unit.get(topic, "percent"), topic))
    assert not answer_right(text, _goal(5, unit.get(topic, "percent"), topic))


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("It's in transit with FedEx. Note: the order hasn't shipped yet.", "in_transit"),
        ("It has shipped. It hasn't left our warehouse yet and waits to be packed.", "shipped"),
        ("Your order was delivered on February 20. It has not shipped.", "delivered"),
        ("It has been placed. Actually it is not placed yet.", "placed"),
    ],
)
def test_denying_a_stage_the_order_passed_contradicts_it(text, truth):
    assert not status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("It's in transit and hasn't been delivered yet.", "in_transit"),
        ("It is being processed and hasn't shipped yet.", "processing"),
        ("It was delivered on February 20, so it isn't in transit anymore.", "delivered"),
        ("If it hasn't shipped by Friday, I'll refund you. It is in transit.", "in_transit"),
        ("It was delivered on February 20. It was not delivered late.", "delivered"),
        ("It was delivered on February 20. It has not been shipped back.", "delivered"),
        ("It was cancelled; it was not shipped.", "cancelled"),
    ],
)
def test_denying_a_stage_still_ahead_or_something_else_is_no_contradiction(text, truth):
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        # Not in a state now is no denial of having passed it.
        ("It isn't processing or in transit; it's delivered.", "delivered"),
        ("It isn't processing or shipping; the order is cancelled.", "cancelled"),
        # A negation does not reach into the next sentence.
        ("No, your order is not lost. UPS delivered it on February 20, 2026.", "delivered"),
        # "Shipped: No" negates shipped; a key-value table's rows are no status column.
        ("- Status: Cancelled\n- Shipped: No\n- Tracking: None", "cancelled"),
        (
            "| Field | Detail |\n|---|---|\n| Status | Cancelled |\n| Placed | Feb 20, 2026 |",
            "cancelled",
        ),
        # A status's word before a date tells when it happened.
        ("Order 603-1182736-5520019 — placed 28 Feb 2026, currently processing.", "processing"),
        ("Order 829-3345120-0091827 — placed 20 Feb 2026, cancelled 21 Feb 2026.", "cancelled"),
        # Waiting to be processed is placed; what happens "as soon as" it ships has not.
        (
            "It's in the queue waiting to be processed. We'll email you as soon as it's on its way.",
            "placed",
        ),
        ("Placed — expected March 9. Not processed or shipped yet.", "placed"),
        # Not processed yet, said of the order, is placed.
        ("It's not in transit yet — it hasn't even been processed.", "placed"),
        ("A carrier hasn't been assigned, since the order hasn't been processed.", "placed"),
        ("Your order is in 'placed' status — it hasn't been processed or shipped yet.", "placed"),
    ],
)
def test_statuses_beside_negations_lists_and_dates(text, truth):
    assert status_stated(text, truth)


def test_a_weekday_beside_a_date_it_does_not_fall_on_is_a_second_day():
    day = date(2026, 2, 20)  # a Friday
    for text in ("Delivered on Thursday, February 20, 2026.", "Delivered 2/20/2026 (Sunday)."):
        assert not date_stated_alone(text, day, year=2026, today=TODAY), text
    for text in ("Delivered on Friday, February 20, 2026.", "Delivered Fri 20 Feb."):
        assert date_stated_alone(text, day, year=2026, today=TODAY), text


@pytest.mark.parametrize(
    ("text", "goal", "ignore"),
    [
        (
            "You have 30 days, so there's plenty of time left — 18 days, to be exact.",
            _goal(30, "days", "return_window"),
            (12.0,),
        ),
        (
            "Members have 30 days to return items. You're 12 days in, so 18 days remain.",
            _goal(30, "days", "return_window"),
            (12.0,),
        ),
        (
            "Your return shipping fee is $7.99, so from $45.50 you'd net $37.51.",
            _goal(7.99, "USD", "return_shipping_fee"),
            (45.5, 75.0),
        ),
        (
            "Standard shipping to TX: $5.99. Order + shipping = $33.99.",
            _goal(5.99, "USD", "shipping_cost"),
            (28.0, 35.0),
        ),
        (
            "| Purchased | Eligible |\n|---|---|\n| 5 days ago | Yes |",
            {"kind": "boolean", "value": True},
            (),
        ),
        (
            "Sorry, final sale means no returns — that includes your jacket.",
            {"kind": "boolean", "value": False},
            (),
        ),
        ("The jacket can't be sent back for a return.", {"kind": "boolean", "value": False}, ()),
    ],
)
def test_policy_answers_as_a_second_bank_writes_them(text, goal, ignore):
    assert answer_right(text, goal, ignore)


@pytest.mark.parametrize(
    "text", ["Shipping on your order will be either $5.99 or free.", "It's free or $5.99."]
)
def test_a_value_or_free_is_a_hedge(text):
    assert not answer_right(text, _goal(5.99, "USD", "shipping_cost"))
    # A condition is no alternative: the value for the customer's case stands.
    assert answer_right(
        "It's $5.99, or free if you add $7 more.", _goal(5.99, "USD", "shipping_cost")
    )


def test_a_status_or_refusal_said_as_only_sometimes_so_is_a_hedge():
    text = "It was delivered on February 20, though it may actually still be in transit."
    assert not status_stated(text, "delivered")
    assert not not_eligible_stated(
        "It might be returnable; personalised items sometimes can't be returned."
    )


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("A 15% restocking fee applies. Actually, Basic members pay no restocking fee.", 0),
        ("Return shipping is $7.99. Correction: your return is free.", 0),
        ("Shipping is $5.99. Sorry, I misspoke: your order ships free.", 0),
        ("The fee is 10%. Actually, I misread: for opened electronics it is 15%.", 15),
        ("Actually, the fee is 15%.", 15),  # nothing before it to correct
    ],
)
def test_a_correction_replaces_what_it_corrects(text, truth):
    topic = "restocking_fee" if "%" in text else "return_shipping_fee"
    unit = "percent" if "%" in text else "USD"
    assert answer_right(text, _goal(truth, unit, topic))
    other = 15 if truth == 0 else 0
    assert not answer_right(text, _goal(other, unit, topic))


@pytest.mark.parametrize(
    "text",
    [
        "The fee is 15%. Actually, if you were a Premium member, it would be waived.",
        "The fee is 15%. Actually, for Premium members there is no fee.",
        "The fee is 15%. It's actually waived only for Premium members.",  # not a correction
    ],
)
def test_a_correction_under_a_condition_tells_another_case(text):
    assert answer_right(text, _goal(15, "percent", "restocking_fee"))


def test_a_refund_not_yet_processed_tells_no_stage_of_the_order():
    text = "Your order was cancelled; the refund hasn't been processed yet."
    assert status_stated(text, "cancelled")
    assert not status_stated(text, "placed")


@pytest.mark.parametrize(
    "text",
    [
        "Our policy gives $10.99 in your case. Actually, correction: sorry, I misspoke, I can't "
        "tell what our policy gives in your case.",
        "Return shipping is $10.99. Sorry, I was wrong.",
        "It's $10.99. Actually, please disregard that.",
    ],
)
def test_a_correction_that_takes_the_answer_back_leaves_none(text):
    assert not answer_right(text, _goal(10.99, "USD", "return_shipping_fee"))
    # Told after the correction, the value is the answer again.
    assert answer_right(f"{text} It is $10.99.", _goal(10.99, "USD", "return_shipping_fee"))


def test_a_yes_or_no_is_corrected_as_a_value_is():
    yes, no = {"kind": "boolean", "value": True}, {"kind": "boolean", "value": False}
    assert answer_right("Yes, you can return it. Actually, no: it's final sale.", no)
    assert not answer_right("Yes, you can return it. Actually, no: it's final sale.", yes)
    assert not answer_right("Yes, you can return it. Actually, I'm not sure.", yes)
    assert answer_right("Yes, you can. Actually, only if you're a member: no, then.", yes)
