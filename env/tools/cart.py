"""Cart tools: add, view, change and remove lines, checked against episode stock."""

from __future__ import annotations

from typing import Annotated, Any

from shopgen.env.state import CartKey
from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, Range, ToolError, encoded, encoded_object, tool

#: Most units of one line; a guard against absurd quantities, far above any task's need.
#: Stated in the quantity arguments' schemas (:class:`~shopgen.env.tools.registry.Range`).
MAX_QUANTITY = 99


def _resolve(ctx: ToolContext, product_id: str, variant_id: str | None) -> tuple[dict, dict | None]:
    """The product and variant a cart call names, or a ToolError saying what is wrong."""
    product = ctx.product(product_id)
    if variant_id is None:
        if product["n_variants"] == 1:  # nothing to choose: the only variant is meant
            only = ctx.store.variants_of(product_id)[0]
            return product, only
        if product["n_variants"] > 1:
            raise ToolError(
                f"{product_id} has {product['n_variants']} variants; pass a variant_id from "
                "catalog_get_variants",
                "refused",
            )
        return product, None
    variant = ctx.store.variant(variant_id)
    if variant is None:
        raise ToolError(f"no variant with variant_id {variant_id!r}", "not_found")
    if variant["product_id"] != product_id:
        raise ToolError(
            f"variant {variant_id} belongs to product {variant['product_id']}, not {product_id}",
            "refused",
        )
    return product, variant


def _check_stock(ctx: ToolContext, product: dict, variant: dict | None, wanted: int) -> None:
    stock = ctx.stock(product, variant)
    if stock <= 0:
        raise ToolError(
            f"{(variant or product).get('variant_id', product['product_id'])} is out of stock",
            "refused",
        )
    if wanted > stock:
        raise ToolError(f"only {stock} in stock; the cart would hold {wanted}", "refused")


def _line_key(ctx: ToolContext, product_id: str, variant_id: str | None) -> CartKey:
    """The cart line a remove/update names; without variant_id the product's only line."""
    if variant_id is not None:
        key = (product_id, variant_id)
        if key not in ctx.state.cart:
            raise ToolError(f"variant {variant_id} of {product_id} is not in the cart", "not_found")
        return key
    lines = [k for k in ctx.state.cart if k[0] == product_id]
    if not lines:
        raise ToolError(f"{product_id} is not in the cart", "not_found")
    if len(lines) > 1:
        raise ToolError(
            f"the cart holds {len(lines)} variants of {product_id}; pass variant_id", "refused"
        )
    return lines[0]


def cart_summary(ctx: ToolContext) -> Encoded:
    """The cart as the agent sees it: lines with unit prices, the item count and the total.

    A pure function of the cart's lines (titles and prices are the catalog's), remembered per
    distinct cart in the catalog's memo.
    """
    key = ("cart_summary", *ctx.state.cart.items())
    return ctx.memo_read(key, lambda: encoded(_summary(ctx)))


def _cart_result(
    ctx: ToolContext,
    verb: str,
    product_id: str,
    variant_id: str | None,
    quantity: int | None = None,
) -> Encoded:
    """``{verb: the line changed, "cart": cart_summary}`` of a cart change, remembered.

    A pure function of the change and the cart after it, so a replayed change is one memo
    look-up instead of two plus an encoding. ``quantity`` is None for a removal (not shown).
    """
    key = ("cart_result", verb, product_id, variant_id, quantity, *ctx.state.cart.items())

    def make() -> Encoded:
        line: dict[str, Any] = {"product_id": product_id, "variant_id": variant_id}
        if quantity is not None:
            line["quantity"] = quantity
        return encoded_object(**{verb: line, "cart": cart_summary(ctx)})

    return ctx.memo_read(key, make)


def _summary(ctx: ToolContext) -> dict[str, Any]:
    lines, total, items = [], 0.0, 0
    for (pid, vid), quantity in ctx.state.cart.items():
        product = ctx.store.product(pid)
        variant = ctx.store.variant(vid) if vid is not None else None
        unit = product["price"] + (variant["price_delta"] if variant else 0.0)
        line = {"product_id": pid, "variant_id": vid, "title": product["title"]}
        if variant is not None:
            line["variant"] = variant["label"]
        line.update(
            quantity=quantity, unit_price=round(unit, 2), line_total=round(unit * quantity, 2)
        )
        lines.append(line)
        total += unit * quantity
        items += quantity
    return {"lines": lines, "items": items, "total": round(total, 2)}


def line_name(key: tuple[str, str | None]) -> str:
    """A cart line's name in ``extra["cart_turns"]``: ``product_id/variant_id``."""
    return f"{key[0]}/{key[1] or ''}"


def _note_change(ctx: ToolContext, key: tuple[str, str | None]) -> None:
    """Record the turn the cart line ``key`` last changed (``extra["cart_turns"]``).

    What the customer said in that turn or later cannot have informed the line: the cart
    verifier counts only the answers heard before it.
    """
    ctx.state.extra.setdefault("cart_turns", {})[line_name(key)] = ctx.state.turns


@tool("write")
def cart_add(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext,
    product_id: str,
    variant_id: str | None = None,
    quantity: Annotated[int, Range(1, MAX_QUANTITY)] = 1,
) -> Encoded:
    """Add a product to the customer's cart; adding an item already there raises its quantity.

    A cart line holds at most as many units as quantity's maximum.

    Args:
        product_id: the product's id (e.g. B07XK3M9QZ), not a variant_id.
        variant_id: the variant to buy (e.g. V3K9QZ2M7L from catalog_get_variants); required
            when the product has several variants, optional when it has one or none.
        quantity: how many units to add (default 1).
    """
    product, variant = _resolve(ctx, product_id, variant_id)
    key = (product_id, variant["variant_id"] if variant is not None else None)
    total = ctx.state.cart.get(key, 0) + quantity
    if total > MAX_QUANTITY:
        raise ToolError(
            f"the line would hold {total} units, over the limit of {MAX_QUANTITY} a line may"
            " hold; add fewer",
            "bad_arguments",
        )
    _check_stock(ctx, product, variant, total)
    ctx.state.cart[key] = total
    _note_change(ctx, key)
    return _cart_result(ctx, "added", product_id, key[1], quantity)


@tool("read")
def cart_view(ctx: ToolContext) -> Encoded:
    """Show the customer's cart: each line's product, variant, quantity and price, and the total."""
    return cart_summary(ctx)


@tool("write")
def cart_remove(ctx: ToolContext, product_id: str, variant_id: str | None = None) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Remove a line from the customer's cart.

    Args:
        product_id: the product's id (e.g. B07XK3M9QZ), not a variant_id.
        variant_id: which variant's line to remove; needed only when the cart holds several
            variants of the product.
    """
    key = _line_key(ctx, product_id, variant_id)
    del ctx.state.cart[key]
    _note_change(ctx, key)
    return _cart_result(ctx, "removed", key[0], key[1])


@tool("write")
def cart_update_quantity(  # noqa: D417  (ctx is the runtime's, not the agent's)
    ctx: ToolContext,
    product_id: str,
    quantity: Annotated[int, Range(0, MAX_QUANTITY)],
    variant_id: str | None = None,
) -> Encoded:
    """Set how many units of a cart line the customer buys; 0 removes the line.

    Args:
        product_id: the product's id (e.g. B07XK3M9QZ), not a variant_id.
        quantity: the new number of units (0 removes the line).
        variant_id: which variant's line to change; needed only when the cart holds several
            variants of the product.
    """
    key = _line_key(ctx, product_id, variant_id)
    if quantity == 0:
        del ctx.state.cart[key]
    else:
        product, variant = _resolve(ctx, *key)
        _check_stock(ctx, product, variant, quantity)
        ctx.state.cart[key] = quantity
    _note_change(ctx, key)
    return _cart_result(ctx, "updated", key[0], key[1], quantity)
