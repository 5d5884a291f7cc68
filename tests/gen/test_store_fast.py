"""Fast look-ups give exactly what the plain ones give (store columns, order items, clash draws).

The generators' speed work replaced record look-ups and per-title noun scans with column
slices, line-aligned arrays and a vectorised noun search; each fast path is checked here
against the plain computation it replaced, which stays as the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.store import CatalogStore, IdIndex
from shopgen.gen.tasks import returns, status
from shopgen.gen.tasks.base import GenContext, Redraw, nouns_in_titles, pick
from shopgen.gen.tasks.order_hints import listed_nouns


def test_id_index_finds_every_id_and_nothing_else(store):
    ids = store.products["product_id"]
    index = IdIndex(ids)
    assert [index.row(k) for k in ids.to_list()] == list(range(ids.len()))
    too_long = ids[0] + "x" * 20
    assert [index.row(k) for k in ("", "nope", too_long, ids[0][:-1])] == [-1] * 4
    assert index.rows([ids[3], "nope"]).tolist() == [3, -1]


@settings(max_examples=50, deadline=None)
@given(picks=st.lists(st.one_of(st.integers(0, 10**6), st.text(max_size=18)), max_size=40))
def test_remembered_product_rows_are_the_index_rows(catalog_dir, picks):
    # Ids picked by position (again and again: the memo's hits) or made up (its misses), on a
    # store small enough to evict: every answer is the index's own.
    store = CatalogStore(catalog_dir)
    store._product_rows.limit = 8
    ids = store.products["product_id"].to_list()
    keys = [ids[k % len(ids)] if isinstance(k, int) else k for k in picks]
    assert [store.product_row(k) for k in keys] == [store._product_index.row(k) for k in keys]


def test_line_columns_and_rows_equal_the_records(store):
    users = [*store.read("users")["user_id"].to_list()[::7], "no-such-user", "x" * 40]
    for uid in users:
        orders = store.orders_of(uid)
        rows = store.order_table.filter(pl.col("user_id") == uid)
        assert rows.to_dicts() == orders
        for oid in [*rows["order_id"].to_list(), "no-such-order", "y" * 40]:
            lines = store.lines_of(oid)
            pids, line_status = store.lines_columns(oid, "product_id", "status")
            assert pids == [ln["product_id"] for ln in lines]
            assert line_status == [ln["status"] for ln in lines]
            rows = store.line_rows(oid)
            assert store.line_table.slice(rows.start, len(rows)).to_dicts() == lines


def test_derived_is_made_once_per_maker_and_arguments(store):
    made = []

    def listed(s, n):
        made.append(("listed", n))
        return [s.catalog_id] * n

    def other(s, n):
        made.append(("other", n))
        return [n]

    first = store.derived(listed, 2)
    assert store.derived(listed, 2) is first
    assert first == [store.catalog_id] * 2
    assert store.derived(listed, 3) == [store.catalog_id] * 3
    assert store.derived(other, 2) == [2]  # another maker never reads listed's value
    assert made == [("listed", 2), ("listed", 3), ("other", 2)]


def test_line_lists_are_the_line_records(store):
    """line_list and line_product_list read what lines_of and product_field give, per line."""
    columns = ("product_id", "quantity", "unit_price", "status", "variant_id")
    lists = {c: store.line_list(c) for c in columns}
    categories, titles = store.line_product_list("category_id"), store.line_product_list("title")
    assert all(len(v) == store.line_table.height for v in (*lists.values(), categories, titles))
    for oid in store.order_table["order_id"].to_list()[::11]:
        rows = store.line_rows(oid)
        for r, line in zip(rows, store.lines_of(oid), strict=True):
            assert {c: lists[c][r] for c in columns} == {c: line[c] for c in columns}
            assert categories[r] == store.product_field(line["product_id"], "category_id")
            assert titles[r] == store.product_field(line["product_id"], "title")
    assert store.line_list("product_id") is lists["product_id"]  # made once
    names = store.order_table.columns
    orders = {c: store.order_list(c) for c in names}
    users = [*store.read("users")["user_id"].to_list()[::7], "no-such-user", "x" * 40]
    for uid in users:
        rows = store.order_rows_of(uid)
        assert [store.order_list("order_id")[r] for r in rows] == [
            o["order_id"] for o in store.orders_of(uid)
        ]
        for r in rows:
            record = store.order(orders["order_id"][r])
            assert {c: orders[c][r] for c in names} == record


def test_product_field_equals_the_record(store):
    for pid in [*store.products["product_id"].to_list()[::37]]:
        record = store.product(pid)
        for column in ("title", "category_id", "price", "key_attrs"):
            assert store.product_field(pid, column) == record[column]
    assert store.product_field("no-such-product", "title") is None


def test_variant_field_equals_the_record(store):
    for vid in store.variants["variant_id"].to_list()[::53]:
        record = store.variant(vid)
        for column in ("label", "product_id", "stock_qty", "price_delta"):
            assert store.variant_field(vid, column) == record[column]
    for unknown in ("no-such-variant", "", "v" * 40):
        assert store.variant_field(unknown, "label") is None


def test_order_items_equal_records_and_the_noun_scan(ctx, store):
    for oid in [*ctx.orders["order_id"].to_list()[::5], "no-such-order"]:
        titles = [store.product(ln["product_id"])["title"] for ln in store.lines_of(oid)]
        assert ctx.order_items(oid) == tuple((t, ctx.noun_in_title(t)) for t in titles)


def test_line_titles_and_nouns_are_the_store_titles_and_the_noun_scan(ctx, store):
    """The generators read the store's own title list (one copy) and its per-title nouns."""
    assert ctx.line_titles is store.line_product_list("title")
    assert len(ctx.line_nouns) == store.line_table.height
    for title, noun in zip(ctx.line_titles[::7], ctx.line_nouns[::7], strict=True):
        assert noun == (None if title is None else ctx.noun_in_title(title))


def test_nouns_in_titles_equals_noun_in_title_on_catalog_titles(ctx, store):
    titles = store.products["title"]
    assert nouns_in_titles(titles, ctx._nouns_longest_first).to_list() == [
        ctx.noun_in_title(t) for t in titles.to_list()
    ]


def _first_noun(nouns: list[str], title: str) -> str | None:
    low = title.lower()
    return next((n for n in nouns if n in low), None)


@given(
    nouns=st.lists(st.text("abc -&", min_size=1, max_size=5), min_size=1, max_size=12),
    titles=st.lists(st.text("aAbBcC -&É", max_size=24) | st.none(), max_size=12),
)
def test_nouns_in_titles_is_the_ordered_scan(nouns, titles):
    """Overlapping and nested nouns, duplicates, any order, nulls: the first in order wins."""
    got = nouns_in_titles(pl.Series(titles, dtype=pl.String), tuple(nouns)).to_list()
    assert got == [None if t is None else _first_noun(nouns, t) for t in titles]


# --- the clash draws against the record-based search they replaced --------------------------


def _returns_clash_reference(ctx: GenContext, n_orders: int, rng: np.random.Generator) -> Any:
    """returns 2.0's search as first written: records of every tried customer's orders, with
    2.6's rule that a noun some holder's listed (cut) title hides is no clash, and 2.6's draw
    of the line among the kept customer's delivered lines of the kept noun (not the first)."""
    best = None
    lines: dict[str, dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]] = {}
    pool = ctx.customers_with_orders(n_orders)
    for _ in range(returns.CLASH_TRIES):
        user_id = pick(rng, pool)
        orders = ctx.store.orders_of(user_id)
        recent = orders[-n_orders:]
        nouns = {
            o["order_id"]: {n for _, n in ctx.order_items(o["order_id"]) if n is not None}
            for o in recent
        }
        hidden = {
            n
            for o in recent
            for title, n in ctx.order_items(o["order_id"])
            if n is not None and n not in title.lower()[: returns.LISTED_CHARS]
        }
        mine = lines[user_id] = {}  # a customer tried again finds the same lines
        for order in recent:
            if order["status"] != "delivered" or not order["delivered_at"]:
                continue
            items = ctx.order_items(order["order_id"])
            for ln, (_, noun) in zip(ctx.store.lines_of(order["order_id"]), items, strict=True):
                if ln["status"] != "active" or noun is None or noun in hidden:
                    continue
                held = sum(noun in ns for ns in nouns.values())
                if held > 1:
                    mine.setdefault(noun, []).append((order, ln))
                if held > 1 and (best is None or held > best[0]):
                    best = (held, user_id, orders, noun)
        if best is not None and best[0] >= 3:
            break
    if best is None:
        return None
    _, user_id, orders, noun = best
    order, ln = pick(rng, lines[user_id][noun])
    return user_id, orders, order, ln


def _status_clash_reference(
    ctx: GenContext, pool: list[str], visible_n: int, want: int, rng: np.random.Generator
) -> Any:
    """status 2.1's search as first written: a frame slice per tried customer."""
    best = None
    for _ in range(status.CLASH_TRIES):
        user_id = pick(rng, pool)
        visible = ctx.orders_of(user_id).tail(visible_n)
        shared: dict[str, list[dict[str, Any]]] = {}
        for order in visible.iter_rows(named=True):
            for noun in listed_nouns(ctx, order["order_id"]):
                shared.setdefault(noun, []).append(order)
        shared = {n: os for n, os in shared.items() if len(os) > 1}
        if not shared:
            continue
        top = max(len(os) for os in shared.values())
        noun = pick(rng, sorted(n for n, os in shared.items() if len(os) == top))
        if best is None or top > best[0]:
            best = (top, user_id, visible, shared[noun], noun)
        if top >= want:
            break
    if best is None:
        return None
    _, user_id, visible, holders, noun = best
    return user_id, visible, pick(rng, holders), noun


def _outcome(fn, *args, seed: int) -> tuple[Any, Any]:
    """What a draw returns (or that it redraws) and where it leaves the stream."""
    rng = np.random.default_rng(seed)
    try:
        out = fn(*args, rng)
    except Redraw:
        out = "redraw"
    return out, rng.bit_generator.state


def _returns_clash_records(ctx: GenContext, n_orders: int, rng: np.random.Generator) -> Any:
    """returns' clash search, its (customer, order row, line index) read back as records."""
    found = returns._clashing_line(ctx, n_orders, rng)
    if found is None:
        return None
    user_id, row, j = found
    orders = ctx.store.orders_of(user_id)
    order = orders[row - returns._order_book(ctx).spans[user_id][0]]
    return user_id, orders, order, ctx.store.lines_of(order["order_id"])[j]


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.one_of(st.integers(1, 50), st.integers(1, 2**40)),
    most=st.integers(1, 30),
    taken=st.integers(0, 30),
)
def test_batched_picks_are_single_picks(seed, n, most, taken):
    """returns._Picks draws what ``pick`` calls draw and leaves the stream where they do."""
    taken = min(taken, most)
    options = list(range(n)) if n <= 50 else range(n)
    batched, single = np.random.default_rng(seed), np.random.default_rng(seed)
    picks = returns._Picks(batched, options, most)
    assert picks.drawn == [pick(single, options) for _ in range(most)]
    picks.keep(taken)
    single = np.random.default_rng(seed)
    for _ in range(taken):
        pick(single, options)
    assert batched.bit_generator.state == single.bit_generator.state
    assert batched.random() == single.random()


@pytest.mark.parametrize("n_orders", [2, 3, 4])
def test_returns_clash_search_equals_the_record_search(ctx, n_orders):
    found = 0
    for seed in range(12):
        fast = _outcome(_returns_clash_records, ctx, n_orders, seed=seed)
        assert fast == _outcome(_returns_clash_reference, ctx, n_orders, seed=seed)
        found += fast[0] not in (None, "redraw")
    assert found  # the comparison covered kept lines, not only empty searches


@pytest.mark.parametrize(("visible_n", "want"), [(2, 2), (3, 3), (4, 4), (3, 5)])
def test_status_clash_search_equals_the_frame_search(ctx, visible_n, want):
    pool = ctx.customers_with_orders(visible_n)
    found = 0
    for seed in range(8):
        fast = _outcome(status._clashing_draw, ctx, pool, visible_n, want, seed=seed)
        ref = _outcome(_status_clash_reference, ctx, pool, visible_n, want, seed=seed)
        assert fast[1] == ref[1]
        if ref[0] is None or fast[0] is None:
            assert fast[0] is ref[0]
            continue
        found += 1
        (uid, visible, target, noun), (r_uid, r_visible, r_target, r_noun) = fast[0], ref[0]
        assert (uid, target, noun) == (r_uid, r_target, r_noun)
        assert visible == r_visible.to_dicts()  # the store's records: the frame's rows
    assert found


@given(
    ids=st.lists(st.text("abé", min_size=1, max_size=4), min_size=1, max_size=12, unique=True),
    keys=st.lists(st.text("ab\0é", max_size=7), max_size=12),
)
def test_id_index_finds_exactly_the_stored_ids(ids, keys):
    # A fixed-width array compares "ab" and "ab\0" equal: a padded id must still be unknown,
    # or an agent could pass one product off as several (or dodge its stock) by padding.
    index = IdIndex(pl.Series(ids, dtype=pl.String), width=8)
    for key in [*ids, *keys, *(k + "\0" for k in ids), *("\0" + k for k in ids)]:
        assert index.row(key) == (ids.index(key) if key in ids else -1)


def test_a_nul_padded_id_names_no_product_variant_or_order(store):
    variant_id, product_id = store.variants.row(0)[:2]
    order_id = store.order_table["order_id"][0]
    assert store.variant(variant_id)["product_id"] == product_id
    for pad in ("\0", "\0\0\0"):
        assert store.product(product_id + pad) is None
        assert store.variants_of(product_id + pad) == []
        assert store.variant(variant_id + pad) is None
        assert store.order(order_id + pad) is None
        assert store.lines_of(order_id + pad) == []
