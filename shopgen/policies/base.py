"""What a reference policy may see, and the loop that plays one through the runtime.

A real agent sees the system prompt, the customer's first message, the tool schemas, the tool
results and the customer's replies — nothing else. :class:`PublicTask` is exactly that view of a
task row, so a heuristic handed one *cannot* read the hidden goal, episode, user script or
oracle (``tests/policies/test_public_view.py`` pins it). :func:`play_agent` drives an agent
with the same generator protocol as an oracle (``shopgen.gen.tasks.base.Oracle``), sending it
the decoded results of each turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.env.verifier import Score
from shopgen.gen.tasks.base import Oracle
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import assistant_message, decode_result


@dataclass(frozen=True)
class PublicTask:
    """The agent-visible part of a task row.

    Attributes:
        task_id: the row's content hash (seeds the random policy; reveals nothing).
        env: the environment's name (the system prompt names the job anyway).
        system: the system prompt.
        user: the customer's first message.
        tools: names of the tools offered, in order.
    """

    task_id: str
    env: str
    system: str
    user: str
    tools: tuple[str, ...]

    @classmethod
    def from_row(cls, row: TaskRow) -> PublicTask:
        """The public view of ``row`` (copies strings only; keeps no reference to the row)."""
        system = next((m.content for m in row.messages if m.role == "system"), "")
        user = next((m.content for m in row.messages if m.role == "user"), "")
        tools = tuple(t["function"]["name"] for t in row.decoded("tools"))
        return cls(task_id=row.task_id, env=row.env, system=system, user=user, tools=tools)


Agent = Callable[[PublicTask], Oracle]


def play_agent(env: ShopEnv, row: TaskRow, agent: Agent) -> Score | None:
    """Play ``agent`` on ``row`` to the end of the episode; return the verifier's score.

    The agent receives only :meth:`PublicTask.from_row` and, after each turn, the decoded
    tool results and customer messages of that turn.
    """
    observation = env.reset(row)
    del observation  # the public view already holds what the agent is shown at reset
    turns = agent(PublicTask.from_row(row))
    info: dict[str, Any] = {}
    try:
        action = next(turns)
    except StopIteration:
        action = ""
    turn = 0
    while True:
        turn += 1
        observation, done, _, info = env.step(assistant_message(turn, action))
        if done or isinstance(action, str):
            break
        results = [decode_result(m) for m in observation.get("messages", [])]
        try:
            action = turns.send(results)
        except StopIteration:
            _, _, _, info = env.step({"role": "assistant", "content": ""})
            break
    score = info.get("score")
    return Score(**score) if score else None
