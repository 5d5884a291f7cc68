"""Tools about the customer: what they looked at recently."""

from __future__ import annotations

from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import tool


@tool("read")
def user_get_visit_history(ctx: ToolContext) -> dict[str, Any]:
    """Get the products this customer viewed recently, newest first, with when they viewed them."""
    visits = ctx.episode.get("visit_history") or []
    return {
        "visits": [
            {
                "product_id": v["product_id"],
                "title": v.get("title", ""),
                "viewed_at": v.get("viewed_at", ""),
            }
            for v in visits
        ]
    }
