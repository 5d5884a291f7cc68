"""Customers, orders and lines picked by shape from the fixture world, for order/return tests."""

from __future__ import annotations

import json
from typing import Any

from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv
from shopgen.gen.store import CatalogStore


def returns_row(store: CatalogStore, user_id: str, **episode: Any) -> dict[str, Any]:
    """A returns-env row whose customer is ``user_id``."""
    return make_row(store, env="returns", d=4, episode={"user_id": user_id, **episode})


def check(env: ShopEnv, order_id: str, product_id: str, reason: str = "changed_mind") -> dict:
    obs, *_ = env.step(
        call("return_check_eligibility", order_id=order_id, product_id=product_id, reason=reason)
    )
    return result(obs)


def find_world_picks(store: CatalogStore) -> dict[str, Any]:
    """An eligible line, an out-of-window line, an undelivered order and two customers."""
    env = ShopEnv(store)
    users = store.read("users", columns=["user_id"])["user_id"].to_list()
    picks: dict[str, Any] = {}
    for uid in users:
        env.reset(returns_row(store, uid, today=store.manifest.config["today"]))
        for order in store.orders_of(uid):
            lines = store.lines_of(order["order_id"])
            if len({ln["product_id"] for ln in lines}) != len(lines):
                continue
            for line in lines:
                if line["status"] != "active":
                    continue
                if order["status"] != "delivered":
                    picks.setdefault("undelivered", (uid, order["order_id"], line["product_id"]))
                    continue
                if env.done or env.state.turns >= env.task.axis("T_max") - 1:
                    env.reset(returns_row(store, uid))
                out = check(env, order["order_id"], line["product_id"])
                if "eligible" not in out:
                    continue
                key = "eligible" if out["eligible"] else "ineligible"
                if key == "ineligible" and "outside the window" not in out["explanation"]:
                    key = "not_returnable" if "window" not in out["explanation"] else key
                if key == "eligible" and not any(m["method"] == "mail" for m in out["methods"]):
                    continue
                picks.setdefault(key, (uid, order["order_id"], line["product_id"]))
        if {"eligible", "ineligible", "undelivered"} <= set(picks):
            break
    picks["users"] = users
    assert {"eligible", "ineligible", "undelivered"} <= set(picks), json.dumps(picks)[:300]
    return picks
