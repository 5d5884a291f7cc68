"""The order tools' fast look-ups give exactly what the plain record scans give.

``customer_order_rows`` reads the episode's few allowed orders one by one instead of filtering
all of the customer's records; the reference here is that filter, as first written.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.tools.orders import TITLE_CHARS, customer_order_rows, listed_titles


def _customer_orders_reference(ctx: Any) -> list[dict[str, Any]]:
    """The customer's records filtered to the allowed ids, newest first."""
    orders = ctx.store.orders_of(ctx.episode["user_id"])
    allowed = ctx.episode.get("order_ids")
    if allowed is not None:
        keep = set(allowed)
        orders = [o for o in orders if o["order_id"] in keep]
    return orders[::-1]


@pytest.fixture(scope="module")
def owners(store) -> list[tuple[str, list[str]]]:
    """Customers with their order ids (oldest first), a few orders each and more."""
    users = store.order_table["user_id"].unique(maintain_order=True).to_list()
    return [
        (u, [o["order_id"] for o in store.orders_of(u)]) for u in users[:: max(1, len(users) // 40)]
    ]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_customer_order_rows_are_the_record_filter(store, owners, data):
    user_id, own = data.draw(st.sampled_from(owners))
    _, other = data.draw(st.sampled_from(owners))
    pool = [*own, *other, "no-such-order", " " + own[0], own[0][:-1], "", 7]
    allowed = data.draw(st.none() | st.lists(st.sampled_from(pool), max_size=8))
    ctx = SimpleNamespace(store=store, episode={"user_id": user_id, "order_ids": allowed})
    got = [store.order_table.row(r, named=True) for r in customer_order_rows(ctx)]
    assert got == _customer_orders_reference(ctx)
    # Same orders in the same order, not equal copies reordered by value.
    assert [o["order_id"] for o in got] == [o["order_id"] for o in _customer_orders_reference(ctx)]


def test_customer_order_rows_keep_the_table_order_of_same_day_orders(store, owners):
    """The allowed ids' own order never leaks: shuffled ids give the listing's order."""
    for user_id, own in owners:
        ctx = SimpleNamespace(store=store, episode={"user_id": user_id, "order_ids": own[::-1]})
        rows = customer_order_rows(ctx)
        assert [store.order_table.row(r, named=True) for r in rows] == store.orders_of(user_id)[
            ::-1
        ]


def test_order_and_lines_are_the_frames_rows(store, owners):
    """The store's order and line records equal Polars' named rows (types and key order too)."""
    table, lines = store.order_table, store.line_table
    for _, own in owners:
        for oid in own:
            record = store.order(oid)
            row = table.row(store.order_row(oid), named=True)
            assert list(record.items()) == list(row.items())
            assert [type(v) for v in record.values()] == [type(v) for v in row.values()]
            rows = store.line_rows(oid)
            plain = lines.slice(rows.start, len(rows)).to_dicts()
            assert [list(ln.items()) for ln in store.lines_of(oid)] == [
                list(ln.items()) for ln in plain
            ]
    assert store.order_row("no-such-order") == -1


def _listed_title_reference(store: Any, product_id: str) -> str:
    """A listing's title of a product as first written: its record's title, cut to fit."""
    record = store.product(product_id)
    title = product_id if record is None else record["title"]
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def test_listed_titles_are_each_lines_product_title_cut_to_fit(store, owners):
    titles = listed_titles(store)
    for _, own in owners:
        for oid in own:
            for r, line in zip(store.line_rows(oid), store.lines_of(oid), strict=True):
                assert titles[r] == _listed_title_reference(store, line["product_id"])
    assert listed_titles(store) is titles
