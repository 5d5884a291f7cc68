"""A minimal but real task for ``shopgen play``, until the environment generators exist.

Stop-gap, kept in one module so the task-generator issue can replace :func:`demo_task` with
``generate(config, rng_key)`` and delete this file. It draws a customer who has a delivered
order and recent views, builds the environment's slots from real catalog rows (a viewed product
and its variant, an order, a category and price), renders the first message with
:func:`~shopgen.gen.render.render_first_message` (so slots are dropped with ``p_missing(d)``),
and writes the user script and episode in the documented formats. Its goal is empty: there is
no verifier yet, so playing it ends without a reward.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from shopgen.env.tools import env_tool_schemas
from shopgen.gen.difficulty import theta
from shopgen.gen.render import render_first_message
from shopgen.gen.seeding import stable_hash, stream
from shopgen.gen.slots import ENVS, slots
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import EpisodeSpec, ScriptSlot, UserScript

SYSTEM_PROMPT = (
    "You are the shopping assistant of an online store. Help the customer with the tools you "
    "are given: look products and orders up instead of guessing ids, ask the customer when "
    "something you need is missing, and finish with a short message once the request is done."
)
#: Customers tried before giving up (a world where no one has a delivered order is broken).
MAX_TRIES = 200
_REASONS = {
    "changed_mind": "I changed my mind",
    "defective": "it stopped working",
    "wrong_item": "it's not what I ordered",
    "damaged_in_transit": "it arrived damaged",
}


def _customer(store: CatalogStore, rng: np.random.Generator) -> tuple[dict, list, list]:
    """A customer with a delivered order and views: (user, orders, views newest first)."""
    users = store.read("users", columns=["user_id"])["user_id"]
    for _ in range(MAX_TRIES):
        uid = users[int(rng.integers(users.len()))]
        orders = store.orders_of(uid)
        views = [v for v in store.visits_of(uid) if v["event"] == "view"][::-1]
        if views and any(o["status"] == "delivered" for o in orders):
            return store.user(uid), orders, views
    raise ConfigError(f"no customer of catalog {store.root} has a delivered order and views")


def _short(title: str, words: int = 5) -> str:
    return " ".join(title.replace("{", "").replace("}", "").split()[:words])


def _values(
    env: str, store: CatalogStore, rng: np.random.Generator, orders: list, views: list, order: dict
) -> tuple[dict[str, Any], list[str]]:
    """The slot values and required names of a request in ``env`` drawn from real rows."""
    viewed = store.product(views[0]["product_id"])
    line = store.lines_of(order["order_id"])[0]
    bought = store.product(line["product_id"])
    cat_name = viewed["category_path"].split(">")[-1].strip().lower()
    budget = float(np.ceil(viewed["price"] * 1.2))
    match env:
        case "cart":
            values: dict[str, Any] = {"items.0.desc": _short(viewed["title"])}
            variants = store.variants_of(viewed["product_id"])
            if len(variants) > 1:
                chosen = variants[int(rng.integers(len(variants)))]
                for axis, value in chosen["attributes"].items():
                    values[f"items.0.variant.{axis}"] = str(value)
            values["items.0.qty"] = int(rng.integers(1, 4))
            values["items.0.seen"] = "recently"
            return values, ["items.0.desc"]
        case "returns":
            reason = list(_REASONS)[int(rng.integers(len(_REASONS)))]
            values = {
                "order_ref": order["order_id"],
                "order_date": order["placed_at"].strftime("%B %-d"),
                "item": _short(bought["title"]),
                "reason": _REASONS[reason],
                "action": "return",
            }
            return values, ["item"]
        case "status":
            latest = orders[-1]["order_id"]
            first_line = store.lines_of(latest)[0]
            values = {
                "order_ref": latest,
                "item": _short(store.product(first_line["product_id"])["title"]),
                "want": "tracking number",
            }
            return values, ["want"]
        case "policy":
            return {"topic": "the return window", "category": cat_name, "days": 12}, ["topic"]
        case "discovery":
            return {"category": cat_name, "price_max": budget, "brand": viewed["brand"]}, [
                "category"
            ]
        case "substitution":
            return {"product_title": _short(viewed["title"]), "price_max": budget}, [
                "product_title"
            ]
        case "bundle":
            return {"project": f"a {cat_name} setup", "budget": budget * 3}, ["project"]
        case "journey":
            values = {
                "steps.0.action": "buy",
                "steps.0.goal": _short(viewed["title"], 4),
                "steps.1.action": "return",
                "steps.1.goal": _short(bought["title"], 4),
                "steps.1.ref": order["order_id"],
            }
            return values, ["steps.0.action", "steps.0.goal", "steps.1.action", "steps.1.goal"]
    raise ConfigError(f"env={env!r} is not an environment ({', '.join(ENVS)})")


def demo_task(store: CatalogStore, *, env: str, d: int, seed: int = 0) -> dict[str, Any]:
    """A playable task row for ``env`` at difficulty ``d`` (see the module docstring).

    Raises:
        ConfigError: unknown env, or a catalog without a usable world.
    """
    if env not in ENVS:
        raise ConfigError(f"env={env!r} is not an environment ({', '.join(ENVS)})")
    axes = theta(d)
    rng = stream(seed, "play", env, d)
    user, orders, views = _customer(store, rng)
    delivered = [o for o in orders if o["status"] == "delivered"]
    target = delivered[int(rng.integers(len(delivered)))]
    values, required = _values(env, store, rng, orders, views, target)
    # The history shows H_orders orders: the target and the most recent others.
    shown = [target["order_id"]] + [
        o["order_id"] for o in orders[::-1] if o["order_id"] != target["order_id"]
    ]
    shown = shown[: max(1, axes.H_orders)]
    if env == "status":
        shown = [orders[-1]["order_id"], *[i for i in shown if i != orders[-1]["order_id"]]]
        shown = shown[: max(1, axes.H_orders)]
    goal_slots = slots(env, values, required=required)
    msg = render_first_message(env, goal_slots, d=d, rng=stream(seed, "play", env, d, "message"))
    dropped = set(msg.dropped)
    script_slots = [
        ScriptSlot(
            name=s.name, value=s.value, kind=s.kind, label=s.label, omitted=s.name in dropped
        )
        for s in goal_slots
    ]
    script_slots.append(
        ScriptSlot(name="tier", value=user["tier"], kind="choice", label="membership tier")
    )
    recent = [v["product_id"] for v in views[:5]]
    script = UserScript(
        style=msg.style,
        p_noise=axes.p_noise,
        slots=script_slots,
        never_say=sorted(
            {v["product_id"] for v in views} | {v["variant_id"] for v in views if v["variant_id"]}
        ),
    )
    episode = EpisodeSpec(
        user_id=user["user_id"],
        today=store.manifest.config.get("today"),
        visit_history=[
            {
                "product_id": pid,
                "title": store.product(pid)["title"],
                "viewed_at": v["ts"].isoformat(timespec="minutes"),
            }
            for pid, v in zip(recent, views[:5], strict=True)
        ],
        order_ids=shown,
    )
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": msg.text},
    ]
    body = {
        "env": env,
        "d": d,
        "theta": axes.to_dict(),
        "seed": seed,
        "messages": messages,
        "tools": json.dumps(env_tool_schemas(env)),
        "goal": "{}",
        "episode": episode.model_dump_json(exclude_none=True),
        "user_script": script.model_dump_json(),
        "oracle": "[]",
    }
    task_id = f"play-{stable_hash(json.dumps(body, sort_keys=True), bits=48):012x}"
    return {
        "task_id": task_id,
        **body,
        "shopgen_version": "play",
        "catalog_id": store.catalog_id,
        "verifier_version": "0",
    }
