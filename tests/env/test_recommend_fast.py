"""recommend_products reads stock and facts from store columns: exactly what the records give.

The tool used to build each recommended product's whole record (a row decode of every column);
it now reads the six graded facts and the stock from the store's columns. The record-based
computation it replaced is the reference here.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import reference_facts

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.recommend import _facts
from shopgen.schemas.task import TaskRow


def _context(store, out_of_stock: list[str], overrides: dict[str, int]) -> ToolContext:
    episode = {"out_of_stock": out_of_stock, "stock_overrides": overrides}
    return ToolContext.create(store, TaskRow.model_construct(), episode, None)


def test_facts_of_every_product_equal_the_records(store):
    ids = store.products["product_id"].to_list()
    for pid in ids:
        row = store.product_row(pid)
        record = store.product(pid)
        got = _facts(store, row, 7)
        want = reference_facts(record, 7)
        # Byte-identical once encoded (types included: a float stays a float).
        assert json.dumps(got) == json.dumps(want)
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_product_stock_equals_stock_of_the_record(store, data):
    ids = store.products["product_id"].to_list()
    some = st.sampled_from(ids)
    out = data.draw(st.lists(some, max_size=4))
    overrides = data.draw(st.dictionaries(some, st.integers(0, 50), max_size=4))
    ctx = _context(store, out, overrides)
    for pid in data.draw(st.lists(some, min_size=1, max_size=6)) + out + list(overrides):
        assert ctx.product_stock(pid, store.product_row(pid)) == ctx.stock(store.product(pid))


def test_store_product_columns_are_row_aligned(store):
    products = store.products
    for column in ("price", "rating", "ship_days", "stock_qty"):
        assert store.product_array(column).tolist() == products[column].to_list()
    for column in ("category_id", "brand"):
        values = store.product_list(column)
        assert values == products[column].to_list()
        # Equal values share one object (what keeps the column at 8 bytes a product).
        assert len({id(v) for v in values}) == products[column].n_unique()
