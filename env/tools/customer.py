"""Tools about the customer: what they looked at recently."""

from __future__ import annotations

from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, encoded, tool


@tool("read")
def user_get_visit_history(ctx: ToolContext) -> Encoded:
    """Get the products this customer viewed recently, newest first, with when they viewed them."""
    # A pure function of the episode, which the runtime decodes once per row and shares
    # read-only between its episodes: remembered per episode object (held with the result,
    # so its id stays its own), a replay neither rebuilds nor re-encodes the visits.
    episode = ctx.episode
    key = ("user_get_visit_history", id(episode))
    hit = ctx.memo.get(key)
    if hit is None or hit[0] is not episode:
        hit = ctx.memo.put(key, (episode, encoded(_visit_history(episode))))
    return hit[1]


def _visit_history(episode: dict[str, Any]) -> dict[str, Any]:
    """The tool's result for an episode: its ``visit_history``, each visit's three fields."""
    visits = episode.get("visit_history") or []
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
