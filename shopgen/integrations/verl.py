"""verl adapter: the tool class, interaction class and ``compute_score`` its agent loop loads.

verl's multi-turn tool agent loop makes each tool from ``tool_config.yaml`` as
``class_name(config, tool_schema)`` and, per call, runs ``create(create_kwargs=…)`` →
``execute(instance_id, parameters, agent_data=…)`` → ``release(instance_id)``. One episode
must span every call of a trajectory, so sessions are kept per trajectory (verl's
``agent_data.request_id``, else the instance id) in a bounded process-wide table.

The reward is computed like ``shopgen score`` (DESIGN §8): :func:`compute_score` replays the
decoded response's assistant turns (Qwen3 ``<tool_call>`` text, split at the tool responses)
through a fresh episode of the task in ``ground_truth``. :class:`ShopgenInteraction` scores the
chat messages verl keeps when the model stops calling tools.

A verl run loads one ``tool_config.yaml`` and shows all of it to every prompt, so an export of
several environments comes as one folder per environment (``shopgen.exports.verl``): train on
one folder per run, pointing ``multi_turn.tool_config_path`` at that folder's config.

Without verl installed the classes still work (tests drive them with ``asyncio``); with it,
``ShopgenTool`` subclasses ``verl.tools.base_tool.BaseTool`` and returns ``ToolResponse``.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from typing import Any
from uuid import uuid4

from shopgen.env.episode import ShopEnv
from shopgen.verifiers.replay import play

try:  # pragma: no cover - verl is optional and heavy
    from verl.tools.base_tool import BaseTool as _ToolBase
    from verl.tools.schemas import ToolResponse as _ToolResponse
except ImportError:  # the adapter stands alone
    _ToolBase = object
    _ToolResponse = None

try:  # pragma: no cover
    from verl.interactions.base import BaseInteraction as _InteractionBase
except ImportError:
    _InteractionBase = object

_MAX_SESSIONS = 8192
_LOCK = threading.Lock()
_RUNTIMES: dict[str, ShopEnv] = {}
_SESSIONS: OrderedDict[str, tuple[ShopEnv, int]] = OrderedDict()


def runtime(catalog: str | None) -> ShopEnv:
    """The process's ShopEnv on ``catalog`` (``SHOPGEN_CATALOG`` when None), opened once."""
    where = catalog or os.environ.get("SHOPGEN_CATALOG")
    if not where:
        raise ValueError("no catalog: set config.catalog in the verl YAML or SHOPGEN_CATALOG")
    with _LOCK:
        if where not in _RUNTIMES:
            _RUNTIMES[where] = ShopEnv(where)
        return _RUNTIMES[where]


def _session_key(instance_id: str, agent_data: Any) -> str:
    return str(getattr(agent_data, "request_id", None) or instance_id)


class ShopgenTool(_ToolBase):  # type: ignore[misc, valid-type]
    """Every shopgen tool, one instance per tool schema of the YAML (verl's ``BaseTool``)."""

    def __init__(self, config: dict[str, Any], tool_schema: Any) -> None:
        self.config = dict(config or {})
        self.tool_schema = tool_schema
        function = getattr(tool_schema, "function", None) or tool_schema["function"]
        self.name = getattr(function, "name", None) or function["name"]
        self._tasks: dict[str, str] = {}

    def get_openai_tool_schema(self) -> Any:
        """The schema verl renders for the model."""
        return self.tool_schema

    async def create(
        self, instance_id: str | None = None, create_kwargs: dict[str, Any] | None = None, **_: Any
    ) -> tuple[str, Any]:
        """Note the trajectory's task (``create_kwargs.task``, the row as JSON)."""
        instance_id = instance_id or str(uuid4())
        task = (create_kwargs or {}).get("task")
        if task is None:
            raise ValueError("shopgen tools need tools_kwargs.<tool>.create_kwargs.task")
        self._tasks[instance_id] = task
        return instance_id, _response("")

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], agent_data: Any = None, **_: Any
    ) -> tuple[Any, float, dict[str, Any]]:
        """Run one call in the trajectory's episode; ``(response, 0.0, metrics)``."""
        key = _session_key(instance_id, agent_data)
        with _LOCK:
            entry = _SESSIONS.get(key)
        if entry is None:
            env = runtime(self.config.get("catalog")).spawn()
            row = json.loads(self._tasks[instance_id])
            theta = row["theta"] if isinstance(row["theta"], dict) else json.loads(row["theta"])
            env.reset({**row, "theta": {**theta, "T_max": 10_000}})  # the replay applies T_max
            entry = (env, 0)
        env, calls = entry
        calls += 1
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{calls}",
                    "type": "function",
                    "function": {"name": self.name, "arguments": json.dumps(parameters)},
                }
            ],
        }
        with _LOCK:
            obs, _, _, info = env.step(message)
            _SESSIONS[key] = (env, calls)
            _SESSIONS.move_to_end(key)
            while len(_SESSIONS) > _MAX_SESSIONS:
                _SESSIONS.popitem(last=False)
        text = "\n".join(m["content"] for m in obs["messages"])
        return _response(text), 0.0, {"errors": len(info["errors"])}

    async def calc_reward(self, instance_id: str, **_: Any) -> float:
        """Tools give no step reward; the episode is scored at the end."""
        return 0.0

    async def release(self, instance_id: str, **_: Any) -> None:
        """Forget the instance (the trajectory's session lives until evicted)."""
        self._tasks.pop(instance_id, None)


def _response(text: str) -> Any:
    return _ToolResponse(text=text) if _ToolResponse is not None else {"text": text}


class ShopgenInteraction(_InteractionBase):  # type: ignore[misc, valid-type]
    """verl interaction: when the model answers without a tool call, score the conversation."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = dict(config or {})
        self.name = self.config.get("name", "shopgen")
        self._tasks: dict[str, str] = {}

    async def start_interaction(
        self, instance_id: str | None = None, task: str | None = None, **_: Any
    ) -> str:
        """Note the task (``interaction_kwargs.task``)."""
        instance_id = instance_id or str(uuid4())
        if task is None:
            raise ValueError("shopgen interaction needs interaction_kwargs.task")
        self._tasks[instance_id] = task
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **_: Any
    ) -> tuple[bool, str, float, dict[str, Any]]:
        """End the episode: replay the assistant turns, return the verifier's reward."""
        turns = [m for m in messages if m.get("role") == "assistant"]
        score, _ = play(
            runtime(self.config.get("catalog")).spawn(), json.loads(self._tasks[instance_id]), turns
        )
        result = score.to_dict() if score else {"reward": 0.0}
        return True, "", float(result["reward"] or 0.0), result

    async def calculate_score(self, instance_id: str, **_: Any) -> float:
        """Scores come from :meth:`generate_response`."""
        return 0.0

    async def finalize_interaction(self, instance_id: str, **_: Any) -> None:
        """Forget the instance."""
        self._tasks.pop(instance_id, None)


_TOOL_RESPONSE = re.compile(r"<tool_response>.*?</tool_response>", re.DOTALL)
_CHAT_MARK = re.compile(r"<\|im_(?:start|end)\|>(?:user|assistant|tool|system)?")


def response_turns(solution_str: str) -> list[dict[str, str]]:
    """The assistant turns of a decoded multi-turn response (Qwen3 chat format).

    Tool responses and chat-template markers separate the turns; each remaining non-empty
    stretch of text is one assistant message (with its ``<tool_call>`` blocks).
    """
    pieces = _TOOL_RESPONSE.split(solution_str)
    turns = []
    for piece in pieces:
        text = _CHAT_MARK.sub("\n", piece).strip()
        if text:
            turns.append({"role": "assistant", "content": text})
    return turns


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: dict[str, Any] | None = None,
    catalog: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Verl reward function: replay the response on the task in ``ground_truth``.

    Returns verl's dict form: ``score`` (the reward) plus the reward parts for logging.
    """
    score, _ = play(
        runtime(catalog).spawn(), json.loads(ground_truth), response_turns(solution_str)
    )
    result = score.to_dict() if score else {"reward": 0.0}
    return {
        "score": float(result["reward"] or 0.0),
        **{k: float(v) for k, v in result.items() if isinstance(v, int | float) and k != "reward"},
    }


__all__ = ["ShopgenInteraction", "ShopgenTool", "compute_score", "response_turns", "runtime"]
