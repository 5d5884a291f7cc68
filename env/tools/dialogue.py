"""Talking to the customer: ``ask_user`` answered by the simulated user (issue #6 §4)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, MaxChars, ToolError, encoded, tool
from shopgen.env.user import SimulatedUser, compile_script
from shopgen.schemas.errors import ConfigError

#: Longest question accepted (a question, not a document): stated in the schema, enforced by
#: the registry's validation (:class:`~shopgen.env.tools.registry.MaxChars`).
MAX_QUESTION_CHARS = 500


def customer(ctx: ToolContext) -> SimulatedUser:
    """The episode's simulated customer, made from the task's user script on first need."""
    if ctx.user is None:
        try:
            compiled = compile_script(ctx.task.user_script)
        except ConfigError as exc:
            raise ToolError(f"the customer cannot answer: {exc}", "unavailable") from None
        task = ctx.task
        opening = " ".join(m.content for m in task.messages if m.role == "user")
        ctx.user = SimulatedUser(compiled, task.env, task.seed, task.task_id, opening=opening)
    return ctx.user


@tool("read")
def ask_user(ctx: ToolContext, question: Annotated[str, MaxChars(MAX_QUESTION_CHARS)]) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Ask the customer a clarifying question; returns their reply.

    Args:
        question: one question for the customer (e.g. "Which colour and size would you like?").
    """
    if not question.strip():
        raise ToolError("question is empty; ask the customer something", "bad_arguments")
    user = customer(ctx)
    out = user.reply(question, ctx.state.turns)
    ctx.state.extra["questions"] = user.questions
    ctx.state.extra["revealed_slots"] = user.revealed
    return _reply_result(out["reply"])


@lru_cache(maxsize=8192)
def _reply_result(reply: str) -> Encoded:
    """``{"reply": reply}`` encoded once per text: a replayed episode hears the same replies."""
    return encoded({"reply": reply})
