"""Tools about the customer: what they looked at recently."""

from __future__ import annotations

from datetime import date
from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, encoded, tool
from shopgen.gen.tasks.base import episode_now


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
        today = episode.get("today") or ctx.store.manifest.config.get("today")
        hit = ctx.memo.put(key, (episode, encoded(_visit_history(episode, today))))
    return hit[1]


def _visit_history(episode: dict[str, Any], today: Any) -> dict[str, Any]:
    """The tool's result for an episode: the time now, and each visit's three fields.

    ``now`` (the episode's clock, :func:`~shopgen.gen.tasks.base.episode_now`) is what
    "yesterday" or "this morning" counts from: without it the ``viewed_at`` times could not
    tell "the lamp I looked at yesterday" from one viewed last week. A world without a
    ``today`` (hand-made test stores) has no clock to show.
    """
    visits = episode.get("visit_history") or []
    clock = {}
    if today:
        now = episode_now(date.fromisoformat(str(today)))
        clock["now"] = now.isoformat(timespec="minutes")
    return {
        **clock,
        "visits": [
            {
                "product_id": v["product_id"],
                "title": v.get("title", ""),
                "viewed_at": v.get("viewed_at", ""),
            }
            for v in visits
        ],
    }
