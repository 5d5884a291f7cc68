"""Orders, order lines and visit events of a range of users, column at a time.

Everything of user *i* (its orders, their lines, its browsing sessions) comes from the block
streams of the user's block (``("orders", block)``), so a user's history is identical whatever
the shard layout or worker count. Shipping methods, costs, delivery times, discounts and return
eligibility come from the policy engine's vectorised :meth:`PolicyEngine.evaluate_frame`: the
world never holds a policy number of its own (issue #3).

Lifecycle, relative to the simulated clock (the end of ``today``): placed → processing (after
a handling delay) → shipped → in_transit (12 h after shipping) → delivered; or cancelled before
shipping. Lines of delivered orders may be returned inside their return window.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import polars as pl
import pyarrow as pa

from shopgen.gen.policy import PolicyEngine
from shopgen.gen.seeding import FeistelIds, stream
from shopgen.gen.users import TIERS, USER_BLOCK, UserDraws, clock_of
from shopgen.gen.world_products import ProductContext, pick_products
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.tables import ORDER_LINES, ORDERS, VISITS

#: Average orders per user (a 1M-product catalog has 100k users and ~1M orders).
ORDERS_PER_USER = 10
#: The visit window and the order window: every order is inside it, so purchases match orders.
WINDOW_DAYS = 90
MAX_ORDERS = 60  # per user; order ids reserve 64 slots per user
METHODS = ("standard", "expedited", "two_day", "next_day")
CARRIERS = ("UPS", "USPS", "FedEx", "OnTrac")
_TRACKING_PREFIX = ("1Z", "94", "7", "C")
_DAY = 86400
#: Order statuses in lifecycle order (their codes in :func:`_fulfil`).
ORDER_STATUSES = ("cancelled", "placed", "processing", "shipped", "in_transit", "delivered")


def _format_order_ids(seed: int, index: np.ndarray) -> pl.Series:
    """Order ids like ``112-0048392-0177450``: a keyed permutation, readable aloud."""
    v = FeistelIds(seed, "order", prefix="O", width=8).permute(index).astype(np.uint64)
    head = 100 + ((v * np.uint64(2654435761)) >> np.uint64(20)) % np.uint64(900)
    mid, tail = v // np.uint64(10**7), v % np.uint64(10**7)
    frame = pl.DataFrame(
        {"h": head.astype(np.int64), "m": mid.astype(np.int64), "t": tail.astype(np.int64)}
    )
    return frame.select(
        pl.format(
            "{}-{}-{}",
            "h",
            pl.col("m").cast(pl.String).str.zfill(7),
            pl.col("t").cast(pl.String).str.zfill(7),
        ).alias("order_id")
    )["order_id"]


def _names(names: tuple[str, ...], codes: np.ndarray) -> pl.Series:
    """Strings by code from a small vocabulary (NumPy string arrays convert to Polars slowly)."""
    return pl.Series(list(names), dtype=pl.String).gather(np.asarray(codes, dtype=np.int64))


def _ts(values: np.ndarray) -> pl.Series:
    return pl.Series(values.astype("datetime64[us]"))


def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For repeated rows: the owner of each child and its rank inside its owner."""
    owner = np.repeat(np.arange(counts.size), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return owner, np.arange(owner.size) - starts[owner]


def generate_history(
    seed: int,
    users: UserDraws,
    user_ids: pl.Series,
    ctx: ProductContext,
    engine: PolicyEngine,
    *,
    today: date,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Orders, order lines and visit events of ``users`` (whole user blocks or a prefix)."""
    parts = []
    for block in np.unique(users.rows // USER_BLOCK):
        sel = np.flatnonzero(users.rows // USER_BLOCK == block)
        parts.append(_block_history(seed, int(block), users, sel, user_ids, ctx, engine, today))
    return tuple(pl.concat([p[i] for p in parts]) for i in range(3))


def _block_history(
    seed: int,
    block: int,
    users: UserDraws,
    sel: np.ndarray,
    user_ids: pl.Series,
    ctx: ProductContext,
    engine: PolicyEngine,
    today: date,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One user block's orders, order lines and visits.

    The steps share the block's one stream, and the sequence of their draws is part of the
    data format: a step may not move, nor draw more or fewer values, without changing every
    catalog's history.
    """
    rng = stream(seed, "orders", block)
    bought = _draw_purchases(seed, rng, users, sel, ctx, today)
    prices = _price(bought, ctx, engine)
    ship = _fulfil(rng, bought, prices.subtotal, users, ctx, engine)
    orders = _order_frame(rng, bought, prices, ship, user_ids)
    lines = _line_frame(rng, bought, prices, ship, ctx, engine)
    visits = _visits(rng, bought, users, ctx, user_ids)
    return (
        orders.select(ORDERS.names),
        lines.select(ORDER_LINES.names),
        visits.select(VISITS.names),
    )


@dataclass(frozen=True)
class _Purchases:
    """What a block's customers bought and when: the hand-off from the draw to every table.

    Orders run in (user, rank) order and lines are grouped by order, so ``line_order`` is
    ascending and an order's value reaches its lines as ``value[line_order]``. A user is an
    index into the :class:`UserDraws` arrays, a product or variant a row of the
    :class:`ProductContext`, a time epoch seconds.
    """

    start: np.int64  # the window's start: no order or browsing before it
    clock: np.int64  # the simulated now: everything happens before it
    slot: np.ndarray  # per block row: its user index, -1 where the user is not generated
    n_orders: np.ndarray  # per block row
    order_user: np.ndarray  # per order
    order_rank: np.ndarray  # per order: its place among its user's orders
    order_id: pl.Series  # per order
    placed: np.ndarray  # per order
    tier: pl.Series  # per order: the customer's tier name
    state: pl.Series  # per order: the ship-to state
    line_order: np.ndarray  # per line
    line_rank: np.ndarray  # per line: its place in its order
    prow: np.ndarray  # per line: product row
    vrow: np.ndarray  # per line: variant row, -1 where the product has no variants
    qty: np.ndarray  # per line
    tags: pl.Series  # per line: its category's tags

    @property
    def has_var(self) -> np.ndarray:
        return self.vrow >= 0


def _draw_purchases(
    seed: int,
    rng: np.random.Generator,
    users: UserDraws,
    sel: np.ndarray,
    ctx: ProductContext,
    today: date,
) -> _Purchases:
    """Who orders how often and when, and what each order's lines hold.

    Order counts are drawn for the full block, generated or not, so a prefix of a block's
    users sees the same numbers as the whole block.
    """
    clock = clock_of(today).astype(np.int64)
    start = clock - WINDOW_DAYS * _DAY
    rows = users.rows[sel] % USER_BLOCK
    slot = np.full(USER_BLOCK, -1)
    slot[rows] = sel
    activity = np.ones(USER_BLOCK)
    activity[rows] = users.activity[sel]
    n_orders = np.minimum(rng.poisson(ORDERS_PER_USER * activity), MAX_ORDERS) * (slot >= 0)
    o_user, o_rank = _segments(n_orders)
    o_sel = slot[o_user]
    m = o_user.size
    begin = np.maximum(users.signup.astype(np.int64)[o_sel], start)
    placed = begin + (rng.random(m) * (clock - begin)).astype(np.int64)
    l_order, l_rank = _segments(np.minimum(1 + rng.poisson(0.6, m), 5))
    prow, vrow = _draw_products(rng, users, ctx, o_sel[l_order])
    k = l_order.size
    qty = np.minimum(rng.geometric(0.65, k), 12) + np.where(rng.random(k) < 0.02, 9, 0)
    return _Purchases(
        start=start,
        clock=clock,
        slot=slot,
        n_orders=n_orders,
        order_user=o_sel,
        order_rank=o_rank,
        order_id=_format_order_ids(seed, users.rows[o_sel] * 64 + o_rank),
        placed=placed,
        tier=_names(TIERS, users.tier[o_sel]),
        state=pl.Series(users.state).gather(o_sel),
        line_order=l_order,
        line_rank=l_rank,
        prow=prow,
        vrow=vrow,
        qty=qty,
        tags=pl.Series(ctx.cat_tags, dtype=pl.List(pl.String)).gather(ctx.cat_code[prow]),
    )


def _draw_products(
    rng: np.random.Generator, users: UserDraws, ctx: ProductContext, line_user: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each line's product row and variant row (-1 where it has none).

    Most lines come from one of the customer's two favourite departments and the rest from
    the whole catalog, popularity-weighted either way, so customers look consistent.
    """
    k = line_user.size
    fav = rng.random(k) < 0.7
    dept = _fav_dept(rng, users, line_user)
    bounds = np.where(fav[:, None], ctx.dept_bounds[dept], -1)
    prow = np.where(
        fav,
        pick_products(ctx, rng.random(k), bounds.clip(min=0)),
        pick_products(ctx, rng.random(k), None),
    )
    nv = ctx.n_variants[prow]
    vrow = ctx.var_start[prow] + (rng.random(k) * np.maximum(nv, 1)).astype(np.int64)
    return prow, np.where(nv > 0, vrow, -1)


def _fav_dept(rng: np.random.Generator, users: UserDraws, user: np.ndarray) -> np.ndarray:
    """One of the two favourite departments of each of ``user``, by a fair coin."""
    which = (rng.random(user.size) < 0.5).astype(np.intp)
    return users.fav_dept[user, which]


@dataclass(frozen=True)
class _Prices:
    """What each line costs and each order's subtotal, before shipping."""

    unit: np.ndarray  # per line
    discount: np.ndarray  # per line, percent
    line_total: np.ndarray  # per line
    subtotal: np.ndarray  # per order


def _price(bought: _Purchases, ctx: ProductContext, engine: PolicyEngine) -> _Prices:
    """Line prices after the store's bulk discount, so totals agree with the policy rules."""
    has_var = bought.has_var
    delta = np.where(has_var, ctx.price_delta[np.where(has_var, bought.vrow, 0)], 0.0)
    unit = np.round(ctx.price[bought.prow] + delta, 2)
    facts = pl.DataFrame(
        {
            "quantity": bought.qty,
            "tier": bought.tier.gather(bought.line_order),
            "tags": bought.tags,
            "price": unit,
            "category": ctx.category.gather(bought.prow),
            "department": _line_departments(ctx, bought.prow),
            "state": bought.state.gather(bought.line_order),
        }
    )
    discount = _rule(engine, "bulk_discount", facts).to_numpy()
    line_total = np.round(unit * bought.qty * (1 - discount / 100), 2)
    m = bought.placed.size
    subtotal = np.round(np.bincount(bought.line_order, weights=line_total, minlength=m), 2)
    return _Prices(unit=unit, discount=discount, line_total=line_total, subtotal=subtotal)


@dataclass(frozen=True)
class _Fulfilment:
    """How each order ships and how far it has got by the clock (epoch seconds, per order).

    The times are drawn for every order; the status says which of them have happened.
    """

    method: pl.Series  # ship method names
    cost: np.ndarray
    status: np.ndarray  # codes into ORDER_STATUSES
    shipped: np.ndarray
    delivered: np.ndarray
    expected: np.ndarray  # the delivery promised at checkout
    cancelled_at: np.ndarray

    @property
    def cancelled(self) -> np.ndarray:
        return self.status == 0

    @property
    def is_shipped(self) -> np.ndarray:
        return self.status >= 3

    @property
    def is_delivered(self) -> np.ndarray:
        return self.status == 5


def _fulfil(
    rng: np.random.Generator,
    bought: _Purchases,
    subtotal: np.ndarray,
    users: UserDraws,
    ctx: ProductContext,
    engine: PolicyEngine,
) -> _Fulfilment:
    """Ship each order by a method the store offers, then run its lifecycle up to the clock."""
    method, cost, days = _shipping(rng, bought, subtotal, users, ctx, engine)
    placed, clock = bought.placed, bought.clock
    m = placed.size
    handling = (3600 * (2 + rng.random(m) * 34)).astype(np.int64)
    processing = placed + (1800 + rng.random(m) * 7200).astype(np.int64)
    shipped = placed + handling
    transit = (days * 7 / 5 * (0.75 + 0.5 * rng.random(m)) * _DAY).astype(np.int64)
    delivered = shipped + np.maximum(transit, 6 * 3600)
    expected = placed + 36 * 3600 + (days * 7 / 5 * _DAY).astype(np.int64)
    # The first cancellation time only gates the cancel; its draw stays because the sequence
    # of draws is the data format.
    cancel = (rng.random(m) < 0.04) & (placed + (rng.random(m) * handling).astype(np.int64) < clock)
    cancelled_at = placed + (rng.random(m) * handling).astype(np.int64)
    cancel &= cancelled_at < clock
    status = np.select(
        [
            cancel,
            clock < processing,
            clock < shipped,
            clock < shipped + 12 * 3600,
            clock < delivered,
        ],
        [0, 1, 2, 3, 4],
        5,
    )
    return _Fulfilment(
        method=method,
        cost=cost,
        status=status,
        shipped=shipped,
        delivered=delivered,
        expected=expected,
        cancelled_at=cancelled_at,
    )


def _shipping(
    rng: np.random.Generator,
    bought: _Purchases,
    subtotal: np.ndarray,
    users: UserDraws,
    ctx: ProductContext,
    engine: PolicyEngine,
) -> tuple[pl.Series, np.ndarray, np.ndarray]:
    """Each order's ship method, cost and business days in transit.

    Premium members lean to two-day and speed-minded customers to expedited; where the store
    does not offer the chosen method for the parcel, it ships standard.
    """
    m = bought.placed.size
    speed = users.speed[bought.order_user]
    premium = users.tier[bought.order_user] == 2
    probs = np.where(premium[:, None], [0.3, 0.1, 0.55, 0.05], [0.72, 0.14, 0.09, 0.05])
    probs = probs * np.array([1.0, 1.0 + speed.mean(), 1.0, 1.0])
    u = rng.random(m) * probs.sum(axis=1)
    chosen = (u[:, None] > np.cumsum(probs, axis=1)).sum(axis=1).clip(max=3)
    facts = pl.DataFrame(
        {
            "ship_method": _names(METHODS, chosen),
            "tier": bought.tier,
            "state": bought.state,
            "order_total": subtotal,
            "tags": _order_tags(ctx, ctx.cat_code[bought.prow], bought.line_order, m),
        }
    )
    ok = _rule(engine, "ship_method_available", facts).to_numpy().astype(bool)
    method = _names(METHODS, np.where(ok, chosen, 0))  # 0: standard
    facts = facts.with_columns(method.alias("ship_method"))
    cost = _rule(engine, "shipping_cost", facts).to_numpy()
    days = _rule(engine, "shipping_days", facts).to_numpy()
    return method, cost, days


def _order_frame(
    rng: np.random.Generator,
    bought: _Purchases,
    prices: _Prices,
    ship: _Fulfilment,
    user_ids: pl.Series,
) -> pl.DataFrame:
    """The orders table; a time that has not happened by the clock is null."""
    m = bought.placed.size
    carrier = (rng.random(m) * len(CARRIERS)).astype(np.intp)
    track = rng.integers(10**11, 10**12, m)
    pending = ~ship.is_delivered & ~ship.cancelled
    return pl.DataFrame(
        {
            "order_id": bought.order_id,
            "user_id": user_ids.gather(bought.order_user),
            "placed_at": _ts(bought.placed.astype("datetime64[s]")),
            "status": _names(ORDER_STATUSES, ship.status),
            "ship_method": ship.method,
            "ship_state": bought.state,
            "subtotal": prices.subtotal,
            "shipping_cost": ship.cost.astype(np.float64),
            "total": np.round(prices.subtotal + ship.cost, 2),
            "shipped_at": _ts(ship.shipped.astype("datetime64[s]")),
            "delivered_at": _ts(ship.delivered.astype("datetime64[s]")),
            "eta": ship.expected.astype("datetime64[s]").astype("datetime64[D]"),
            "carrier": _names(CARRIERS, carrier),
            "tracking_number": _names(_TRACKING_PREFIX, carrier) + pl.Series(track).cast(pl.String),
            "cancelled_at": _ts(ship.cancelled_at.astype("datetime64[s]")),
        }
    ).with_columns(
        *_null_unless(ship.is_shipped, "shipped_at", "carrier", "tracking_number"),
        *_null_unless(ship.is_delivered, "delivered_at"),
        *_null_unless(pending, "eta"),
        *_null_unless(ship.cancelled, "cancelled_at"),
    )


def _line_frame(
    rng: np.random.Generator,
    bought: _Purchases,
    prices: _Prices,
    ship: _Fulfilment,
    ctx: ProductContext,
    engine: PolicyEngine,
) -> pl.DataFrame:
    """The order lines, each active, returned or cancelled with its order."""
    returned, returned_at = _returns(rng, bought, prices, ship, ctx, engine)
    status = np.where(ship.cancelled[bought.line_order], 2, returned.astype(np.intp))
    return pl.DataFrame(
        {
            "order_id": bought.order_id.gather(bought.line_order),
            "line_no": (bought.line_rank + 1).astype(np.int8),
            "product_id": ctx.product_id.gather(bought.prow),
            "variant_id": _gather_or_null(ctx.variant_id, bought.vrow),
            "quantity": bought.qty.astype(np.int16),
            "unit_price": prices.unit,
            "discount_pct": prices.discount.astype(np.float64),
            "line_total": prices.line_total,
            "status": _names(("active", "returned", "cancelled"), status),
            "returned_at": _ts(returned_at.astype("datetime64[s]")),
        }
    ).with_columns(*_null_unless(returned, "returned_at"))


def _returns(
    rng: np.random.Generator,
    bought: _Purchases,
    prices: _Prices,
    ship: _Fulfilment,
    ctx: ProductContext,
    engine: PolicyEngine,
) -> tuple[np.ndarray, np.ndarray]:
    """Which lines came back, and when (meaningful where returned).

    A few delivered lines come back, only where the store's rules take them back and inside
    their return window, so every returned line is one the policy allows.
    """
    k = bought.line_order.size
    delivered = ship.delivered[bought.line_order]
    facts = pl.DataFrame(
        {
            "category": ctx.category.gather(bought.prow),
            "department": _line_departments(ctx, bought.prow),
            "tags": bought.tags,
            "tier": bought.tier.gather(bought.line_order),
            "price": prices.unit,
            "item_condition": _names(("unopened",), np.zeros(k, dtype=np.intp)),
            "reason": _names(("changed_mind",), np.zeros(k, dtype=np.intp)),
        }
    )
    returnable = engine.evaluate_frame("returnable", facts)["value"].fill_null(False)
    window = engine.evaluate_frame("return_window", facts)["value"].fill_null(0.0).to_numpy()
    want = rng.random(k) < 0.08
    ret_days = rng.random(k) * np.minimum(window, (bought.clock - delivered) / _DAY)
    returned_at = delivered + (ret_days * _DAY).astype(np.int64) + 3600
    returned = (
        want
        & ship.is_delivered[bought.line_order]
        & returnable.to_numpy().astype(bool)
        & (window > 0)
        & (returned_at < bought.clock)
    )
    return returned, returned_at


def _line_departments(ctx: ProductContext, prow: np.ndarray) -> pl.Series:
    """Each line's department id: rules may test it (a line's facts are all a rule can see)."""
    # Products are sorted by department: a row's department is the first whose range ends past it.
    codes = np.searchsorted(ctx.dept_bounds[:, 1], prow, side="right")
    return pl.Series(ctx.departments, dtype=pl.String).gather(codes)


def _null_unless(mask: np.ndarray, *columns: str) -> list[pl.Expr]:
    """``columns`` kept where ``mask`` holds and null elsewhere (a time that has not come)."""
    return [pl.when(pl.Series(mask)).then(pl.col(c)).otherwise(None).alias(c) for c in columns]


#: One visit event stream: (user, session, ts, kind, product row, variant row, line index);
#: a scalar stands for the whole column.
_Events = tuple[np.ndarray | int, ...]


def _visits(
    rng: np.random.Generator,
    bought: _Purchases,
    users: UserDraws,
    ctx: ProductContext,
    user_ids: pl.Series,
) -> pl.DataFrame:
    """The visit events of the purchase sessions and the browse-only sessions, sorted once."""
    parts = _purchase_sessions(rng, bought, users, ctx)
    parts += _browse_sessions(rng, bought, users, ctx)
    user, session, ts, kind, product, variant, line = (
        np.concatenate([np.broadcast_to(np.asarray(p[c]), p[0].shape) for p in parts])
        for c in range(7)
    )
    order = _event_order(session, ts, kind)
    return pl.DataFrame(
        {
            "user_id": user_ids.gather(user[order]),
            "session_id": session[order].astype(np.int64),
            "ts": _ts(ts[order].astype("datetime64[s]")),
            "event": _EVENT_NAMES.gather(kind[order]),
            "product_id": ctx.product_id.gather(product[order]),
            "variant_id": _gather_or_null(ctx.variant_id, variant[order]),
            "order_id": _gather_or_null(bought.order_id.gather(bought.line_order), line[order]),
        }
    )


def _purchase_sessions(
    rng: np.random.Generator, bought: _Purchases, users: UserDraws, ctx: ProductContext
) -> list[_Events]:
    """One session per order: views, add-to-carts, then the purchase.

    Each line is preceded by views in its category with the bought product looked at last, and
    every purchase event names its order line, so visits and orders agree exactly.
    """
    k = bought.line_order.size
    n_views = 1 + rng.poisson(1.8, k)
    v_line, v_rank = _segments(n_views)
    prow = bought.prow[v_line]
    viewed = pick_products(ctx, rng.random(v_line.size), ctx.cat_bounds[ctx.cat_code[prow]])
    viewed = np.where(v_rank == n_views[v_line] - 1, prow, viewed)
    lead = (60 + rng.random(v_line.size) * 1500).astype(np.int64) * (n_views[v_line] - v_rank + 1)
    lo = bought.line_order
    v_order = lo[v_line]
    user, placed = bought.order_user, bought.placed
    session = users.rows[user] * 4096 + bought.order_rank
    none = np.full(v_line.size, -1)
    return [
        (user[v_order], session[v_order], placed[v_order] - lead - 120, _VIEW, viewed, none, none),
        (user[lo], session[lo], placed[lo] - 60, _CART, bought.prow, bought.vrow, np.full(k, -1)),
        (user[lo], session[lo], placed[lo], _PURCHASE, bought.prow, bought.vrow, np.arange(k)),
    ]


def _browse_sessions(
    rng: np.random.Generator, bought: _Purchases, users: UserDraws, ctx: ProductContext
) -> list[_Events]:
    """Browse-only sessions in the favourite departments: views and a few add-to-carts."""
    n_browse = rng.poisson(0.5 * bought.n_orders + 1) * (bought.slot >= 0)
    b_user, b_rank = _segments(n_browse)
    b_sel = bought.slot[b_user]
    e_sess, e_rank = _segments(1 + rng.poisson(2.5, b_user.size))
    e_sel = b_sel[e_sess]
    clock = bought.clock
    b_begin = np.maximum(users.signup.astype(np.int64)[b_sel], bought.start)
    b_start = b_begin + (rng.random(b_user.size) * (clock - 3600 - b_begin)).astype(np.int64)
    gap = 30 + (rng.random(e_sess.size) * 240).astype(np.int64)
    e_ts = np.minimum(b_start[e_sess] + e_rank * gap, clock - 1)
    dept = _fav_dept(rng, users, e_sel)
    e_prow = pick_products(ctx, rng.random(e_sess.size), ctx.dept_bounds[dept])
    cart = rng.random(e_sess.size) < 0.05
    session = (users.rows[b_sel] * 4096 + 64 + b_rank)[e_sess]
    none = np.full(e_sess.size, -1)
    return [
        (e_sel, session, e_ts, _VIEW, e_prow, none, none),
        (e_sel[cart], session[cart], e_ts[cart] + 20, _CART, e_prow[cart], none[cart], none[cart]),
    ]


def _event_order(session: np.ndarray, ts: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """The stable sort of events by (session, ts, kind); ties keep their input order.

    One int64 key sorts ~3x faster than a three-key lexsort; the key is packed only when the
    ranges fit in 62 bits (always for realistic worlds), otherwise lexsort does it.
    """
    if not session.size:
        return np.arange(0)
    s = session - session.min()
    t = ts - ts.min()
    t_bits = int(t.max()).bit_length()
    if int(s.max()).bit_length() + t_bits + 2 > 62:
        return np.lexsort((kind, ts, session))
    key = (s << (t_bits + 2)) | (t << 2) | kind
    return np.argsort(key, kind="stable")


#: Event kinds, coded in the order of their names so sorting by code sorts by name.
_EVENT_NAMES = pl.Series("event", ["add_to_cart", "purchase", "view"])
_CART, _PURCHASE, _VIEW = range(3)


def _gather_or_null(values: pl.Series, index: np.ndarray) -> pl.Series:
    """``values[index]``, null where ``index`` is negative (or ``values`` is empty)."""
    missing = index < 0
    if not values.len():
        return pl.Series([None] * index.size, dtype=pl.String)
    return values.gather(pl.Series(pa.array(np.where(missing, 0, index), mask=missing)))


def _order_tags(ctx: ProductContext, cat: np.ndarray, l_order: np.ndarray, m: int) -> pl.Series:
    """The union of the lines' tags per order (shipping rules look at the whole parcel)."""
    vocab = sorted({t for tags in ctx.cat_tags for t in tags})
    if not vocab or m == 0:
        return pl.Series("tags", [[]] * m, dtype=pl.List(pl.String))
    if len(vocab) > 63:
        raise ConfigError(f"{len(vocab)} category tags; order tags hold at most 63")
    bit = {t: np.uint64(1) << np.uint64(j) for j, t in enumerate(vocab)}
    member = np.array(
        [np.bitwise_or.reduce([bit[t] for t in tags] or [np.uint64(0)]) for tags in ctx.cat_tags],
        dtype=np.uint64,
    )
    # Lines are grouped by order (l_order ascending, at least one line each): OR per group.
    starts = np.searchsorted(l_order, np.arange(m))
    bits = np.bitwise_or.reduceat(member[cat], starts)
    has = ((bits[:, None] >> np.arange(len(vocab), dtype=np.uint64)) & np.uint64(1)).astype(bool)
    # One Arrow list per order, tags in vocabulary order, built from the flag matrix at once.
    offsets = np.concatenate([[0], np.cumsum(has.sum(axis=1))]).astype(np.int32)
    values = pa.array(vocab, type=pa.string()).take(pa.array(np.nonzero(has)[1]))
    return pl.Series("tags", pa.ListArray.from_arrays(pa.array(offsets), values))


def _rule(engine: PolicyEngine, topic: str, facts: pl.DataFrame) -> pl.Series:
    """The store's answer on ``topic`` per row of ``facts``; a row no rule covers is an error.

    The world never falls back to a number of its own, so a gap in the rules stops generation.
    """
    values = engine.evaluate_frame(topic, facts)["value"]
    if values.null_count():
        raise ConfigError(f"policy gap: no {topic} rule applies to some orders of this world")
    return values
