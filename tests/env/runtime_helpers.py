"""Task rows and messages built by hand for runtime tests."""

from __future__ import annotations

import json
from typing import Any

from shopgen.env.tools import env_tool_schemas
from shopgen.gen.difficulty import theta
from shopgen.gen.store import CatalogStore


def make_row(
    store: CatalogStore,
    *,
    env: str = "cart",
    d: int = 3,
    episode: dict | None = None,
    task_id: str = "t0",
    catalog_id: str | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """A task row shaped exactly as pyarrow's to_pylist() gives it back."""
    return {
        "task_id": task_id,
        "env": env,
        "d": d,
        "theta": theta(d, **overrides).to_dict(),
        "seed": 0,
        "messages": [
            {"role": "system", "content": "You are a shopping assistant."},
            {"role": "user", "content": "hi, can you help me with my cart"},
        ],
        "tools": json.dumps(env_tool_schemas(env)),
        "goal": "{}",
        "episode": json.dumps(episode or {}),
        "user_script": "{}",
        "oracle": "[]",
        "shopgen_version": "0.1.0",
        "catalog_id": catalog_id or store.catalog_id,
        "verifier_version": "0",
    }


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """An OpenAI-style assistant message with one call."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"c_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def result(obs: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return json.loads(obs["messages"][i]["content"])


def reference_facts(product: dict[str, Any], stock: int) -> dict[str, Any]:
    """A recommended product's graded facts as read from its whole record (the plain way)."""
    return {
        "category_id": product["category_id"],
        "title": product["title"],
        "price": float(product["price"]),
        "rating": float(product["rating"]),
        "ship_days": int(product["ship_days"]),
        "brand": product["brand"],
        "attributes": dict(product["attributes"]),
        "stock_qty": stock,
    }
