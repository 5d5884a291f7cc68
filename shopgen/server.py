"""An OpenEnv-style HTTP server for shopgen episodes (``shopgen serve``).

Endpoints (JSON; OpenEnv's reset / step / state / health / schema, with an ``episode_id`` so
many sessions share one server):

- ``POST /reset`` ``{seed?, episode_id?, task_id?, task?, env?, d?}`` → ``{episode_id,
  observation: {messages, tools}, reward: null, done: false}``. The task is, in order: the
  ``task`` row given; the ``task_id`` of a task in the loaded task datasets; task ``seed`` of
  ``env`` at level ``d`` made by :class:`~shopgen.taskgen.TaskFactory` (the same seed always
  gives the same task, so GRPO groups see one episode); or, with tasks loaded and only a seed,
  the task at a seed-keyed index. Without ``episode_id`` the server makes a fresh one
  (``<task_id>-<server tag>-<counter>``, unique per server); a client-given id that a live
  session holds is refused with 409, never replaced (a finished session's id may be reused).
- ``POST /step`` ``{episode_id, action: {message}}`` → ``{observation, reward, done, info}``.
- ``GET /state?episode_id=…`` → turn, done and the state summary (never the hidden goal).
- ``POST /close`` ``{episode_id}`` → ``{episode_id, closed: true}``: release a session (the
  shape of OpenEnv's ``openenv/session/close``).
- ``GET /health`` (session counts: live, finished, evicted), ``GET /schema`` (action,
  observation and state JSON schemas, tool schemas).

Errors: 404 for an unknown task or session (saying whether it was closed or evicted), 409 for a
live ``episode_id``, 400 for a bad task or a step after the end.

The catalog is opened once and shared; each session holds one :class:`ShopEnv` spawned from it.
Calls into the runtime run under one lock (its caches are plain dicts), so sessions interleave
per request. At most ``max_sessions`` are held, live and finished together; at the cap a reset
evicts the oldest finished session, else the least recently used live one (see
:meth:`Sessions._make_room` for why eviction rather than refusal).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import REGISTRY
from shopgen.gen.seeding import stable_hash
from shopgen.schemas.errors import ShopgenError
from shopgen.schemas.task import TaskRow

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
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


class SessionConflict(ShopgenError):
    """A reset named an ``episode_id`` that a live session already holds (HTTP 409)."""


class NotFound(ShopgenError):
    """A request names a session or loaded task the server does not hold (HTTP 404).

    Its own class, not ``KeyError``: a ``KeyError`` raised inside an episode is a fault of the
    task or of shopgen, and must not read to the client as "no such session".
    """


def _check_text(value: Any, where: str) -> None:
    r"""Refuse a request whose text holds a lone surrogate ("\ud800"): it is no Unicode.

    JSON can escape one, Python decodes it, and the episode would run on it until its response
    could not be encoded: the state changed and the client got a bare 500.
    """
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            raise ShopgenError(f"{where} holds a lone surrogate: not valid Unicode") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, where)
            _check_text(item, where)
    elif isinstance(value, list):
        for item in value:
            _check_text(item, where)


#: How many ended (closed or evicted) ids the server remembers, to say why one is unknown.
_GONE_MEMORY = 4096


class Sessions:
    """The server's state: the shared runtime, loaded tasks, and the session table.

    Sessions are *live* until their episode ends, then *finished* (kept so ``/state`` can
    still read the end), until closed or evicted. ``max_sessions`` bounds both together; at the
    cap a reset evicts the oldest finished session, else the least recently used live one.

    Args:
        catalog: the catalog every session plays on.
        tasks: the loaded task datasets' rows (``reset(task_id=…)`` names them).
        max_sessions: the cap on held sessions (live and finished).
        instance: the tag that server-made episode ids carry; random when None (see
            :meth:`new_id`).
    """

    def __init__(
        self,
        catalog: Path,
        tasks: list[TaskRow],
        max_sessions: int,
        *,
        instance: str | None = None,
    ) -> None:
        self.shop = ShopEnv(catalog)
        self.tasks = {t.task_id: t for t in tasks}
        self.order = sorted(self.tasks)
        self.max_sessions = max_sessions
        self.instance = instance if instance is not None else secrets.token_hex(4)
        self.live: OrderedDict[str, ShopEnv] = OrderedDict()  # least recently used first
        self.finished: OrderedDict[str, ShopEnv] = OrderedDict()  # first finished first
        self.gone: OrderedDict[str, str] = OrderedDict()  # ended id → "closed" / "evicted"
        self.made = 0
        self.evicted = 0
        self.lock = threading.Lock()
        self._factory: Any = None

    def ids(self) -> list[str]:
        """The held session ids: finished ones (oldest first), then live ones (LRU first)."""
        return [*self.finished, *self.live]

    def resolve(self, req: ResetRequest) -> TaskRow | dict[str, Any]:
        """The task a reset names (see the module docstring for the order)."""
        if req.task is not None:
            return req.task
        if req.task_id is not None:
            if req.task_id not in self.tasks:
                raise NotFound(f"no loaded task {req.task_id!r}")
            return self.tasks[req.task_id]
        if req.seed is None:
            raise NotFound("reset needs task, task_id, or seed (with env, or a loaded task set)")
        if req.env is not None:
            if self._factory is None:
                from shopgen.taskgen import TaskFactory

                self._factory = TaskFactory(self.shop, seed=0)
            return self._factory.make(req.env, req.d, req.seed).row
        if not self.order:
            raise NotFound("no tasks loaded: pass env with the seed, or start with --tasks")
        return self.tasks[self.order[stable_hash("serve", req.seed) % len(self.order)]]

    def new_id(self, task_id: str) -> str:
        """A fresh id: the task, this server's instance tag and a per-server counter.

        The counter makes ids unique within the server by construction (a GRPO group of one
        task and seed gets as many ids as resets, whatever the table holds). The instance tag
        is random per server process, not seeded: an id is a handle, not data, and nothing
        is drawn from it, so episodes stay reproducible; the tag only keeps a client that
        outlived a restart from stepping a stranger's session under a recycled counter.
        """
        while True:
            self.made += 1
            episode_id = f"{task_id}-{self.instance}-{self.made:06d}"
            if episode_id not in self.live and episode_id not in self.finished:
                return episode_id

    def reset(self, req: ResetRequest) -> dict[str, Any]:
        """Start a session; a client id that a live session holds is refused, never replaced."""
        with self.lock:
            if req.episode_id is not None and req.episode_id in self.live:
                raise SessionConflict(
                    f"episode_id {req.episode_id!r} is a live session: step it to the end, "
                    "close it, or reset without an episode_id to get a fresh one"
                )
            task = self.resolve(req)
            env = self.shop.spawn()
            obs = env.reset(task)
            episode_id = req.episode_id or self.new_id(env.task.task_id)
            self.finished.pop(episode_id, None)  # a finished session's id may start anew
            self.gone.pop(episode_id, None)
            self._make_room()
            self.live[episode_id] = env
        return {"episode_id": episode_id, "observation": obs, "reward": None, "done": False}

    def _make_room(self) -> None:
        """Evict until one more session fits: finished ones first, then the least recently used.

        At the cap a reset evicts rather than refuses: a trainer that truncates a rollout
        (turn or length limit) never ends or closes its session, and refusal would wedge the
        server once ``max_sessions`` such rollouts piled up. With a cap well above the
        rollouts in flight, the least recently used live session is an abandoned one; a step
        on an evicted id gets a 404 that says it was evicted.
        """
        while len(self.live) + len(self.finished) >= self.max_sessions:
            table = self.finished if self.finished else self.live
            episode_id, _ = table.popitem(last=False)
            self._forget(episode_id, "evicted")
            self.evicted += 1

    def _forget(self, episode_id: str, why: str) -> None:
        self.gone[episode_id] = why
        while len(self.gone) > _GONE_MEMORY:
            self.gone.popitem(last=False)

    def step(self, req: StepRequest) -> dict[str, Any]:
        """Play one turn of a session; an episode that ends moves to the finished table."""
        with self.lock:
            env = self._get(req.episode_id)
            obs, done, reward, info = env.step(req.action.message)
            if done and req.episode_id in self.live:
                self.finished[req.episode_id] = self.live.pop(req.episode_id)
        return {"observation": obs, "reward": reward, "done": done, "info": info}

    def state(self, episode_id: str) -> dict[str, Any]:
        """A session's turn, done flag and state summary (never the hidden goal)."""
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

    def close(self, episode_id: str) -> dict[str, Any]:
        """Release a session (live or finished), as OpenEnv's session close does."""
        with self.lock:
            self._get(episode_id)
            (self.live if episode_id in self.live else self.finished).pop(episode_id)
            self._forget(episode_id, "closed")
        return {"episode_id": episode_id, "closed": True}

    def _get(self, episode_id: str) -> ShopEnv:
        env = self.live.get(episode_id)
        if env is not None:
            self.live.move_to_end(episode_id)
            return env
        env = self.finished.get(episode_id)
        if env is not None:
            return env
        why = self.gone.get(episode_id)
        if why == "evicted":
            raise NotFound(
                f"no session {episode_id!r}: it was evicted (the server holds at most "
                f"{self.max_sessions} sessions, finished ones go first, then the least recently "
                "used; raise --max-sessions or close sessions you are done with)"
            )
        if why == "closed":
            raise NotFound(f"no session {episode_id!r}: it was closed")
        raise NotFound(f"no session {episode_id!r} (reset first)")


class CloseRequest(BaseModel):
    """Which session to release."""

    episode_id: str = Field(description="The session from reset.")


def create_app(
    catalog: str | Path,
    *,
    tasks: list[TaskRow] | None = None,
    max_sessions: int = 4096,
    instance: str | None = None,
) -> FastAPI:
    """The FastAPI app serving ``catalog`` (and optionally a loaded task set).

    Args:
        catalog: the catalog dataset.
        tasks: rows that ``reset(task_id=…)`` can name.
        max_sessions: sessions held at once (live and finished); see :class:`Sessions`.
        instance: the tag of server-made episode ids (random per server when None; fix it
            only for reproducible logs of a single server).
    """
    sessions = Sessions(Path(catalog), tasks or [], max_sessions, instance=instance)
    app = FastAPI(title="shopgen", description="OpenEnv-style shopping-agent environment")
    app.state.sessions = sessions

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own handler re-encodes the offending input, which fails on NaN.
        return JSONResponse({"detail": repr(exc.errors())[:2000]}, status_code=422)

    @app.exception_handler(Exception)
    def internal(request: Request, exc: Exception) -> JSONResponse:
        # A fault of a task row or of shopgen: one JSON error line, not a bare text 500.
        return JSONResponse(
            {"detail": f"internal error: {type(exc).__name__}: {exc}"[:2000]}, status_code=500
        )

    def guarded(fn, *args):
        try:
            _check_text(
                [a.model_dump() if isinstance(a, BaseModel) else a for a in args], "the request"
            )
            return fn(*args)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        except SessionConflict as exc:
            raise HTTPException(409, str(exc)) from None
        except ShopgenError as exc:  # a bad task row, a finished episode, bad text
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

    @app.post("/close")
    def close(req: CloseRequest) -> dict[str, Any]:
        return guarded(sessions.close, req.episode_id)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "healthy",
            "catalog_id": sessions.shop.store.catalog_id,
            "sessions": len(sessions.live) + len(sessions.finished),
            "live": len(sessions.live),
            "finished": len(sessions.finished),
            "evicted": sessions.evicted,
            "max_sessions": sessions.max_sessions,
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


__all__ = ["NotFound", "SessionConflict", "Sessions", "create_app"]
