"""The order and policy fast paths give exactly what the plain computations gave.

returns draws from the order book's columns instead of order and line records, the policy
engine evaluates compiled clause tests instead of interpreting clauses, and the order and
return tools read columns instead of records. Each is checked here against the plain
computation it replaced, kept in this file as the reference.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.policy import PolicyEngine
from shopgen.gen.tasks import returns
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.policy import FACT_VALUES, FACTS, Clause, Ref


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return PolicyEngine.for_store(0)


# --- the order book against the store's records ----------------------------------------------


def _visible_reference(
    orders: list[dict[str, Any]], today: date, n: int, world_day: date
) -> list[str]:
    """returns 2.0's visibility test as first written, over the customer's order records, with
    returns 2.6's rule: after the catalog's day only settled (delivered, cancelled) orders."""
    end = datetime.combine(today + timedelta(days=1), datetime.min.time())
    keys = ("placed_at", "shipped_at", "delivered_at", "cancelled_at")
    past = [o for o in orders if all(o[k] is None or o[k] < end for k in keys)]
    if today > world_day:
        past = [o for o in past if o["status"] in ("delivered", "cancelled")]
    return [o["order_id"] for o in past[-n:]]


def test_order_book_rows_are_the_store_records(ctx, store):
    book = returns._order_book(ctx)
    users = store.order_table["user_id"].unique(maintain_order=True).to_list()
    assert set(book.spans) == set(users)
    for user_id in users[:: max(1, len(users) // 60)]:
        lo, hi = book.spans[user_id]
        orders = store.orders_of(user_id)
        assert [book.order_ids[r] for r in range(lo, hi)] == [o["order_id"] for o in orders]
        assert book.tiers[user_id] == store.user(user_id)["tier"]
        for row, order in zip(range(lo, hi), orders, strict=True):
            delivered = order["status"] == "delivered" and bool(order["delivered_at"])
            assert book.returnable[row] == delivered
            assert book.delivered_at[row] == order["delivered_at"]
            first, end = book.line_spans[row]
            lines = store.lines_of(order["order_id"])
            assert end - first == len(lines)
            for at, line in zip(range(first, end), lines, strict=True):
                assert book.line_active[at] == (line["status"] == "active")
                assert book.line_prices[at] == line["unit_price"]
                assert book.line_quantities[at] == line["quantity"]


def test_order_book_categories_are_the_product_fields(ctx, store):
    book = returns._order_book(ctx)
    products = store.line_table["product_id"].to_list()
    assert len(book.line_categories) == len(products)
    assert book.line_categories == [store.product_field(p, "category_id") for p in products]


@settings(max_examples=60, deadline=None)
@given(pick=st.integers(0, 10**6), n=st.integers(1, 6), shift=st.integers(-400, 60))
def test_visible_from_columns_is_the_record_scan(ctx, store, pick, n, shift):
    users = sorted(returns._order_book(ctx).spans)
    user_id = users[pick % len(users)]
    today = ctx.today + timedelta(days=shift)  # days before the newest orders too
    book = returns._order_book(ctx)
    world_day = ctx.root.today
    got = [book.order_ids[r] for r in returns._visible(book, user_id, today, n, world_day)]
    assert got == _visible_reference(store.orders_of(user_id), today, n, world_day)


def test_order_book_titles_and_nouns_are_the_order_items(ctx, store):
    book = returns._order_book(ctx)
    order_ids = store.order_table["order_id"].to_list()
    for row in range(0, len(order_ids), max(1, len(order_ids) // 300)):
        lo, hi = book.line_spans[row]
        items = ctx.order_items(order_ids[row])
        assert book.line_titles[lo:hi] == [title.lower() for title, _ in items]
        assert book.line_nouns[lo:hi] == [noun for _, noun in items]


def _holders_reference(ctx, visible: list[str], order_id: str, noun: str) -> list[str] | None:
    """returns 2.0's holder scan over each visible order's items (None: redrawn), with 2.6's
    rules: a line of another kind ("coffee" in "… Coffee Maker …") holds no item, and a holder
    whose listed (cut) title hides the noun is redrawn."""
    holders = [order_id]
    for oid in visible:
        hits = [
            title.lower()
            for title, own in ctx.order_items(oid)
            if noun in title.lower() and (own is None or own.endswith(noun))
        ]
        if oid == order_id and len(hits) > 1:
            return None
        if any(noun not in title[: returns.LISTED_CHARS] for title in hits):
            return None
        if hits and oid != order_id:
            holders.append(oid)
    return holders


@settings(max_examples=80, deadline=None)
@given(pick=st.integers(0, 10**6), n=st.integers(1, 6), which=st.integers(0, 10**6))
def test_holders_from_columns_are_the_item_scan(ctx, pick, n, which):
    book = returns._order_book(ctx)
    users = sorted(book.spans)
    visible = returns._visible(book, users[pick % len(users)], ctx.today, n, ctx.root.today)
    if not visible:
        return
    row = visible[which % len(visible)]
    lo, hi = book.line_spans[row]
    nouns = [noun for noun in book.line_nouns[lo:hi] if noun is not None]
    if not nouns:
        return
    noun = nouns[which % len(nouns)]
    ids = [book.order_ids[r] for r in visible]
    want = _holders_reference(ctx, ids, book.order_ids[row], noun)
    try:
        got = [book.order_ids[r] for r in returns._holders(book, visible, row, noun)]
    except returns.Redraw:
        got = None
    assert got == want


# --- compiled policy evaluation against the clause interpreter --------------------------------


def _holds_reference(engine: PolicyEngine, clause: Clause, facts: dict[str, Any]) -> bool:
    """The engine's clause interpreter before compilation."""
    have = facts.get(clause.fact)
    if have is None:
        return False
    want = engine.values[clause.value.ref] if isinstance(clause.value, Ref) else clause.value
    op = clause.op
    if op in ("has", "lacks"):
        return (want in set(have)) == (op == "has")
    if op in ("in", "not_in"):
        return (have in want) == (op == "in")
    if op in ("eq", "ne") and FACTS[clause.fact] == "str":
        return (have == want) == (op == "eq")
    a, b = float(have), float(want)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def _facts_strategy(engine: PolicyEngine) -> st.SearchStrategy[dict[str, Any]]:
    leaves = [(c.id, d.id, sorted(c.tags)) for d, c in engine.taxonomy.leaves()]
    number = st.one_of(st.integers(0, 120), st.floats(0, 500, allow_nan=False))
    return st.fixed_dictionaries(
        {"leaf": st.sampled_from(leaves)},
        optional={
            "tier": st.sampled_from(FACT_VALUES["tier"]),
            "item_condition": st.sampled_from(FACT_VALUES["item_condition"]),
            "reason": st.sampled_from(FACT_VALUES["reason"]),
            "return_method": st.sampled_from(FACT_VALUES["return_method"]),
            "ship_method": st.sampled_from(FACT_VALUES["ship_method"]),
            "days_since_delivery": number,
            "order_total": number,
            "price": number,
            "quantity": st.integers(1, 6),
            "state": st.sampled_from(["CA", "NY", "TX", "AK", "HI"]),
        },
    ).map(
        lambda f: {
            **{k: v for k, v in f.items() if k != "leaf"},
            "category": f["leaf"][0],
            "department": f["leaf"][1],
            "tags": f["leaf"][2],
        }
    )


_ENGINE = PolicyEngine.for_store(0)


@settings(max_examples=150, deadline=None)
@given(facts=_facts_strategy(_ENGINE))
def test_compiled_evaluation_is_the_clause_interpreter(facts):
    for topic, rids in _ENGINE.order.items():
        want = next(
            (
                rid
                for rid in rids
                if all(_holds_reference(_ENGINE, c, facts) for c in _ENGINE.rules[rid].when)
            ),
            None,
        )
        got = _ENGINE.evaluate(topic, facts)
        if want is None:
            assert not got
        else:
            assert got.rule_ids == (want,)
            assert got.value == _ENGINE.values[want]
            assert got == _ENGINE._decision(_ENGINE.rules[want], (want,))


def test_with_values_recompiles(engine):
    rid = next(r.id for r in engine.rules_of("return_window") if not r.when)
    changed = engine.with_values({rid: 99.0})
    facts = {"category": "__none__", "department": "__none__", "tags": []}
    assert changed.evaluate("return_window", facts).value == 99.0
    assert engine.evaluate("return_window", facts).value == engine.values[rid]


def test_an_exchange_of_a_variant_the_product_lacks_is_a_dataset_error(ctx, store):
    """A line naming a variant its product lacks is a broken catalog, said in one line."""
    line = next(
        ln
        for oid in store.order_table["order_id"].to_list()
        for ln in store.lines_of(oid)
        if ln["variant_id"] is not None
    )
    rng = np.random.default_rng(0)
    returns._exchange_options(ctx, line, rng)  # the line as stored: no error
    broken = {**line, "variant_id": "V-NO-SUCH"}
    with pytest.raises(DatasetError, match=f"{line['order_id']}#{line['line_no']} names variant"):
        returns._exchange_options(ctx, broken, rng)
