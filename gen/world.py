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
#: Order statuses in lifecycle order (their codes in :func:`_block_history`).
ORDER_STATUSES = ("cancelled", "placed", "processing", "shipped", "in_transit", "delivered")


@dataclass(frozen=True)
class ProductContext:
    """The catalog as arrays the samplers index: products sorted by department, category."""

    product_id: pl.Series
    price: np.ndarray
    n_variants: np.ndarray
    var_start: np.ndarray  # first row of the product's variants in ``variant_id``
    variant_id: pl.Series
    price_delta: np.ndarray
    category: pl.Series  # category ids, per product
    cat_code: np.ndarray
    cum: np.ndarray  # cumulative popularity, in sorted order
    dept_bounds: np.ndarray  # (n_dept, 2) product row range
    cat_bounds: np.ndarray  # (n_cat, 2)
    cat_tags: list[list[str]]  # per category code
    departments: tuple[str, ...]


def product_context(
    products: pl.DataFrame, variants: pl.DataFrame, taxonomy_leaves: list[tuple[str, str, list]]
) -> ProductContext:
    """Compile the product and variant tables for sampling.

    Args:
        products: product_id, category_id, price, rating_count, n_variants.
        variants: variant_id, product_id, price_delta.
        taxonomy_leaves: (department_id, category_id, tags) per leaf, in taxonomy order.
    """
    departments = tuple(dict.fromkeys(d for d, _, _ in taxonomy_leaves))
    cat_index = {c: i for i, (_, c, _) in enumerate(taxonomy_leaves)}
    cat_dept = np.array([departments.index(d) for d, _, _ in taxonomy_leaves])
    p = products.select("product_id", "category_id", "price", "rating_count", "n_variants")
    p = p.with_columns(
        pl.col("category_id").replace_strict(cat_index, return_dtype=pl.Int32).alias("cat")
    )
    p = p.with_columns(pl.Series("dept", cat_dept[p["cat"].to_numpy()])).with_row_index("file_row")
    # Products are read in row order, so a stable sort on the integer codes is canonical and
    # avoids sorting a million string ids.
    p = p.sort(["dept", "cat"], maintain_order=True).with_row_index("prow")
    n_var = p["n_variants"].to_numpy().astype(np.int64)
    variant_id, price_delta, var_start = _variant_rows(products, variants, p, n_var)
    # Popularity: reviews are the visible proxy; a sub-linear power keeps a long tail.
    weight = (p["rating_count"].to_numpy().astype(np.float64) + 1.0) ** 0.8
    cum = np.cumsum(weight)
    dept, cat = p["dept"].to_numpy(), p["cat"].to_numpy()
    return ProductContext(
        product_id=p["product_id"],
        price=p["price"].to_numpy(),
        n_variants=n_var,
        var_start=var_start,
        variant_id=variant_id,
        price_delta=price_delta,
        category=p["category_id"],
        cat_code=cat,
        cum=cum,
        dept_bounds=_bounds(dept, len(departments)),
        cat_bounds=_bounds(cat, len(taxonomy_leaves)),
        cat_tags=[list(t) for _, _, t in taxonomy_leaves],
        departments=departments,
    )


def _variant_rows(
    products: pl.DataFrame, variants: pl.DataFrame, p: pl.DataFrame, n_var: np.ndarray
) -> tuple[pl.Series, np.ndarray, np.ndarray]:
    """Variant ids and price deltas, and where each sorted product's variants start.

    A product's variants keep their order in the variants table. ``write_catalog`` writes
    them grouped in product order, so no join is needed; any other layout is joined by id.
    """
    file_n = products["n_variants"].to_numpy().astype(np.int64)
    if variants.height != int(file_n.sum()):
        raise ConfigError("variants table does not match products.n_variants")
    owner = np.repeat(np.arange(products.height), file_n)
    if (variants["product_id"] == products["product_id"].gather(owner)).all():
        file_start = np.concatenate([[0], np.cumsum(file_n)[:-1]]).astype(np.int64)
        var_start = file_start[p["file_row"].to_numpy()]
        return variants["variant_id"], variants["price_delta"].to_numpy(), var_start
    v = (
        variants.select("variant_id", "product_id", "price_delta")
        .join(p.select("product_id", "prow"), on="product_id", maintain_order="left")
        .sort("prow", maintain_order=True)
    )
    var_start = np.concatenate([[0], np.cumsum(n_var)[:-1]]).astype(np.int64)
    return v["variant_id"], v["price_delta"].to_numpy(), var_start


def _bounds(codes: np.ndarray, n: int) -> np.ndarray:
    starts = np.searchsorted(codes, np.arange(n), side="left")
    stops = np.searchsorted(codes, np.arange(n), side="right")
    return np.column_stack([starts, stops])


def _pick(ctx: ProductContext, u: np.ndarray, bounds: np.ndarray | None) -> np.ndarray:
    """Popularity-weighted product rows; ``bounds`` restricts each draw to a row range."""
    total = ctx.cum[-1]
    if bounds is None:
        target = u * total
    else:
        lo = np.where(bounds[:, 0] > 0, ctx.cum[np.maximum(bounds[:, 0] - 1, 0)], 0.0)
        hi = np.where(bounds[:, 1] > 0, ctx.cum[np.maximum(bounds[:, 1] - 1, 0)], 0.0)
        empty = hi <= lo  # a department without products in a tiny catalog: draw globally
        target = np.where(empty, u * total, lo + u * (hi - lo))
    return _sorted_search(ctx.cum, target).clip(max=ctx.cum.size - 1)


def _sorted_search(cum: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``searchsorted(cum, target, "right")``, about 4x faster on a big table.

    Sorted needles walk the table in order instead of missing the cache on every lookup.
    """
    order = np.argsort(target, kind="stable")
    out = np.empty(target.size, dtype=np.intp)
    out[order] = np.searchsorted(cum, target[order], side="right")
    return out


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


def _block_history(seed, block, users, sel, user_ids, ctx, engine, today):
    rng = stream(seed, "orders", block)
    clock = clock_of(today).astype(np.int64)
    start = clock - WINDOW_DAYS * _DAY
    n = USER_BLOCK  # draw for the full block so a prefix of users sees the same numbers
    # -- orders per user, and when -----------------------------------------------------------
    activity = np.ones(n)
    activity[users.rows[sel] % USER_BLOCK] = users.activity[sel]
    present = np.zeros(n, dtype=bool)
    present[users.rows[sel] % USER_BLOCK] = True
    n_orders = np.minimum(rng.poisson(ORDERS_PER_USER * activity), MAX_ORDERS) * present
    slot = np.full(n, -1)
    slot[users.rows[sel] % USER_BLOCK] = sel
    o_user, o_rank = _segments(n_orders)
    o_sel = slot[o_user]  # index into users.* arrays
    m = o_user.size
    signup = users.signup.astype(np.int64)[o_sel]
    begin = np.maximum(signup, start)
    placed = begin + (rng.random(m) * (clock - begin)).astype(np.int64)
    tier = _names(TIERS, users.tier[o_sel])
    state = pl.Series(users.state).gather(o_sel)
    # -- lines ---------------------------------------------------------------------------------
    n_lines = np.minimum(1 + rng.poisson(0.6, m), 5)
    l_order, l_rank = _segments(n_lines)
    k = l_order.size
    fav = rng.random(k) < 0.7
    which = (rng.random(k) < 0.5).astype(np.intp)
    dept = users.fav_dept[o_sel[l_order], which]
    bounds = np.where(fav[:, None], ctx.dept_bounds[dept], -1)
    prow = np.where(
        fav, _pick(ctx, rng.random(k), bounds.clip(min=0)), _pick(ctx, rng.random(k), None)
    )
    nv = ctx.n_variants[prow]
    vrow = ctx.var_start[prow] + (rng.random(k) * np.maximum(nv, 1)).astype(np.int64)
    has_var = nv > 0
    qty = np.minimum(rng.geometric(0.65, k), 12) + np.where(rng.random(k) < 0.02, 9, 0)
    unit = np.round(
        ctx.price[prow] + np.where(has_var, ctx.price_delta[np.where(has_var, vrow, 0)], 0.0), 2
    )
    cat = ctx.cat_code[prow]
    line_tags = pl.Series(
        [ctx.cat_tags[c] for c in range(len(ctx.cat_tags))], dtype=pl.List(pl.String)
    )
    tags = line_tags.gather(cat)
    disc = engine.evaluate_frame(
        "bulk_discount", pl.DataFrame({"quantity": qty, "tier": tier.gather(l_order), "tags": tags})
    )["value"]
    _require(disc, "bulk_discount")
    line_total = np.round(unit * qty * (1 - disc.to_numpy() / 100), 2)
    subtotal = np.round(np.bincount(l_order, weights=line_total, minlength=m), 2)
    # -- shipping: method, availability, cost, days -----------------------------------------
    order_tags = _order_tags(ctx, cat, l_order, m)
    speed = users.speed[o_sel]
    premium = users.tier[o_sel] == 2
    probs = np.where(premium[:, None], [0.3, 0.1, 0.55, 0.05], [0.72, 0.14, 0.09, 0.05])
    probs = probs * np.array([1.0, 1.0 + speed.mean(), 1.0, 1.0])
    u = rng.random(m) * probs.sum(axis=1)
    chosen = (u[:, None] > np.cumsum(probs, axis=1)).sum(axis=1).clip(max=3)
    method = _names(METHODS, chosen)
    facts = pl.DataFrame(
        {
            "ship_method": method,
            "tier": tier,
            "state": state,
            "order_total": subtotal,
            "tags": order_tags,
        }
    )
    ok = engine.evaluate_frame("ship_method_available", facts)["value"]
    _require(ok, "ship_method_available")
    method = _names(METHODS, np.where(ok.to_numpy().astype(bool), chosen, 0))  # 0: standard
    facts = facts.with_columns(method.alias("ship_method"))
    cost = engine.evaluate_frame("shipping_cost", facts)["value"]
    days = engine.evaluate_frame("shipping_days", facts)["value"]
    _require(cost, "shipping_cost")
    _require(days, "shipping_days")
    cost, days = cost.to_numpy(), days.to_numpy()
    # -- lifecycle -----------------------------------------------------------------------------
    handling = (3600 * (2 + rng.random(m) * 34)).astype(np.int64)
    processing = placed + (1800 + rng.random(m) * 7200).astype(np.int64)
    shipped = placed + handling
    transit = (days * 7 / 5 * (0.75 + 0.5 * rng.random(m)) * _DAY).astype(np.int64)
    delivered = shipped + np.maximum(transit, 6 * 3600)
    expected = placed + 36 * 3600 + (days * 7 / 5 * _DAY).astype(np.int64)
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
    is_shipped = status >= 3
    is_delivered = status == 5
    status = _names(ORDER_STATUSES, status)
    carrier_i = (rng.random(m) * len(CARRIERS)).astype(np.intp)
    track = rng.integers(10**11, 10**12, m)
    order_ids = _format_order_ids(seed, users.rows[o_sel] * 64 + o_rank)
    eta = np.where(~is_delivered & ~cancel, expected, 0)
    orders = pl.DataFrame(
        {
            "order_id": order_ids,
            "user_id": user_ids.gather(o_sel),
            "placed_at": _ts(placed.astype("datetime64[s]")),
            "status": status,
            "ship_method": method,
            "ship_state": state,
            "subtotal": subtotal,
            "shipping_cost": cost.astype(np.float64),
            "total": np.round(subtotal + cost, 2),
            "shipped_at": _ts(shipped.astype("datetime64[s]")),
            "delivered_at": _ts(delivered.astype("datetime64[s]")),
            "eta": eta.astype("datetime64[s]").astype("datetime64[D]"),
            "carrier": _names(CARRIERS, carrier_i),
            "tracking_number": _names(_TRACKING_PREFIX, carrier_i)
            + pl.Series(track).cast(pl.String),
            "cancelled_at": _ts(cancelled_at.astype("datetime64[s]")),
        }
    ).with_columns(
        *[
            pl.when(pl.Series(is_shipped)).then(pl.col(c)).otherwise(None).alias(c)
            for c in ("shipped_at", "carrier", "tracking_number")
        ],
        pl.when(pl.Series(is_delivered))
        .then(pl.col("delivered_at"))
        .otherwise(None)
        .alias("delivered_at"),
        pl.when(pl.Series(~is_delivered & ~cancel))
        .then(pl.col("eta"))
        .otherwise(None)
        .alias("eta"),
        pl.when(pl.Series(cancel))
        .then(pl.col("cancelled_at"))
        .otherwise(None)
        .alias("cancelled_at"),
    )
    # -- returns -------------------------------------------------------------------------------
    since = (clock - delivered[l_order]) / _DAY
    line_facts = pl.DataFrame(
        {
            "category": ctx.category.gather(prow),
            "tags": tags,
            "tier": tier.gather(l_order),
            "item_condition": _names(("unopened",), np.zeros(k, dtype=np.intp)),
            "reason": _names(("changed_mind",), np.zeros(k, dtype=np.intp)),
        }
    )
    returnable = engine.evaluate_frame("returnable", line_facts)["value"].fill_null(False)
    window = engine.evaluate_frame("return_window", line_facts)["value"].fill_null(0.0).to_numpy()
    want = rng.random(k) < 0.08
    ret_days = rng.random(k) * np.minimum(window, since)
    returned = want & is_delivered[l_order] & returnable.to_numpy().astype(bool) & (window > 0)
    returned_at = delivered[l_order] + (ret_days * _DAY).astype(np.int64) + 3600
    returned &= returned_at < clock
    line_status = _names(
        ("active", "returned", "cancelled"), np.where(cancel[l_order], 2, returned.astype(np.intp))
    )
    lines = pl.DataFrame(
        {
            "order_id": order_ids.gather(l_order),
            "line_no": (l_rank + 1).astype(np.int8),
            "product_id": ctx.product_id.gather(prow),
            "variant_id": ctx.variant_id.gather(np.where(has_var, vrow, 0))
            if ctx.variant_id.len()
            else pl.Series([None] * k, dtype=pl.String),
            "quantity": qty.astype(np.int16),
            "unit_price": unit,
            "discount_pct": disc.to_numpy().astype(np.float64),
            "line_total": line_total,
            "status": line_status,
            "returned_at": _ts(returned_at.astype("datetime64[s]")),
        }
    ).with_columns(
        pl.when(pl.Series(has_var)).then(pl.col("variant_id")).otherwise(None).alias("variant_id"),
        pl.when(pl.Series(returned))
        .then(pl.col("returned_at"))
        .otherwise(None)
        .alias("returned_at"),
    )
    visits = _visits(
        rng,
        users,
        slot,
        n_orders,
        o_sel,
        o_rank,
        placed,
        l_order,
        prow,
        vrow,
        has_var,
        order_ids,
        ctx,
        start,
        clock,
        user_ids,
    )
    return (
        orders.select(ORDERS.names),
        lines.select(ORDER_LINES.names),
        visits.select(VISITS.names),
    )


def _visits(
    rng,
    users,
    slot,
    n_orders,
    o_sel,
    o_rank,
    placed,
    l_order,
    prow,
    vrow,
    has_var,
    order_ids,
    ctx,
    start,
    clock,
    user_ids,
):
    """Sessions: views in the category before each purchase, add-to-carts, then the purchase."""
    k = l_order.size
    # Views before each purchased line: same-category products, popularity-weighted.
    n_views = 1 + rng.poisson(1.8, k)
    v_line, v_rank = _segments(n_views)
    cat = ctx.cat_code[prow[v_line]]
    viewed = _pick(ctx, rng.random(v_line.size), ctx.cat_bounds[cat])
    last = v_rank == n_views[v_line] - 1
    viewed = np.where(last, prow[v_line], viewed)  # the bought product is looked at last
    v_order = l_order[v_line]
    lead = (60 + rng.random(v_line.size) * 1500).astype(np.int64) * (n_views[v_line] - v_rank + 1)
    v_ts = placed[v_order] - lead - 120
    # Browse-only sessions in favourite departments.
    n_user = n_orders.size
    n_browse = rng.poisson(0.5 * n_orders + 1) * (slot >= 0)
    b_user, b_rank = _segments(n_browse)
    b_sel = slot[b_user]
    b_views = 1 + rng.poisson(2.5, b_user.size)
    e_sess, e_rank = _segments(b_views)
    e_sel = b_sel[e_sess]
    b_begin = np.maximum(users.signup.astype(np.int64)[b_sel], start)
    b_start = b_begin + (rng.random(b_user.size) * (clock - 3600 - b_begin)).astype(np.int64)
    e_ts = np.minimum(
        b_start[e_sess] + e_rank * (30 + (rng.random(e_sess.size) * 240).astype(np.int64)),
        clock - 1,
    )
    which = (rng.random(e_sess.size) < 0.5).astype(np.intp)
    dept = users.fav_dept[e_sel, which]
    e_prow = _pick(ctx, rng.random(e_sess.size), ctx.dept_bounds[dept])
    e_cart = rng.random(e_sess.size) < 0.05
    del n_user
    o_session = users.rows[o_sel] * 4096 + o_rank
    b_session = users.rows[b_sel] * 4096 + 64 + b_rank
    none = np.full(v_line.size, -1)
    var_row = np.where(has_var, vrow, -1)
    b_none = np.full(e_sess.size, -1)
    # The five event kinds as parallel index arrays, sorted once and gathered once.
    parts = [  # (user, session, ts, kind, product row, variant row, order index)
        (o_sel[v_order], o_session[v_order], v_ts, _VIEW, viewed, none, none),
        (
            o_sel[l_order],
            o_session[l_order],
            placed[l_order] - 60,
            _CART,
            prow,
            var_row,
            np.full(k, -1),
        ),
        (
            o_sel[l_order],
            o_session[l_order],
            placed[l_order],
            _PURCHASE,
            prow,
            var_row,
            np.arange(k),
        ),
        (e_sel, b_session[e_sess], e_ts, _VIEW, e_prow, b_none, b_none),
        (
            e_sel[e_cart],
            b_session[e_sess][e_cart],
            e_ts[e_cart] + 20,
            _CART,
            e_prow[e_cart],
            b_none[e_cart],
            b_none[e_cart],
        ),
    ]
    cols = [
        np.concatenate([np.broadcast_to(np.asarray(p[c]), p[0].shape) for p in parts])
        for c in range(7)
    ]
    user, session, ts, kind, product, variant, line = cols
    order = _event_order(session, ts, kind)
    return pl.DataFrame(
        {
            "user_id": user_ids.gather(user[order]),
            "session_id": session[order].astype(np.int64),
            "ts": _ts(ts[order].astype("datetime64[s]")),
            "event": _EVENT_NAMES.gather(kind[order]),
            "product_id": ctx.product_id.gather(product[order]),
            "variant_id": _gather_or_null(ctx.variant_id, variant[order]),
            "order_id": _gather_or_null(order_ids.gather(l_order), line[order]),
        }
    )


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


def _require(values: pl.Series, topic: str) -> None:
    if values.null_count():
        raise ConfigError(f"policy gap: no {topic} rule applies to some orders of this world")
