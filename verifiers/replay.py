"""Replaying assistant messages through the runtime: how oracles are proven and trajectories scored.

Only the assistant's messages are replayed; tool results and customer replies are produced
again by the runtime, so a stored transcript cannot fake state (DESIGN §8).
"""

from __future__ import annotations

from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow

#: What ends an episode whose messages ran out while it was still going: the agent said nothing.
_SILENCE = {"role": "assistant", "content": ""}


def assistant_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The assistant turns of a stored conversation (everything else is regenerated)."""
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]


def play(
    env: ShopEnv, task: TaskRow | dict[str, Any], messages: list[Any]
) -> tuple[Score | None, EpisodeState]:
    """Play ``messages`` (assistant turns) on ``task``; return the final score and state.

    Turns after the episode ended are ignored; if the messages run out first, the episode ends
    as if the agent had stopped talking. The turns are played with :meth:`ShopEnv.advance`:
    the state, transcript and score are :meth:`ShopEnv.step`'s, without the observations and
    infos nobody reads here.
    """
    env.reset(task)
    for message in messages:
        if env.advance(message):
            break
    else:
        env.advance(_SILENCE)
    return env.final_score(), env.state
