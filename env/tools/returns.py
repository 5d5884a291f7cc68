"""Return and exchange tools: every eligibility, window and fee comes from the policy engine.

The facts a rule tests are read from the catalog and the episode, never from the agent: the
line's category, department and policy tags, the customer's membership tier, whole days since
delivery counted to the end of the episode's ``today``, the item's condition (episode
``item_condition``, unopened by default), the unit price and quantity. Only the reason and the
return method come from the agent (which it learns from the customer). A request the store
declines (not returnable, outside the window, method not offered) is an error result of kind
``refused`` naming the rule's explanation, not a crash.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.orders import customer_id, line_status, own_order
from shopgen.env.tools.registry import Encoded, ToolError, encoded, tool
from shopgen.gen.seeding import stable_hash
from shopgen.schemas.policy import FACT_VALUES

REASONS: tuple[str, ...] = FACT_VALUES["reason"]
METHODS: tuple[str, ...] = FACT_VALUES["return_method"]


def episode_today(ctx: ToolContext) -> date:
    """The episode's simulated date (the catalog's ``today`` when the episode names none)."""
    raw = ctx.episode.get("today") or ctx.store.manifest.config.get("today")
    try:
        return date.fromisoformat(str(raw))
    except ValueError:
        raise ToolError(f"the episode's today={raw!r} is not a date", "unavailable") from None


def _line(
    ctx: ToolContext, order: dict, product_id: str, variant_id: str | None
) -> tuple[int, dict]:
    """The order's line of the product (and variant), with its index in ``lines_of``."""
    lines = [
        (i, ln)
        for i, ln in enumerate(ctx.store.lines_of(order["order_id"]))
        if ln["product_id"] == product_id and (variant_id is None or ln["variant_id"] == variant_id)
    ]
    if not lines:
        raise ToolError(
            f"order {order['order_id']} has no line with product {product_id}"
            + (f" and variant {variant_id}" if variant_id else ""),
            "not_found",
        )
    if len(lines) > 1:
        raise ToolError(
            f"order {order['order_id']} has {len(lines)} lines of {product_id}; pass variant_id",
            "bad_arguments",
        )
    return lines[0]


def _tiers(store: Any) -> dict[str, str]:
    """Customer → membership tier, read once per store (a return check reads only the tier)."""
    return store.derived(_read_tiers)


def _read_tiers(store: Any) -> dict[str, str]:
    return dict(store.read("users", columns=["user_id", "tier"]).iter_rows())


def _facts(ctx: ToolContext, order: dict, row: int, line: dict, reason: str) -> dict[str, Any]:
    # The store's column of each line's category, not the product's record.
    category = ctx.store.line_product_list("category_id")[row]
    if category is None:
        ctx.product(line["product_id"])  # raises not_found, as reading the record would
    department, tags = ctx.store.category_facts.get(category, ("", ()))
    facts: dict[str, Any] = {
        "category": category,
        "department": department,
        "tags": list(tags),
        "tier": _tiers(ctx.store).get(customer_id(ctx), "none"),
        "item_condition": (ctx.episode.get("item_condition") or {}).get(
            line["product_id"], "unopened"
        ),
        "reason": reason,
        "price": float(line["unit_price"]),
        "quantity": int(line["quantity"]),
    }
    delivered: datetime | None = order["delivered_at"]
    if delivered is not None:
        end_of_today = datetime.combine(episode_today(ctx) + timedelta(days=1), datetime.min.time())
        facts["days_since_delivery"] = max(0, (end_of_today - delivered).days)
    return facts


def _check_reason(reason: str) -> str:
    if reason not in REASONS:
        raise ToolError(
            f"reason must be one of {', '.join(REASONS)}; got {reason!r}", "bad_arguments"
        )
    return reason


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ToolError(
            f"method must be one of {', '.join(METHODS)}; got {method!r}", "bad_arguments"
        )
    return method


class Assessment:
    """What :func:`assess` decided about a line, and its encoded text made on first need.

    Only ``return_check_eligibility`` shows the assessment; a start reads a few of its fields,
    so the text (a JSON encoding and an id scan) is made once and only when shown.
    """

    __slots__ = ("_text", "info")

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        self._text: Encoded | None = None

    def text(self) -> Encoded:
        """The assessment as ``return_check_eligibility`` shows it."""
        if self._text is None:
            self._text = encoded(self.info)
        return self._text


def assess(
    ctx: ToolContext, order_id: str, product_id: str, variant_id: str | None, reason: str
) -> Assessment:
    """Everything the store decides about returning one line: eligibility, window, fees.

    Remembered on everything it reads. Besides the shared world (order, line, product,
    customer, policy), that is the episode's status of the line (returns started in it), the
    item's condition and the episode's day; the order fixes the customer. The assessment is
    shared by every caller: read its dict, never change it.
    """
    order = own_order(ctx, order_id)
    index, line = _line(ctx, order, product_id, variant_id)
    conditions = ctx.episode.get("item_condition") or {}
    condition = (
        conditions.get(line["product_id"], "unopened") if isinstance(conditions, dict) else None
    )

    def make() -> Assessment:
        row = ctx.store.line_rows(order["order_id"])[index]  # its row in ``line_table``
        return Assessment(_assess_line(ctx, order, row, line, reason))

    if type(condition) is not str:  # an odd episode: not worth a memo key
        return make()
    status = line_status(ctx, order["order_id"], line)
    today = str(ctx.episode.get("today") or ctx.store.manifest.config.get("today"))
    key = ("assess", order["order_id"], line["line_no"], reason, status, condition, today)
    return ctx.memo_read(key, make)


def _assess_line(
    ctx: ToolContext, order: dict, row: int, line: dict, reason: str
) -> dict[str, Any]:
    memo = ctx.store.policy_engine.memo  # shared with the generator
    status = line_status(ctx, order["order_id"], line)
    out: dict[str, Any] = {
        "order_id": order["order_id"],
        "line_no": line["line_no"],
        "product_id": line["product_id"],
        "variant_id": line["variant_id"],
        "quantity": line["quantity"],
        "line_total": round(line["line_total"], 2),
        "reason": reason,
    }
    if order["status"] != "delivered":
        return {
            **out,
            "eligible": False,
            "explanation": f"the order is {order['status']}; "
            "only delivered orders can be returned or exchanged",
        }
    if status != "active":
        return {**out, "eligible": False, "explanation": f"this item is already {status}"}
    facts = _facts(ctx, order, row, line, reason)
    decision = memo.return_eligibility(facts)
    window = memo.evaluate("return_window", facts)
    fee = memo.evaluate("restocking_fee", facts)
    fee_pct = float(fee.value) if fee else 0.0
    methods = []
    for method in METHODS:
        mf = {**facts, "return_method": method}
        available = memo.evaluate("return_method_available", mf)
        if not (available and available.value):
            continue
        ship = memo.evaluate("return_shipping_fee", mf)
        cost = float(ship.value) if ship else 0.0
        free = memo.evaluate("free_return_threshold", mf)
        if method == "mail" and free and float(order["subtotal"]) >= float(free.value):
            cost = 0.0
        refund = max(0.0, line["line_total"] * (1 - fee_pct / 100) - cost)
        methods.append({"method": method, "fee": round(cost, 2), "refund": round(refund, 2)})
    return {
        **out,
        "eligible": bool(decision and decision.value),
        "explanation": decision.explanation,
        "days_since_delivery": facts["days_since_delivery"],
        "window_days": window.value if window else None,
        "restocking_fee_pct": fee_pct,
        "methods": methods,
    }


def _started(ctx: ToolContext, info: dict[str, Any], what: str, record: dict[str, Any]) -> str:
    """Record a started return/exchange; its id is a hash of the task and the line."""
    key = f"{info['order_id']}#{info['line_no']}"
    ctx.state.extra.setdefault("return_lines", {})[key] = f"{what}_started"
    rid = stable_hash(ctx.task.task_id, what, key, bits=40)
    ident = f"{'R' if what == 'return' else 'X'}{rid:012d}"
    # The turn (the state's record only): a fact asked in a later turn was not asked for it.
    ctx.state.extra.setdefault(f"{what}s", []).append(
        {"id": ident, "turn": ctx.state.turns, **record}
    )
    return ident


@tool("read")
def return_check_eligibility(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext,
    order_id: str,
    product_id: str,
    reason: str = "changed_mind",
    variant_id: str | None = None,
) -> Encoded:
    """Check whether an item of an order can be returned, and what a return would cost.

    Returns eligibility with the policy's explanation, the return window, days since delivery,
    the restocking fee and, per available return method, its fee and the refund.

    Args:
        order_id: the order's id as shown by orders_list (e.g. 659-0005725-1139123).
        product_id: the product_id of the item in that order (e.g. B07XK3M9QZ).
        reason: why the customer returns it: changed_mind, defective, wrong_item or
            damaged_in_transit (default changed_mind).
        variant_id: the line's variant_id, only needed when the order holds several variants
            of the product.
    """
    return assess(ctx, order_id, product_id, variant_id, _check_reason(reason)).text()


@tool("write")
def return_start(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext,
    order_id: str,
    product_id: str,
    reason: str,
    method: str,
    variant_id: str | None = None,
) -> dict[str, Any]:
    """Start a return of one item of an order for a refund; refused when the policy says no.

    Args:
        order_id: the order's id as shown by orders_list (e.g. 659-0005725-1139123).
        product_id: the product_id of the item to return (e.g. B07XK3M9QZ).
        reason: changed_mind, defective, wrong_item or damaged_in_transit.
        method: how the item goes back: mail, drop_off or pickup.
        variant_id: the line's variant_id, only needed when the order holds several variants
            of the product.
    """
    info = assess(ctx, order_id, product_id, variant_id, _check_reason(reason)).info
    _check_method(method)
    if not info["eligible"]:
        raise ToolError(f"return refused: {info['explanation']}", "refused")
    offer = next((m for m in info["methods"] if m["method"] == method), None)
    if offer is None:
        allowed = ", ".join(m["method"] for m in info["methods"]) or "none"
        raise ToolError(
            f"return refused: {method} is not offered for this item (methods: {allowed})", "refused"
        )
    record = {
        "order_id": info["order_id"],
        "line_no": info["line_no"],
        "product_id": info["product_id"],
        "variant_id": info["variant_id"],
        "reason": reason,
        "method": method,
        "fee": offer["fee"],
        "restocking_fee_pct": info["restocking_fee_pct"],
        "refund": offer["refund"],
    }
    ident = _started(ctx, info, "return", record)
    return {"return_id": ident, "status": "return_started", **record}


@tool("write")
def exchange_start(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext,
    order_id: str,
    product_id: str,
    new_variant_id: str,
    reason: str,
    variant_id: str | None = None,
) -> dict[str, Any]:
    """Exchange one item of an order for another variant of the same product (no refund).

    The same return policy decides eligibility; the new variant must be in stock.

    Args:
        order_id: the order's id as shown by orders_list (e.g. 659-0005725-1139123).
        product_id: the product_id of the item to exchange (e.g. B07XK3M9QZ).
        new_variant_id: the variant_id to receive instead, from catalog_get_variants of the
            same product (e.g. V0DIAL4LTY).
        reason: changed_mind, defective, wrong_item or damaged_in_transit.
        variant_id: the line's current variant_id, only needed when the order holds several
            variants of the product.
    """
    info = assess(ctx, order_id, product_id, variant_id, _check_reason(reason)).info
    new = ctx.store.variant(new_variant_id)
    if new is None:
        raise ToolError(f"no variant with variant_id {new_variant_id!r}", "not_found")
    if new["product_id"] != info["product_id"]:
        raise ToolError(
            f"variant {new_variant_id} belongs to product {new['product_id']}, not "
            f"{info['product_id']}; an exchange keeps the product",
            "refused",
        )
    if new_variant_id == info["variant_id"]:
        raise ToolError("new_variant_id is the variant the customer already has", "refused")
    if not info["eligible"]:
        raise ToolError(f"exchange refused: {info['explanation']}", "refused")
    stock = ctx.stock(ctx.product(info["product_id"]), new)
    if stock < info["quantity"]:
        raise ToolError(
            f"exchange refused: only {stock} of {new_variant_id} in stock, "
            f"{info['quantity']} needed",
            "refused",
        )
    record = {
        "order_id": info["order_id"],
        "line_no": info["line_no"],
        "product_id": info["product_id"],
        "variant_id": info["variant_id"],
        "new_variant_id": new_variant_id,
        "reason": reason,
    }
    ident = _started(ctx, info, "exchange", record)
    return {
        "exchange_id": ident,
        "status": "exchange_started",
        "new_variant": new["label"],
        **record,
    }
