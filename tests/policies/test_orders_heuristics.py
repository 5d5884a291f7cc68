"""The order-finding heuristic: word matching, the details it reads, and its play on status."""

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.gen.store import CatalogStore
from shopgen.policies import play
from shopgen.policies.heuristic.orders import WHICH_ORDER, by_words, find_order, narrow
from shopgen.policies.heuristic.returns import why_not
from shopgen.policies.heuristic.status import describe
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.text import carrier_stated, refusal_reasons_stated, status_stated

ORDERS = [
    {
        "order_id": "111-0000001-0000001",
        "placed_on": "2026-03-02",
        "total": 45.99,
        "items": [{"title": "Lumen Desk Lamp, LED"}, {"title": "Acme Coffee Mug"}],
    },
    {
        "order_id": "111-0000001-0000002",
        "placed_on": "2026-02-14",
        "total": 20.5,
        "items": [{"title": "Orbit Floor Lamp"}],
    },
    {
        "order_id": "111-0000001-0000003",
        "placed_on": "2026-01-09",
        "total": 12.0,
        "items": [{"title": "Northwind Yoga Mat"}],
    },
]


def _ids(orders):
    return [o["order_id"][-1] for o in orders]


def test_item_words_pick_the_orders_holding_the_item():
    assert _ids(by_words(ORDERS, "where is my order with the lamp?")) == ["1", "2"]
    assert _ids(by_words(ORDERS, "my yoga mat order, status?")) == ["3"]
    # Request words name no item; a typo'd item matches nothing: every order stays.
    assert _ids(by_words(ORDERS, "status and tracking number of my order")) == ["1", "2", "3"]
    assert _ids(by_words(ORDERS, "my order with the lmap")) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("the order I placed on February 14", ["2"]),
        ("the one I placed in March", ["1"]),
        ("the one that came to $20.50", ["2"]),
        ("the most recent one", ["1"]),
        ("the earliest one", ["2"]),
        ("the one that also had the mug", ["1", "2"]),  # words, not details: by_words does it
        ("the order from June 3", ["1", "2"]),  # fits none: ignored
    ],
)
def test_narrow_reads_days_months_amounts_and_recency(text, want):
    lamps = ORDERS[:2]
    assert _ids(narrow(lamps, text)) == want


def _drive(gen, results):
    """Play ``find_order`` against canned turn results; return (calls made, found)."""
    calls = []
    try:
        turn = next(gen)
        for result in results:
            calls.append(turn)
            turn = gen.send(result)
    except StopIteration as stop:
        return calls, stop.value
    raise AssertionError(f"find_order still wants a turn: {turn}")


def test_find_order_asks_which_one_when_the_item_is_shared():
    details = {"order_id": ORDERS[1]["order_id"], "status": "delivered"}
    calls, found = _drive(
        find_order("status of my order with the lamp?", item="status of my order with the lamp?"),
        [[{"orders": ORDERS}], [{"reply": "The order I mean is the earliest one."}], [details]],
    )
    assert calls[1] == [("ask_user", {"question": WHICH_ORDER})]
    assert calls[2] == [("order_get_details", {"order_id": ORDERS[1]["order_id"]})]
    assert found == details


def test_find_order_uses_a_given_number_at_once():
    ref = ORDERS[2]["order_id"]
    details = {"order_id": ref, "status": "cancelled"}
    calls, found = _drive(find_order(f"where is order {ref}?"), [[details]])
    assert calls == [[("order_get_details", {"order_id": ref})]]
    assert found == details


def test_describe_says_every_fact_once():
    text = describe(
        {
            "order_id": "1",
            "status": "in_transit",
            "eta": "2026-03-12",
            "tracking_number": "1Z123",
            "carrier": "UPS",
        }
    )
    assert status_stated(text, "in_transit")
    assert carrier_stated(text, "UPS")
    assert "1Z123" in text
    assert "2026-03-12" in text


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir):
    return ShopEnv(CatalogStore(indexed_catalog_dir))


@pytest.mark.parametrize("env", ["status", "returns"])
def test_heuristic_solves_easy_tasks_and_fewer_hard_ones(shop, env):
    factory = TaskFactory(shop, seed=0)

    def rate(d, n=12):
        rows = [factory.make(env, d, k).row for k in range(n)]
        return sum(play(shop, row, "heuristic").is_correct for row in rows) / n

    easy, hard = rate(0), rate(12)
    assert easy >= 0.8
    assert hard < easy


def test_why_not_names_only_the_failing_clause():
    message = (
        "return refused: Items that arrive defective, damaged or not as ordered can always be "
        "returned, even final-sale, perishable, personalised or opened hygiene items. "
        "Electronics can be returned within 15 days of delivery. It was delivered 31 days "
        "ago, outside the window."
    )
    said = why_not(message)
    assert refusal_reasons_stated(said) == {"window"}
    assert "final-sale" not in said
