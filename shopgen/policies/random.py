"""The random reference policy: random offered tools with arguments drawn from what it saw.

Seeded by ``stream(0, "policy", "random", task_id)``, so a task always gets the same play. Its
arguments are plausible (ids and order numbers it was shown, words of the first message), so
its score measures how far blind tool use gets, not how often it breaks the protocol.
"""

from __future__ import annotations

from typing import Any

from shopgen.gen.seeding import stream
from shopgen.gen.tasks.base import Oracle, call, shown_ids
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import ORDER_RE

MAX_TURNS = 6


def random_policy(task: PublicTask) -> Oracle:
    """Play ``MAX_TURNS`` random tool turns at most, then a short final message."""
    rng = stream(0, "policy", "random", task.task_id)
    words = task.user.split()
    products: list[str] = []
    orders: list[str] = ORDER_RE.findall(task.user)
    tools = [t for t in task.tools if t != "ask_user"] or list(task.tools)
    for _ in range(int(rng.integers(1, MAX_TURNS + 1))):
        name = tools[int(rng.integers(len(tools)))]
        results = yield [call(name, **_arguments(name, rng, words, products, orders))]
        products += [p for p in shown_ids(results) if p not in products]
        orders += [o for o in shown_ids(results, "order_id") if o not in orders]
    yield "Done."


def _arguments(
    name: str, rng: Any, words: list[str], products: list[str], orders: list[str]
) -> dict[str, Any]:
    def one(pool: list[str], fallback: str) -> str:
        return pool[int(rng.integers(len(pool)))] if pool else fallback

    if name in ("catalog_search", "policy_search"):
        start = int(rng.integers(max(1, len(words))))
        return {"query": " ".join(words[start : start + 4]) or "product"}
    if name == "recommend_products":
        k = int(rng.integers(1, 4))
        return {"product_ids": [one(products, "B000000000") for _ in range(k)]}
    if name == "ask_user":
        return {"question": "Could you tell me more?"}
    args: dict[str, Any] = {}
    if name in ("order_get_details", "return_check_eligibility", "return_start", "exchange_start"):
        args["order_id"] = one(orders, "000-0000000-0000000")
    if name in (
        "catalog_get_product",
        "catalog_get_variants",
        "cart_add",
        "cart_remove",
        "cart_update_quantity",
        "return_check_eligibility",
        "return_start",
        "exchange_start",
    ):
        args["product_id"] = one(products, "B000000000")
    if name in ("cart_add", "cart_update_quantity"):
        args["quantity"] = int(rng.integers(1, 4))
    if name in ("return_start", "exchange_start"):
        args["reason"] = "changed_mind"
    if name == "return_start":
        args["method"] = "mail"
    if name == "exchange_start":
        args["new_variant_id"] = "V000000000"
    return args
