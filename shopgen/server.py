"""An OpenEnv-style HTTP server for shopgen episodes (``shopgen serve``).

Endpoints (JSON; OpenEnv's reset / step / state / health / schema, with an ``episode_id`` so
many sessions share one server):

- ``POST /reset`` ``{seed?, episode_id?, task_id?, task?, env?, d?}`` → ``{episode_id,
  observation: {messages, tools}, reward: null, done: false}``. The task is, in order: the
  ``task`` row given; the ``task_id`` of a task in the loaded task datasets; task ``seed`` of
  ``env`` at level ``d`` made by :class:`~shopgen.taskgen.TaskFactory` (the same seed always
  gives the same task, so GRPO groups see one episode); or, with tasks loaded and only a seed,
  the task at a seed-keyed index.
- ``POST /step`` ``{episode_id, action: {message}}`` → ``{observation, reward, done, info}``.
- ``GET /state?episode_id=…`` → turn, done and the state summary (never the hidden goal).
- ``GET /health``, ``GET /schema`` (action, observation and state JSON schemas, tool schemas).

The catalog is opened once and shared; each session holds one :class:`ShopEnv` spawned from it.
Calls into the runtime run under one lock (its caches are plain dicts), so sessions interleave
per request. Sessions beyond ``max_sessions`` evict the least recently used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from shopgen.env.episode import EpisodeError, ShopEnv, TaskError
from shopgen.env.tools import REGISTRY
from shopgen.gen.seeding import stable_hash
from shopgen.schemas.errors import ShopgenError
from shopgen.schemas.task import TaskRow

try:
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel, Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "shopgen serve needs the server extra: pip install 'shopgen[server]'"
    ) from exc


class ResetRequest(BaseModel):
    """Which episode to start."""

    seed: int | None = Field(None, description="Task seed (with env and d, or a loaded task set).")
    episode_id: str | None = Field(
        None, description="Session id to use (made from the task if absent)."
    )
    task_id: str | None = Field(None, description="A task of the loaded task datasets.")
    task: dict[str, Any] | None = Field(None, description="A task row as read from a task dataset.")
    env: str | None = Field(None, description="Environment to generate a task of (with seed).")
    d: int = Field(0, ge=0, description="Difficulty of a generated task.")


class StepAction(BaseModel):
    """One assistant turn."""

    message: dict[str, Any] | str = Field(
        description="An OpenAI assistant message (content, tool_calls) or raw model text."
    )


class StepRequest(BaseModel):
    """A turn of one session."""

    episode_id: str = Field(description="The session from reset.")
    action: StepAction


class Sessions:
    """The server's state: the shared runtime, loaded tasks, and live sessions."""

    def __init__(self, catalog: Path, tasks: list[TaskRow], max_sessions: int) -> None:
        self.shop = ShopEnv(catalog)
        self.tasks = {t.task_id: t for t in tasks}
        self.order = sorted(self.tasks)
        self.max_sessions = max_sessions
        self.live: OrderedDict[str, ShopEnv] = OrderedDict()
        self.lock = threading.Lock()
        self._factory: Any = None

    def resolve(self, req: ResetRequest) -> TaskRow | dict[str, Any]:
        """The task a reset names (see the module docstring for the order)."""
        if req.task is not None:
            return req.task
        if req.task_id is not None:
            if req.task_id not in self.tasks:
                raise KeyError(f"no loaded task {req.task_id!r}")
            return self.tasks[req.task_id]
        if req.seed is None:
            raise KeyError("reset needs task, task_id, or seed (with env, or a loaded task set)")
        if req.env is not None:
            if self._factory is None:
                from shopgen.taskgen import TaskFactory

                self._factory = TaskFactory(self.shop, seed=0)
            return self._factory.make(req.env, req.d, req.seed).row
        if not self.order:
            raise KeyError("no tasks loaded: pass env with the seed, or start with --tasks")
        return self.tasks[self.order[stable_hash("serve", req.seed) % len(self.order)]]

    def reset(self, req: ResetRequest) -> dict[str, Any]:
        with self.lock:
            task = self.resolve(req)
            env = self.shop.spawn()
            obs = env.reset(task)
            tid = env.task.task_id
            episode_id = (
                req.episode_id
                or f"{tid}-{stable_hash('episode', tid, len(self.live), req.seed or 0) % 10**8:08d}"
            )
            self.live[episode_id] = env
            self.live.move_to_end(episode_id)
            while len(self.live) > self.max_sessions:
                self.live.popitem(last=False)
        return {"episode_id": episode_id, "observation": obs, "reward": None, "done": False}

    def step(self, req: StepRequest) -> dict[str, Any]:
        with self.lock:
            env = self._get(req.episode_id)
            obs, done, reward, info = env.step(req.action.message)
        return {"observation": obs, "reward": reward, "done": done, "info": info}

    def state(self, episode_id: str) -> dict[str, Any]:
        with self.lock:
            env = self._get(episode_id)
            return {
                "episode_id": episode_id,
                "task_id": env.task.task_id,
                "env": env.task.env,
                "turn": env.state.turns,
                "done": env.done,
                "state": env.state.summary(),
            }

    def _get(self, episode_id: str) -> ShopEnv:
        env = self.live.get(episode_id)
        if env is None:
            raise KeyError(f"no session {episode_id!r} (reset first; idle sessions are evicted)")
        self.live.move_to_end(episode_id)
        return env


def create_app(
    catalog: str | Path, *, tasks: list[TaskRow] | None = None, max_sessions: int = 4096
) -> FastAPI:
    """The FastAPI app serving ``catalog`` (and optionally a loaded task set)."""
    sessions = Sessions(Path(catalog), tasks or [], max_sessions)
    app = FastAPI(title="shopgen", description="OpenEnv-style shopping-agent environment")
    app.state.sessions = sessions

    def guarded(fn, *args):
        try:
            return fn(*args)
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None
        except (TaskError, EpisodeError, ShopgenError) as exc:
            raise HTTPException(400, str(exc)) from None

    @app.post("/reset")
    def reset(req: ResetRequest) -> dict[str, Any]:
        return guarded(sessions.reset, req)

    @app.post("/step")
    def step(req: StepRequest) -> dict[str, Any]:
        return guarded(sessions.step, req)

    @app.get("/state")
    def state(episode_id: str) -> dict[str, Any]:
        return guarded(sessions.state, episode_id)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "healthy",
            "catalog_id": sessions.shop.store.catalog_id,
            "sessions": len(sessions.live),
            "tasks": len(sessions.tasks),
        }

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return {
            "action": StepAction.model_json_schema(),
            "reset": ResetRequest.model_json_schema(),
            "observation": {
                "type": "object",
                "properties": {"messages": {"type": "array"}, "tools": {"type": "array"}},
            },
            "tools": {name: spec.schema for name, spec in sorted(REGISTRY.items())},
        }

    return app


__all__ = ["create_app"]
