"""verl adapter: the tool class, interaction class and ``compute_score`` its agent loop loads.

verl's multi-turn tool agent loop makes each tool from ``tool_config.yaml`` as
``class_name(config, tool_schema)`` and, per call, runs ``create(create_kwargs=…)`` →
``execute(instance_id, parameters, agent_data=…)`` → ``release(instance_id)``. One episode
must span every call of a trajectory, so sessions are kept per trajectory (verl's
``agent_data.request_id``, else the instance id) in a bounded process-wide table.

Each generation of the model is one assistant turn, as in every other way of playing: when
verl hands ``execute`` its ``agent_data`` (``assistant_turns`` and the generation's parsed
``tool_calls``), the first call of a generation plays all of its calls as one turn of the
episode, with the task's own ``B_tool`` and ``T_max``, and each call gets its own result; once
the episode has ended a call gets :data:`OVER`. (Without those fields each call is played as a
turn of its own, with ``T_max`` lifted, and the graded replay may differ from what the model
was shown.)

The reward is computed like ``shopgen score`` (DESIGN §8): :func:`compute_score` replays the
decoded response's assistant turns (Qwen3 ``<tool_call>`` text, split at the tool responses)
through a fresh episode of the task in ``ground_truth``. A model can write
``<tool_response>`` blocks itself, and once decoded they look like the real ones: a block
splits two turns only when it is the response the runtime gives to the turn before it
(:func:`verified_turns`), else it is text of the model's own turn. :class:`ShopgenInteraction`
scores the chat messages verl keeps when the model stops calling tools.

verl's defaults suit other tasks: one call per generation (``max_parallel_calls: 1``) and
tool responses cut to 256 characters (a page of search results is several thousand). Set
``actor_rollout_ref.rollout.multi_turn.max_parallel_calls`` to the tasks' ``B_tool``,
``max_assistant_turns`` to their ``T_max`` and ``max_tool_response_length`` to 16384 (the
README's verl section).

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
        shop = runtime(self.config.get("catalog"))  # takes the lock itself: not under it
        with _LOCK:
            session = _SESSIONS.get(key)
            if session is None:
                session = _Session(shop.spawn(), json.loads(self._tasks[instance_id]))
            text, errors = session.call(self.name, parameters, agent_data)
            _SESSIONS[key] = session
            _SESSIONS.move_to_end(key)
            while len(_SESSIONS) > _MAX_SESSIONS:
                _SESSIONS.popitem(last=False)
        return _response(text), 0.0, {"errors": errors}

    async def calc_reward(self, instance_id: str, **_: Any) -> float:
        """Tools give no step reward; the episode is scored at the end."""
        return 0.0

    async def release(self, instance_id: str, **_: Any) -> None:
        """Forget the instance (the trajectory's session lives until evicted)."""
        self._tasks.pop(instance_id, None)


def _response(text: str) -> Any:
    return _ToolResponse(text=text) if _ToolResponse is not None else {"text": text}


#: What a call gets once the episode has ended (``T_max`` reached): the model should answer.
OVER = json.dumps({"error": "episode_over", "message": "no more tool calls; answer the customer"})


class _Session:
    """One trajectory's episode, played a generation (or, without ``agent_data``, a call) a turn."""

    def __init__(self, env: ShopEnv, row: dict[str, Any]) -> None:
        self.env = env
        self.row = row
        self.generation: Any = None  # agent_data.assistant_turns of the turn last played
        self.pending: list[tuple[str, Any, str]] = []  # its calls not yet answered, with results
        self.errors = 0
        self.calls = 0
        self.per_call = False
        env.reset(row)

    def call(self, name: str, parameters: dict[str, Any], agent_data: Any) -> tuple[str, int]:
        """The response to one call, and the errors of the turn that ran it."""
        generation = getattr(agent_data, "assistant_turns", None)
        calls = _generation_calls(agent_data)
        if generation is None or calls is None:
            return self._call_alone(name, parameters)
        if generation != self.generation:
            self.generation = generation
            self._play(calls)
        for i, (called, arguments, text) in enumerate(self.pending):
            if called == name and arguments == parameters:
                del self.pending[i]
                return text, self.errors
        # A call verl runs that was not among the generation's parsed calls: its own turn.
        return self._call_alone(name, parameters)

    def _play(self, calls: list[tuple[str, str]]) -> None:
        """Play one generation's calls as one turn and keep each call's response."""
        if self.env.done:
            self.pending = [(n, _arguments(a), OVER) for n, a in calls]
            self.errors = 0
            return
        message = _message([(n, a) for n, a in calls], self.calls)
        self.calls += len(calls)
        observation, _, _, info = self.env.step(message)
        texts = response_texts(observation["messages"])
        self.pending = [
            (n, _arguments(a), texts[i] if i < len(texts) else OVER)
            for i, (n, a) in enumerate(calls)
        ]
        self.errors = len(info["errors"])

    def _call_alone(self, name: str, parameters: dict[str, Any]) -> tuple[str, int]:
        """One call as a turn of its own, ``T_max`` lifted (verl without ``agent_data``)."""
        if not self.per_call:  # the task's T_max counts generations, which are unknown here
            self.per_call = True
            theta = self.row["theta"]
            theta = theta if isinstance(theta, dict) else json.loads(theta)
            self.env.reset({**self.row, "theta": {**theta, "T_max": 10_000}})
        if self.env.done:
            return OVER, 0
        message = _message([(name, json.dumps(parameters))], self.calls)
        self.calls += 1
        observation, _, _, info = self.env.step(message)
        return "\n".join(response_texts(observation["messages"])), len(info["errors"])


def _generation_calls(agent_data: Any) -> list[tuple[str, str]] | None:
    """The (name, JSON arguments) of the calls verl parsed from the current generation."""
    calls = getattr(agent_data, "tool_calls", None)
    if not isinstance(calls, list) or not calls:
        return None
    out = []
    for c in calls:
        name = getattr(c, "name", None) or (c.get("name") if isinstance(c, dict) else None)
        arguments = getattr(c, "arguments", None)
        if arguments is None and isinstance(c, dict):
            arguments = c.get("arguments")
        if not isinstance(name, str):
            return None
        out.append((name, arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return out


def _arguments(text: str) -> Any:
    """Parsed arguments as verl hands them to ``execute`` (the text itself if not JSON)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _message(calls: list[tuple[str, str]], before: int) -> dict[str, Any]:
    """An assistant message making ``calls`` (ids numbered on from ``before``)."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{before + i + 1}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def response_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text of each call's response in a turn's results, as the model is shown it.

    One per tool result, in call order; a customer's line said after the turn (a change of
    mind) is added to the first. :func:`verified_turns` checks decoded responses against
    these, so the live tool and the reward agree on what a genuine response is.
    """
    texts = [m["content"] for m in messages if m.get("role") == "tool"]
    said = [m["content"] for m in messages if m.get("role") == "user"]
    if said:
        texts = ["\n".join([texts[0] if texts else "", *said]), *texts[1:]]
    return texts


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


_TOOL_RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)
_CHAT_MARK = re.compile(r"<\|im_(?:start|end)\|>(?:user|assistant|tool|system)?")
#: What may stand between two responses of one turn (chat markers, or their role words once
#: verl has decoded the response without its special tokens).
_BETWEEN = re.compile(r"(?:\s|<\|im_(?:start|end)\|>|\b(?:user|tool)\b)*")
_CALL = re.compile(r"<tool_call>")
#: verl's mark where it cut a long tool response (``max_tool_response_length``).
_CUT = re.compile(r"\.{0,3}\(truncated\)\.{0,3}")


def response_turns(solution_str: str) -> list[dict[str, str]]:
    """The assistant turns of a decoded multi-turn response (Qwen3 chat format), unverified.

    Tool responses and chat-template markers separate the turns; each remaining non-empty
    stretch of text is one assistant message (with its ``<tool_call>`` blocks). Scoring uses
    :func:`verified_turns`, which keeps only the separators the runtime produced.
    """
    return [_turn(piece) for piece in _TOOL_RESPONSE.split(solution_str)[::2] if _text(piece)]


def _text(piece: str) -> str:
    return _CHAT_MARK.sub("\n", piece).strip()


def _turn(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": _text(text)}


def _groups(solution_str: str) -> tuple[str, list[tuple[list[str], str, str]]]:
    """The text before the first tool response, and each run of responses after it.

    A run is its responses' texts, the run as written and the text that follows it.
    """
    parts = _TOOL_RESPONSE.split(solution_str)
    head, groups = parts[0], []
    run: list[str] = []
    raw = ""
    for i in range(1, len(parts), 2):
        run.append(parts[i])
        raw += f"<tool_response>{parts[i]}</tool_response>"
        after = parts[i + 1]
        if i + 2 < len(parts) and _BETWEEN.fullmatch(after):
            raw += after
            continue
        groups.append((run, raw, after))
        run, raw = [], ""
    return head, groups


def _same_response(shown: str, expected: str) -> bool:
    """``shown`` is ``expected``, or ``expected`` cut by verl where it marks the cut."""
    shown, expected = shown.strip(), expected.strip()
    if shown == expected:
        return True
    cut = _CUT.search(shown)
    if cut is None:
        return False
    head, tail = shown[: cut.start()], shown[cut.end() :]
    return (
        len(head) + len(tail) < len(expected)
        and expected.startswith(head)
        and expected.endswith(tail)
        and len(head) + len(tail) >= min(32, len(expected) - 1)
    )


def verified_turns(env: ShopEnv, task: Any, solution_str: str) -> list[dict[str, str]]:
    """The assistant turns of a decoded response, split only at genuine tool responses.

    Each run of ``<tool_response>`` blocks after a turn that called tools is compared with
    what the runtime answers that turn (:func:`response_texts`; verl runs at most
    ``max_parallel_calls`` of a turn's calls, so the blocks may be the first few); a run that
    is not that answer was written by the model, and is text of its turn: replayed as
    one turn, its calls share one turn's budget and none of them saw the others' results.

    The turns are played on ``env`` as they are checked, to the episode's end as
    :func:`~shopgen.verifiers.replay.play` plays them, so its score is ``env.final_score()``.
    """
    head, groups = _groups(solution_str)
    turns: list[dict[str, str]] = []
    pending = head
    env.reset(task)
    for run, raw, after in groups:
        turn = _turn(pending)
        if _CALL.search(turn["content"]):
            observation, done, _, _ = env.step(turn)
            expected = response_texts(observation["messages"])
            if len(run) <= len(expected) and all(
                _same_response(shown, want) for shown, want in zip(run, expected, strict=False)
            ):
                turns.append(turn)
                if done:
                    return turns
                pending = after
                continue
            env.reset(task)  # the turn was played: play the ones kept again, without it
            for kept in turns:
                env.step(kept)
        pending = pending + raw + after
    if _text(pending):
        turns.append(_turn(pending))
        if env.advance(turns[-1]):
            return turns
    env.advance({"role": "assistant", "content": ""})  # the agent stopped talking
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
    env = runtime(catalog).spawn()
    verified_turns(env, json.loads(ground_truth), solution_str)
    score = env.final_score()
    result = score.to_dict() if score else {"reward": 0.0}
    return {
        "score": float(result["reward"] or 0.0),
        **{k: float(v) for k, v in result.items() if isinstance(v, int | float) and k != "reward"},
    }


__all__ = [
    "OVER",
    "ShopgenInteraction",
    "ShopgenTool",
    "compute_score",
    "response_texts",
    "response_turns",
    "runtime",
    "verified_turns",
]
