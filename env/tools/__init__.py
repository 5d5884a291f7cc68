"""Every tool, and which environment offers which (issue #6 §2).

Adding a tool is one decorated function in a module here (imported below) and its name in the
environments' rows of :data:`ENV_TOOLS`. Environments offer only their own subset.
"""

from __future__ import annotations

from shopgen.env.tools import (  # noqa: F401  (registers tools)
    cart,
    catalog,
    customer,
    dialogue,
    orders,
    policy,
    recommend,
    returns,
)
from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import REGISTRY, ToolError, ToolSpec, invoke, tool

_CATALOG = ("catalog_search", "catalog_get_product", "catalog_get_variants")
_CART = ("cart_add", "cart_view", "cart_remove", "cart_update_quantity")
_ORDERS = ("orders_list", "order_get_details")
_RETURNS = ("return_check_eligibility", "return_start", "exchange_start")

#: Environment → the tools it offers, in the order the agent sees them. Every environment may
#: omit slots from the first message, so every one offers ask_user.
ENV_TOOLS: dict[str, tuple[str, ...]] = {
    "discovery": (*_CATALOG, "recommend_products", "ask_user"),
    "substitution": (*_CATALOG, "user_get_visit_history", "recommend_products", "ask_user"),
    # The seed model's six tools first, in its card's order, then the cart fixes.
    "cart": (
        "catalog_search",
        "catalog_get_variants",
        "cart_add",
        "cart_view",
        "user_get_visit_history",
        "ask_user",
        "catalog_get_product",
        "cart_remove",
        "cart_update_quantity",
    ),
    "bundle": (*_CATALOG, "recommend_products", *_CART, "ask_user"),
    "returns": (
        *_ORDERS,
        "catalog_get_product",
        "catalog_get_variants",
        *_RETURNS,
        "policy_search",
        "ask_user",
    ),
    "status": (*_ORDERS, "catalog_get_product", "ask_user"),
    "policy": ("policy_search", *_ORDERS, "catalog_get_product", "ask_user"),
    "journey": (
        *_CATALOG,
        *_CART,
        "user_get_visit_history",
        "recommend_products",
        *_ORDERS,
        *_RETURNS,
        "policy_search",
        "ask_user",
    ),
}


def tool_schemas(names: tuple[str, ...] | list[str]) -> list[dict]:
    """The OpenAI function schemas of ``names``, in that order (what a task row stores)."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise KeyError(f"no tool named {unknown[0]!r}")
    return [REGISTRY[n].schema for n in names]


def env_tool_schemas(env: str) -> list[dict]:
    """The schemas environment ``env`` offers."""
    if env not in ENV_TOOLS:
        raise KeyError(f"unknown environment {env!r} (environments: {', '.join(ENV_TOOLS)})")
    return tool_schemas(ENV_TOOLS[env])


__all__ = [
    "ENV_TOOLS",
    "REGISTRY",
    "ToolContext",
    "ToolError",
    "ToolSpec",
    "env_tool_schemas",
    "invoke",
    "tool",
    "tool_schemas",
]
