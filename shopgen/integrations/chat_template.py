"""Shopgen conversations through a real chat template, and back out as raw model text.

A trainer never hands shopgen the OpenAI dicts a task row stores: it renders the conversation
with the model's chat template, the model writes text in that template's syntax, and the text
is parsed back (by TRL's response parser or by shopgen's own :mod:`shopgen.env.parsing`). These
helpers do the first and last legs with the template a client really ships (issue #7, "Test the
format with a real client"): :func:`oracle_conversation` is the full conversation an oracle
has with the runtime, :func:`render` runs it through a Jinja chat template exactly as
``transformers`` does, and :func:`assistant_texts` cuts the raw assistant turns back out of the
rendered text, so a test can replay them through ``ShopEnv.step`` as model output.

Transformers is imported only when :func:`render` runs: it is an optional dependency (the
``trl`` extra).
"""

from __future__ import annotations

import json
import re
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.exports.sft import transcript
from shopgen.schemas.task import TaskRow

#: One assistant turn in ChatML (Qwen2.5/Qwen3): everything the model wrote before ``<|im_end|>``.
ASSISTANT_TURN = re.compile(r"<\|im_start\|>assistant\n(.*?)<\|im_end\|>", re.DOTALL)


def oracle_conversation(
    env: ShopEnv, task: TaskRow, *, dict_arguments: bool = True
) -> list[dict[str, Any]]:
    """The oracle's whole conversation on ``task``: opening, calls, tool results, customer lines.

    Tool results and customer replies are the runtime's own (the oracle is replayed, as for the
    ``sft`` export).

    Args:
        env: a runtime on the task's catalog.
        task: the task whose stored oracle to play.
        dict_arguments: give tool-call arguments as dicts, which is what a response parser
            (TRL's, vLLM's) hands back and what templates serialise with ``tojson``; False keeps
            the stored JSON strings, which templates paste verbatim.

    Raises:
        DatasetError: the oracle does not replay to a correct episode.
    """
    messages, _ = transcript(env, task)
    out = []
    for m in messages:
        message: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("name"):
            message["name"] = m["name"]
        if m.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "type": "function",
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": json.loads(c["function"]["arguments"])
                        if dict_arguments
                        else c["function"]["arguments"],
                    },
                }
                for c in m["tool_calls"]
            ]
        out.append(message)
    return out


def render(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    chat_template: str,
    *,
    add_generation_prompt: bool = False,
) -> str:
    """``messages`` and ``tools`` rendered by ``chat_template`` the way ``transformers`` does it.

    Uses ``transformers.utils.chat_template_utils.render_jinja_template``, the function behind
    ``tokenizer.apply_chat_template``, so the Jinja environment (``tojson``, loop controls,
    ``raise_exception``) is the one real clients run.
    """
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages],
        tools=tools,
        chat_template=chat_template,
        add_generation_prompt=add_generation_prompt,
    )
    return rendered[0]


def assistant_texts(rendered: str) -> list[str]:
    """The raw text of every assistant turn in a ChatML rendering, in order.

    Each is what a model writes for that turn (reasoning block, content, ``<tool_call>``
    blocks) without the closing ``<|im_end|>``: exactly what ``ShopEnv.step`` receives from a
    trainer that passes completions through unparsed.
    """
    return ASSISTANT_TURN.findall(rendered)


__all__ = ["ASSISTANT_TURN", "assistant_texts", "oracle_conversation", "render"]
