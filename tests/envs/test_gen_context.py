"""GenContext's O(log n) lookups give exactly what filtering the whole frame gives."""

from __future__ import annotations

import polars as pl
import pytest

from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.base import GenContext


@pytest.fixture(scope="module")
def ctx(catalog_dir) -> GenContext:
    return GenContext(CatalogStore(catalog_dir), seed=0)


def test_orders_and_lines_slices_equal_filters(ctx):
    users = [*ctx.user_ids[::97], "no-such-user"]
    for uid in users:
        assert ctx.orders_of(uid).equals(ctx.orders.filter(pl.col("user_id") == uid))
    for oid in [*ctx.orders["order_id"].to_list()[::131], "no-such-order"]:
        assert ctx.lines_of(oid).equals(ctx.lines.filter(pl.col("order_id") == oid))


def test_user_record_and_pools(ctx):
    uid = ctx.user_ids[5]
    row = ctx.user(uid)
    assert row["user_id"] == uid
    assert isinstance(row["preferences"], dict)
    with pytest.raises(KeyError):
        ctx.user("no-such-user")
    counts = ctx.orders.group_by("user_id").len()
    expected = sorted(counts.filter(pl.col("len") >= 3)["user_id"].to_list())
    assert ctx.customers_with_orders(3) == expected
    assert ctx.customers_with_orders(3) is ctx.customers_with_orders(3)


def test_noun_in_title_is_the_longest_noun(ctx):
    for title in ctx.products["title"].head(300).to_list():
        fits = [n.lower() for n in ctx.nouns if n.lower() in title.lower()]
        got = ctx.noun_in_title(title)
        if not fits:
            assert got is None
        else:
            assert got in fits
            assert len(got) == max(map(len, fits))
