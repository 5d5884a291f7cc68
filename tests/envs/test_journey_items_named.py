"""A journey's cart step: the customer names which item each quantity or variant is for.

The journey script held the cart step's items only as one joined goal string, so every
question about one of its items was answered with all of the items' values unnamed ("the qty
is 1, the qty is 2 and the qty is 1"). Each item's description is now a slot of the script,
and a reply stating several items' values names the item of each.
"""

import json
import re

import pytest

from shopgen.taskgen import assistant_message


@pytest.fixture(scope="module")
def journey_with_cart(factory):
    """A journey whose cart step holds two items with different quantities or variants."""
    for d in (12, 9):
        for k in range(40):
            row = factory.make("journey", d, k).row
            goal = json.loads(row.goal)
            for i, step in enumerate(goal["steps"]):
                items = step["goal"].get("items") if step["env"] == "cart" else None
                if items and len({(it["quantity"], it["variant_id"]) for it in items}) > 1:
                    return row, i, items
    pytest.skip("no journey with two different cart items")


def test_the_script_holds_each_cart_item(journey_with_cart):
    row, i, items = journey_with_cart
    slots = {s["name"]: s["value"] for s in json.loads(row.user_script)["slots"]}
    for j, it in enumerate(items):
        assert slots[f"steps.{i}.items.{j}.desc"] == it["desc"]


def test_a_question_about_the_cart_step_names_each_item(journey_with_cart, shop_env):
    row, _i, items = journey_with_cart
    shop_env.reset(row)
    question = f"About the {items[0]['desc']}: how many of each item do you need?"
    shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
    reply = json.loads(shop_env.transcript[-1]["content"])["reply"]
    for it in items:
        assert f"{it['quantity']} for the {it['desc']}" in reply, reply


@pytest.fixture(scope="module")
def journey_with_exchange(factory):
    """A journey whose returns step exchanges its item, the value's label naming no step."""
    for d in (10, 12, 8):
        for k in range(40):
            row = factory.make("journey", d, k).row
            slots = json.loads(row.user_script)["slots"]
            by_name = {s["name"]: s for s in slots}
            for s in slots:
                parts = s["name"].split(".")
                if len(parts) == 4 and parts[2] == "exchange" and "exchange" not in s["label"]:
                    return row, s["value"], by_name[f"steps.{parts[1]}.goal"]["value"]
    pytest.skip("no journey with an exchange")


def test_a_question_naming_no_step_gets_the_exchange_said_as_the_exchange(
    journey_with_exchange, shop_env
):
    """ "Which one would you like instead?" was answered "the scent is Vanilla", whose step?"""
    row, value, item = journey_with_exchange
    shop_env.reset(row)
    question = "Which one would you like instead?"
    shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
    reply = json.loads(shop_env.transcript[-1]["content"])["reply"]
    assert f"{value} for the exchange of {item}" in reply, reply


@pytest.fixture(scope="module")
def journey_with_budget_switch(factory):
    """A journey whose change of mind raises one request's budget."""
    for d in (12, 8, 4):
        for k in range(40):
            row = factory.make("journey", d, k).row
            script = json.loads(row.user_script)
            switch = script.get("switch")
            if switch and switch["changes"][0][0].endswith(".price_max"):
                return row, switch["changes"][0][1]
    pytest.skip("no journey with a budget switch")


def test_a_change_of_mind_s_value_names_its_request(journey_with_budget_switch, shop_env):
    """ "actually make it $190" (values only) named no request; the value now names it."""
    row, budget = journey_with_budget_switch
    script = json.loads(row.user_script)
    name = script["switch"]["changes"][0][0]
    label = next(s["label"] for s in script["slots"] if s["name"] == name)
    subject = label.partition(" for ")[2]
    assert subject, label
    shop_env.reset(row)
    for turn in range(1, script["switch"]["turn"] + 2):
        shop_env.step(assistant_message(turn, [("cart_view", {})]))
    said = " ".join(m["content"] for m in shop_env.transcript[1:] if m["role"] == "user")
    assert f"${budget:g} for {subject}" in said, said


@pytest.fixture(scope="module")
def journey_with_two_rankings(factory):
    """A journey with two recommendation steps whose customer ranks by preference."""
    for d in (8, 12, 11):
        for k in range(40):
            row = factory.make("journey", d, k).row
            slots = json.loads(row.user_script)["slots"]
            if sum(s["name"].endswith(".priority") for s in slots) >= 2:
                return row
    pytest.skip("no journey with two rankings")


def test_an_answer_about_several_steps_names_the_step_of_each(journey_with_two_rankings, shop_env):
    """ "How much do price, rating, delivery and brand matter?" got two rankings, whose?"""
    row = journey_with_two_rankings
    slots = json.loads(row.user_script)["slots"]
    values = {s["name"]: s["value"] for s in slots}
    shop_env.reset(row)
    question = "How much do price, rating, delivery and brand matter to you?"
    shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
    reply = json.loads(shop_env.transcript[-1]["content"])["reply"]
    for s in slots:
        if s["name"].endswith(".priority"):
            goal = values[f"steps.{s['name'].split('.')[1]}.goal"]
            said = re.escape(s["value"]) + r" for (the )?" + re.escape(goal)
            assert re.search(said, reply), reply
