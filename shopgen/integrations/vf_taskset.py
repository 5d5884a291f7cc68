"""shopgen as a ``verifiers`` ≥ 0.4 plugin (``verifiers.v1``): taskset, task, reward, harness.

``verifiers`` 0.4 loads an environment from an ``EnvConfig`` whose ``taskset.id`` names an
importable module exporting one ``Taskset`` subclass (and optionally one ``Harness``, which then
becomes the taskset's default harness). This module is that plugin; its id is
:data:`TASKSET_ID`:

- :class:`ShopgenTaskset` reads a ``shopgen export --format verifiers`` dataset (columns
  ``prompt``, ``answer``, ``info``, ``task``) into :class:`ShopgenTask` objects.
- :class:`ShopgenTask` scores a finished trace with shopgen's own verifier: its assistant turns
  are replayed through a fresh :class:`~shopgen.env.episode.ShopEnv` episode of the hidden task
  row (``info.task_row``), so ``T_max``, tool budgets and the verifier apply exactly as in
  ``shopgen score``; the trace's reward is the episode's reward.
- :class:`ShopgenHarness` is the in-process agent loop: it offers the row's tool schemas to
  the model through the library's interception endpoint (so every model call is recorded on
  the trace) and executes each tool call, customer reply and the episode end in a live
  ``ShopEnv``. It needs no container, no ``uv`` bootstrap and no network beyond the model.

Load it through :func:`shopgen.integrations.verifiers_env.load_environment`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import verifiers.v1 as vf
from openai import AsyncOpenAI
from pydantic import Field

from shopgen.env.episode import ShopEnv
from shopgen.verifiers.replay import play

#: The plugin id (what ``EnvConfig.taskset.id`` names). The library imports a plugin by a
#: flat module name (a dotted id is looked up under ``verifiers.v1.tasksets``), so importing
#: this module registers it under that name as well.
TASKSET_ID = "shopgen_verifiers"
sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])


@cache
def _shop(catalog: str) -> ShopEnv:
    """One loaded catalog per process; episodes are spawned from it."""
    return ShopEnv(catalog)


class ShopgenTaskData(vf.TaskData):
    """One export row: the public opening (``prompt``) plus the columns scoring reads."""

    answer: str = ""
    info: dict[str, Any] = Field(default_factory=dict)
    task: str = ""
    catalog: str = ""
    """The catalog the episode is played on (from the taskset config; read by the harness)."""


class ShopgenTaskConfig(vf.TaskConfig):
    """Run-time knobs of a task: the catalog its episodes are played on."""

    catalog: str = ""


class ShopgenTask(vf.Task[ShopgenTaskData, vf.State, ShopgenTaskConfig]):
    """A shopgen task; its reward is the verifier's reward of the trace's episode."""

    @property
    def key(self) -> str:
        """The task id: durable across exports of the same task dataset."""
        return self.data.answer or self.hash

    def row(self) -> dict[str, Any]:
        """The hidden task row the episode is reset from."""
        return json.loads(self.data.info["task_row"])

    def shop(self) -> ShopEnv:
        """A fresh episode environment on the configured catalog."""
        if not self.config.catalog:
            raise ValueError("ShopgenTaskConfig.catalog is unset (load_environment(catalog=…))")
        return _shop(self.config.catalog).spawn()

    @vf.reward
    async def shopgen_reward(self, trace: vf.Trace) -> dict[str, float]:
        """The episode's reward and correctness, replayed from the trace's assistant turns."""
        turns = [to_openai(m) for m in trace.messages if m.role == "assistant"]
        score, _ = play(self.shop(), self.row(), turns)
        if score is None:
            return {"shopgen_reward": 0.0, "shopgen_correct": 0.0}
        return {
            "shopgen_reward": float(score.reward),
            "shopgen_correct": float(bool(score.is_correct)),
        }


class ShopgenTasksetConfig(vf.TasksetConfig):
    """Where the export and its catalog are."""

    dataset_dir: str = ""
    task: ShopgenTaskConfig = ShopgenTaskConfig()


class ShopgenTaskset(vf.Taskset[ShopgenTask, ShopgenTasksetConfig]):
    """The rows of a shopgen ``verifiers`` export, one task each."""

    def load(self) -> Iterable[ShopgenTask]:
        """Read ``data/*.parquet`` in file order; the prompt is the row's public opening."""
        files = sorted(Path(self.config.dataset_dir).glob("data/*.parquet"))
        if not files:
            raise FileNotFoundError(f"no data/*.parquet under {self.config.dataset_dir!r}")
        for path in files:
            for row in pq.read_table(path).to_pylist():
                data = ShopgenTaskData(
                    id=row["answer"],
                    name=row["answer"],
                    prompt=row["prompt"],
                    answer=row["answer"],
                    info=row["info"],
                    task=row["task"],
                    catalog=self.config.task.catalog,
                )
                yield ShopgenTask(data, self.config.task)


def to_openai(message: Any) -> dict[str, Any]:
    """A ``verifiers`` assistant message as the OpenAI chat dict shopgen's episode reads."""
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for c in message.tool_calls or []
    ]
    out: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if calls:
        out["tool_calls"] = calls
    return out


def _assistant_dict(choice_message: Any) -> dict[str, Any]:
    """An OpenAI SDK response message as a plain chat dict."""
    out: dict[str, Any] = {"role": "assistant", "content": choice_message.content or ""}
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in choice_message.tool_calls or []
    ]
    if calls:
        out["tool_calls"] = calls
    return out


class ShopgenHarnessConfig(vf.HarnessConfig):
    """The in-process loop's knobs."""

    max_model_calls: int = 64


class ShopgenHarness(vf.Harness[ShopgenHarnessConfig]):
    """Chat loop in the eval process: model via the interception endpoint, tools via ShopEnv."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Play one episode: each model reply is one assistant turn of the shopgen episode."""
        if not isinstance(data, ShopgenTaskData):
            raise TypeError("ShopgenHarness plays shopgen tasks (ShopgenTaskset) only")
        if not data.catalog:
            raise ValueError("shopgen task has no catalog (load_environment(catalog=…))")
        shop = _shop(data.catalog).spawn()
        obs = shop.reset(json.loads(data.info["task_row"]))
        messages: list[dict[str, Any]] = list(obs["messages"])
        tools = json.loads(data.info["tools"])
        client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        try:
            for _ in range(self.config.max_model_calls):
                reply = await client.chat.completions.create(
                    model=ctx.model, messages=messages, tools=tools
                )
                message = _assistant_dict(reply.choices[0].message)
                messages.append(message)
                obs, done, _, _ = shop.step(message)
                if done:
                    return vf.ProgramResult(0, "episode done", "")
                messages.extend(obs["messages"])
        finally:
            await client.close()
        return vf.ProgramResult(0, "max_model_calls reached", "")


def env_config(dataset_dir: str | Path, catalog: str | Path) -> vf.EnvConfig:
    """The ``EnvConfig`` naming this plugin with ``dataset_dir`` and ``catalog``."""
    catalog = str(Path(catalog).resolve())
    taskset = ShopgenTasksetConfig(
        id=TASKSET_ID,
        dataset_dir=str(dataset_dir),
        task=ShopgenTaskConfig(catalog=catalog),
    )
    # The harness runs in this process and needs no box: the local subprocess runtime keeps
    # the interception server on 127.0.0.1 (the library's default, Prime, wants a tunnel).
    agent = vf.AgentConfig(runtime=vf.SubprocessConfig())
    return vf.SingleAgentEnvConfig(taskset=taskset, agent=agent)


__all__ = [
    "TASKSET_ID",
    "ShopgenHarness",
    "ShopgenTask",
    "ShopgenTaskData",
    "ShopgenTaskset",
    "env_config",
    "to_openai",
]
