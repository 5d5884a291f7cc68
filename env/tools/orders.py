"""Order tools: the customer's orders, one order's status, tracking and lines.

The customer is the episode's ``user_id``; an order of anyone else is reported exactly like an
unknown id (``not_found``), so an agent can neither read nor probe another customer's orders.
An episode may narrow the history to ``order_ids`` (the H_orders(d) orders of a task).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, ToolError, encoded, tool

#: Characters of a product title an order listing shows.
TITLE_CHARS = 60


def customer_id(ctx: ToolContext) -> str:
    """The episode's customer, or ToolError ``unavailable`` when the task names none."""
    uid = ctx.episode.get("user_id")
    if not isinstance(uid, str) or not uid:
        raise ToolError("this conversation has no signed-in customer", "unavailable")
    return uid


def customer_order_rows(ctx: ToolContext) -> list[int]:
    """The rows of ``order_table`` this episode shows for its customer, newest first."""
    uid = customer_id(ctx)
    allowed = ctx.episode.get("order_ids")
    store = ctx.store
    if allowed is None:
        return list(reversed(store.order_rows_of(uid)))
    # The few allowed orders one by one, not all of the customer's: their order in the
    # store's table is the order of ``orders_of``.
    rows = {store.order_row(i) for i in allowed if type(i) is str} - {-1}
    users = store.order_list("user_id")
    return [r for r in sorted(rows, reverse=True) if users[r] == uid]


def own_order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    """The customer's order ``order_id``, or ToolError ``not_found`` (also for others' orders)."""
    order = ctx.store.order(order_id.strip()) if isinstance(order_id, str) else None
    allowed = ctx.episode.get("order_ids")
    if (
        order is None
        or order["user_id"] != customer_id(ctx)
        or (allowed is not None and order["order_id"] not in allowed)
    ):
        raise ToolError(
            f"no order {order_id!r} for this customer; orders_list shows their order ids",
            "not_found",
        )
    return order


def _day(value: datetime | date | None) -> str | None:
    return None if value is None else value.isoformat()[:10]


def listed_titles(store: Any) -> list[str]:
    """Every order line's product title as listings show it, row-aligned with ``line_table``.

    Made once per store (``store.derived``) from the store's line columns (every listing and
    details result shows one per line; a product look-up per line cost ~20 µs). A product the
    catalog lacks shows its id.
    """
    return store.derived(_listed_titles)


def _listed_titles(store: Any) -> list[str]:
    cut: dict[str, str] = {}  # lines repeat products: each title is cut once
    found = []
    for title, product_id in zip(
        store.line_product_list("title"), store.line_list("product_id"), strict=True
    ):
        shown = product_id if title is None else title
        if shown not in cut:
            cut[shown] = _cut(shown)
        found.append(cut[shown])
    return found


def _cut(title: str) -> str:
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def line_status(ctx: ToolContext, order_id: str, line: dict[str, Any]) -> str:
    """A line's status including returns and exchanges started in this episode."""
    started = ctx.state.extra.get("return_lines", {})
    return started.get(f"{order_id}#{line['line_no']}", line["status"])


@tool("read")
def orders_list(ctx: ToolContext) -> Encoded | dict[str, Any]:
    """List this customer's orders, newest first: order_id, date, status, total and items.

    Use an order_id from this list with order_get_details or the return tools.
    """
    uid = customer_id(ctx)
    allowed = ctx.episode.get("order_ids")
    if allowed is not None and not all(type(i) is str for i in allowed):
        return _orders_list(ctx)  # an odd episode: not worth a memo key
    # The listing reads the shared world only (statuses changed in an episode show in
    # order_get_details), so it is a pure function of the customer and the allowed ids.
    key = ("orders_list", uid, None if allowed is None else tuple(allowed))
    return ctx.memo_read(key, lambda: encoded(_orders_list(ctx)))


def _orders_list(ctx: ToolContext) -> dict[str, Any]:
    out = []
    store = ctx.store
    # Columns of the orders and their lines, not records (most listed orders are read once).
    ids, placed, status, total = (
        store.order_list(c) for c in ("order_id", "placed_at", "status", "total")
    )
    products, quantities = store.line_list("product_id"), store.line_list("quantity")
    titles = listed_titles(store)
    for o in customer_order_rows(ctx):
        out.append(
            {
                "order_id": ids[o],
                "placed_on": _day(placed[o]),
                "status": status[o],
                "total": round(total[o], 2),
                "items": [
                    {"product_id": products[r], "title": titles[r], "quantity": quantities[r]}
                    for r in store.line_rows(ids[o])
                ],
            }
        )
    return {"orders": out, "count": len(out)}


@tool("read")
def order_get_details(ctx: ToolContext, order_id: str) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Get one order's status, shipping method, tracking, delivery dates and lines.

    Args:
        order_id: the order's id as shown by orders_list (e.g. 659-0005725-1139123).
    """
    o = own_order(ctx, order_id)
    # The details read the shared world and, of the episode, only the returns and exchanges
    # started in it (line statuses): a pure function of the order and those.
    started = ctx.state.extra.get("return_lines")
    key = ("order_get_details", o["order_id"], *(started.items() if started else ()))
    return ctx.memo_read(key, lambda: encoded(_order_details(ctx, o)))


def _order_details(ctx: ToolContext, o: dict[str, Any]) -> dict[str, Any]:
    lines = []
    titles = listed_titles(ctx.store)
    rows = ctx.store.line_rows(o["order_id"])
    for r, ln in zip(rows, ctx.store.lines_of(o["order_id"]), strict=True):
        entry: dict[str, Any] = {
            "line_no": ln["line_no"],
            "product_id": ln["product_id"],
            "title": titles[r],
        }
        if ln["variant_id"] is not None:
            entry["variant_id"] = ln["variant_id"]
            entry["variant"] = ctx.store.variant_field(ln["variant_id"], "label")
        entry.update(
            quantity=ln["quantity"],
            unit_price=round(ln["unit_price"], 2),
            line_total=round(ln["line_total"], 2),
            status=line_status(ctx, o["order_id"], ln),
        )
        lines.append(entry)
    return {
        "order_id": o["order_id"],
        "status": o["status"],
        "placed_on": _day(o["placed_at"]),
        "ship_method": o["ship_method"],
        "shipped_on": _day(o["shipped_at"]),
        "delivered_on": _day(o["delivered_at"]),
        "eta": _day(o["eta"]),
        "cancelled_on": _day(o["cancelled_at"]),
        "carrier": o["carrier"],
        "tracking_number": o["tracking_number"],
        "subtotal": round(o["subtotal"], 2),
        "shipping_cost": round(o["shipping_cost"], 2),
        "total": round(o["total"], 2),
        "lines": lines,
    }
