"""The cart heuristic: typo-tolerant reading, the visit history, questions, the call budget."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.cart import heuristic
from shopgen.policies.heuristic.cart_text import (
    corrected,
    match_score,
    parse_request,
    read_change,
    reply_quantity,
    similar_and,
)


def _task(user: str) -> PublicTask:
    return PublicTask(task_id="t", env="cart", system="", user=user, tools=())


def _card(pid: str, title: str, brand: str = "") -> dict[str, Any]:
    return {"product_id": pid, "title": title, "brand": brand, "stock_qty": 10}


def test_parse_reads_typod_items_quantities_variants_and_history() -> None:
    text = (
        "Good evening. I would like to order 1 x  Lucero Co. Flex sandals (color Green) and "
        "2 x Valenzuela Modern bath owels (c9lor Blue). Would oyu  kindly place them in my cart?"
    )
    a, b = parse_request(text)
    assert (a.desc, a.qty, a.said) == ("Lucero Co. Flex sandals", 1, "color Green")
    assert (b.desc, b.qty, b.said) == ("Valenzuela Modern bath owels", 2, "c9lor Blue")
    hist = parse_request("cart: body wash, the one I lookwd wt two days ago and 1 x Halent set thx")
    assert [(w.desc, w.when) for w in hist] == [("body wash", "two days ago"), ("Halent set", None)]


def test_parse_splits_lists_and_a_typod_and() -> None:
    listed = parse_request("Cart: - 4 x Turner Quest stem kit -- 1 x King Nova fast charging cale")
    assert [(w.desc, w.qty) for w in listed] == [
        ("Turner Quest stem kit", 4),
        ("King Nova fast charging cale", 1),
    ]
    typo = parse_request(
        "add Tzte Loft dresser andd Campbell Tidal sports bottle (capacity 24 oz) to cart pls"
    )
    assert [w.desc for w in typo] == ["Tzte Loft dresser", "Campbell Tidal sports bottle"]
    assert typo[1].said == "capacity 24 oz"


def test_a_typod_product_name_still_matches_and_is_respelled() -> None:
    title = "Valenzuela Modern 4-Piece Egyptian Cotton Bath Towels, Waffle Weave"
    assert match_score("Valenzuela Modern bath owels", title) > 0.9
    assert match_score("Valenzuela Modern bath owels", "Valenzuela Home Bath Towels") < 0.9
    assert "Towels" in corrected("Valenzuela Modern bath owels", [title])


@given(st.sampled_from(["andd", "amd", "nd", "adn", "abd", "aand"]))
def test_typod_and_is_a_separator(word: str) -> None:
    assert similar_and(word)


@given(st.sampled_from(["an", "ad", "and", "band", "sand", "hand", "kit"]))
def test_words_that_are_not_a_typod_and(word: str) -> None:
    assert not similar_and(word)


def test_reply_quantity_skips_digits_of_variant_values() -> None:
    assert reply_quantity("Oh, the size is US 9 and the quantity is 3.", ["US 9"]) == 3
    assert reply_quantity("US 9, 2 thx", ["US 9", "US 10"]) == 2
    assert reply_quantity("3..", []) == 3


def _play(user: str, answer: Any, budget: int = 99) -> list[list[tuple[str, dict[str, Any]]]]:
    """Play the agent, answering each call with ``answer(name, args)``; the turns it sent.

    Calls past ``budget`` in a turn are refused as the runtime refuses them.
    """
    agent = heuristic(_task(user))
    turns = []
    results = None
    refused = {"error": "over_budget", "message": f"at most {budget} tool calls per turn"}
    for _ in range(30):
        move = next(agent) if results is None else agent.send(results)
        if isinstance(move, str):
            return turns
        turns.append(move)
        results = [answer(n, a) if i < budget else refused for i, (n, a) in enumerate(move)]
    raise AssertionError("the agent did not finish")


def _history_shop(history: dict[str, Any], added: list[dict[str, Any]]) -> Any:
    """Tool results for a cart agent buying items from ``history`` (no variants, no search
    hits); what it adds is appended to ``added``."""

    def answer(name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "user_get_visit_history":
            return history
        if name == "catalog_get_variants":
            return {"product_id": args["product_id"], "variants": []}
        if name == "cart_add":
            added.append(args)
            return {"added": args}
        if name == "cart_view":
            return {"lines": [{"product_id": a["product_id"], "variant_id": None} for a in added]}
        return {"results": []}

    return answer


def test_cart_agent_reads_the_visit_history_for_the_one_i_looked_at() -> None:
    visits = [
        {"product_id": "B000000001", "title": "Acme Kettle", "viewed_at": "2026-03-01T10:00"},
        {
            "product_id": "B000000002",
            "title": "Burns Body Wash, 32 fl oz",
            "viewed_at": "2026-03-01T09:00",
        },
    ]
    added: list[dict[str, Any]] = []
    answer = _history_shop({"visits": visits}, added)
    turns = _play("Add to cart: 2 x body wash, the one I lookwd at yesterday.", answer)
    assert turns[0][0][0] == "user_get_visit_history"
    assert added == [{"product_id": "B000000002", "quantity": 2}]


@pytest.mark.parametrize(
    ("when", "wanted"),
    [("two days ago", "B000000001"), ("three days ago", "B000000002"), ("this morning", None)],
)
def test_cart_agent_picks_the_view_of_the_day_said_counted_from_now(
    when: str, wanted: str | None
) -> None:
    """Two kettles viewed on different days: the day said, counted from the tool's now, picks one.

    The newest view is two days old, so taking it for "this morning" (the agent's old guess at
    now) made "two days ago" the older kettle's.
    """
    visits = [
        {"product_id": "B000000001", "title": "Acme Kettle", "viewed_at": "2026-02-28T10:00"},
        {"product_id": "B000000002", "title": "Brill Kettle", "viewed_at": "2026-02-27T10:00"},
    ]
    if wanted is None:  # no kettle viewed this morning: the nearest day, never a guess at now
        visits.append(
            {"product_id": "B000000003", "title": "Crux Kettle", "viewed_at": "2026-03-02T09:00"}
        )
        wanted = "B000000003"
    added: list[dict[str, Any]] = []
    answer = _history_shop({"now": "2026-03-02T12:00", "visits": visits}, added)
    _play(f"Add to cart: kettle, the one I looked at {when}.", answer)
    assert added == [{"product_id": wanted, "quantity": 1}]


def test_cart_agent_asks_for_a_missing_quantity_and_variant() -> None:
    variants = [
        {"variant_id": "V1", "label": "Navy", "attributes": {"color": "Navy"}, "stock_qty": 9},
        {"variant_id": "V2", "label": "Gray", "attributes": {"color": "Gray"}, "stock_qty": 9},
    ]
    added: list[dict[str, Any]] = []
    asked: list[str] = []

    def answer(name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "catalog_search":
            return {
                "results": [_card("B000000009", "Young Goods Max Wired Headphones", "Young Goods")]
            }
        if name == "catalog_get_variants":
            return {"product_id": args["product_id"], "variants": variants}
        if name == "ask_user":
            asked.append(args["question"])
            return {"reply": "Sure: the color is Gray and the quantity is 3."}
        if name == "cart_add":
            added.append(args)
            return {"added": args}
        return {
            "lines": [
                {"product_id": a["product_id"], "variant_id": a.get("variant_id")} for a in added
            ]
        }

    _play("could u pls add Yuong Goods Max wired headphoens to my cart? thx", answer)
    assert asked
    assert "how many" in asked[0]
    assert added == [{"product_id": "B000000009", "quantity": 3, "variant_id": "V2"}]


@pytest.mark.parametrize("budget", [1, 2, 99])
def test_cart_agent_sends_independent_calls_together_within_the_budget(budget: int) -> None:
    cart: list[dict[str, Any]] = []

    def answer(name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "catalog_search":
            word = args["query"].split()[0]
            return {"results": [_card(f"B00000000{len(word)}", args["query"])]}
        if name == "catalog_get_variants":
            return {"product_id": args["product_id"], "variants": []}
        if name == "cart_add":
            cart.append({"variant_id": None, **args})
            return {"added": args}
        return {"lines": cart}

    user = "Put 1 x Alpha lamp, 2 x Betamax chair and 3 x Gammaray rug in my cart."
    turns = _play(user, answer, budget)
    assert [name for name, _ in turns[0]] == ["catalog_search"] * 3
    assert all(len(turn) <= budget for turn in turns[1:])
    assert sorted(line["quantity"] for line in cart) == [1, 2, 3]


def test_parse_reads_a_journey_cart_step() -> None:
    text = (
        "Please add to my cart the Weber Grip car charger and the video game I looked at yesterday."
    )
    assert [(w.desc, w.when) for w in parse_request(text)] == [
        ("Weber Grip car charger", None),
        ("video game", "yesterday"),
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("bird feeder instead of the desk lamp", ("swap", "bird feeder", "desk lamp")),
        ("bird feeder insteaqd of thhe desk lamp", ("swap", "bird feeder", "desk lamp")),
        ("bird feeder as well", ("add", "bird feeder", "")),
        ("bird feeder as wel", ("add", "bird feeder", "")),
        ("Navy for the wool socks", ("variant", "Navy", "wool socks")),
        ("Navy", ("", "Navy", "")),
    ],
)
def test_a_change_of_mind_says_what_it_does_to_which_item(value, expected):
    assert read_change(value) == expected
