"""An OpenEnv-style HTTP server for shopgen episodes (``shopgen serve``).

Endpoints (JSON; OpenEnv's reset / step / state / health / schema, with an ``episode_id`` so
many sessions share one server):

- ``POST /reset`` ``{seed?, episode_id?, task_id?, task?, env?, d?}`` → ``{episode_id,
  observation: {messages, tools}, reward: null, done: false}``. The task is, in order: the
  ``task`` row given; the ``task_id`` of a task in the loaded task datasets; task ``seed`` of
  ``env`` at level ``d`` made by :class:`~shopgen.taskgen.TaskFactory` (the same seed always
  gives the same task, so GRPO groups see one episode); or, with tasks loaded and only a seed,
  the task at a seed-keyed index. Without ``episode_id`` the server makes a fresh one
  (``<task_id>-<random token>``: unique, and unguessable, so a session id is the only key to
  a session); a client-given id (at most 256 characters) that a live session holds is refused
  with 409, never replaced (a finished session's id may be reused). A client that names its
  own ids should make them unguessable too: anyone holding an id can step, read or close it.
- ``POST /step`` ``{episode_id, action: {message}}`` → ``{observation, reward, done, info}``.
  The final ``info`` holds what the verifier promises a trainer — ``reward``, ``r_task``,
  ``r_eff``, ``r_hall``, ``is_correct`` (also under ``score``), ``task_id``, ``env``, ``d``,
  ``verifier_version`` — and the public state summary; the verifier's ``details`` and the
  state's ``extra`` records, which name the hidden goal (a cart's missing lines, the user
  script's slots), only with ``details=True`` (``shopgen serve --details``, for debugging).
- ``GET /state?episode_id=…`` → turn, done and the public state summary (never the hidden goal).
- ``POST /close`` ``{episode_id}`` → ``{episode_id, closed: true}``: release a session (the
  shape of OpenEnv's ``openenv/session/close``).
- ``GET /health`` (session counts: live, finished, evicted), ``GET /schema`` (action,
  observation and state JSON schemas, tool schemas).

Errors (all JSON ``{"detail": …}``): 404 for an unknown task or session (saying whether it was
closed or evicted), 409 for a live ``episode_id``, 400 for a bad task or a step after the end,
413 for a request body over ``max_request_bytes`` (2 MiB) or a turn of more than
``max(1024, 4 × B_tool)`` tool calls (counted before anything is parsed, and the turn is not
played: calls beyond ``B_tool`` are never run, but each would still be parsed, recorded and
answered under the server's lock), 422 for a request that does not fit the schema.

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
from shopgen.schemas.envs import ENV_NAMES, env_spec
from shopgen.schemas.errors import ShopgenError
from shopgen.schemas.task import TaskRow

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, Field
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "shopgen serve needs the server extra: pip install 'shopgen[server]'"
    ) from exc


class ResetRequest(BaseModel):
    """Which episode to start."""

    seed: int | None = Field(None, description="Task seed (with env and d, or a loaded task set).")
    episode_id: str | None = Field(
        None, description="Session id to use (a fresh, unguessable one if absent)."
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


class TooLarge(ShopgenError):
    """A request or a turn is over the server's size limits (HTTP 413)."""


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
#: The longest episode id a client may name.
_MAX_ID_CHARS = 256
#: The default cap on a request body, in bytes (a task row is tens of kB, a model turn less).
MAX_REQUEST_BYTES = 2 * 1024 * 1024
#: A turn may hold at most ``max(_CALLS_FLOOR, _CALLS_PER_BUDGET × B_tool)`` tool calls.
_CALLS_FLOOR = 1024
_CALLS_PER_BUDGET = 4
#: The Score fields the final ``info`` carries over HTTP by default (never ``details``).
_SCORE_FIELDS = ("reward", "r_task", "r_eff", "r_hall", "is_correct")


def _calls_in(message: dict[str, Any] | str) -> int:
    """An upper bound on the tool-call items the runtime would parse from ``message``.

    Counted without parsing: the ``tool_calls`` list's length plus the ``<tool_call>`` tags of
    the text (a think block's or an unclosed block's tags count too: only an absurd turn
    reaches the cap either way).
    """
    if isinstance(message, str):
        return message.count("<tool_call>")
    calls = message.get("tool_calls")
    content = message.get("content")
    count = len(calls) if isinstance(calls, list) else 0
    if isinstance(content, str):
        count += content.count("<tool_call>")
    elif isinstance(content, list):  # content parts
        count += sum(
            p["text"].count("<tool_call>")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return count


def _public_state(summary: dict[str, Any], details: bool) -> dict[str, Any]:
    """A state summary without its ``extra`` records (unless ``details``).

    ``extra`` is what tools note for the verifier: the slots of the hidden user script that a
    question revealed or answered, the facts of recommended products, and the like.
    """
    if details or "extra" not in summary:
        return summary
    return {k: v for k, v in summary.items() if k != "extra"}


def _public_info(env: ShopEnv, info: dict[str, Any], done: bool, details: bool) -> dict[str, Any]:
    """The ``info`` of a step as served: the verifier's contract, its details only if asked.

    ``ShopEnv.step``'s final info carries the verifier's ``details`` (for cart, the goal's
    missing product and variant ids; for discovery, the broken constraints) and the state's
    ``extra``: a client could end a probe episode at once and read the answer of a task.
    """
    if not done:
        return info
    task = env.task
    out: dict[str, Any] = {
        "turn": info["turn"],
        "errors": info["errors"],
        "task_id": task.task_id,
        "env": task.env,
        "d": task.d,
        "verifier_version": env_spec(task.env).version if task.env in ENV_NAMES else None,
        "state": _public_state(info["state"], details),
    }
    score = info.get("score")
    if score is None:  # no verifier: the reward is None and the state is the outcome
        out["reward"] = info.get("reward")
        return out
    out["score"] = dict(score) if details else {k: score[k] for k in _SCORE_FIELDS}
    out.update({k: info[k] for k in _SCORE_FIELDS})
    return out


class Sessions:
    """The server's state: the shared runtime, loaded tasks, and the session table.

    Sessions are *live* until their episode ends, then *finished* (kept so ``/state`` can
    still read the end), until closed or evicted. ``max_sessions`` bounds both together; at the
    cap a reset evicts the oldest finished session, else the least recently used live one.

    Args:
        catalog: the catalog every session plays on.
        tasks: the loaded task datasets' rows (``reset(task_id=…)`` names them).
        max_sessions: the cap on held sessions (live and finished).
        details: serve the verifier's details and the state's extra records (hidden goal
            data: for debugging, never for training).
    """

    def __init__(
        self,
        catalog: Path,
        tasks: list[TaskRow],
        max_sessions: int,
        *,
        details: bool = False,
    ) -> None:
        self.shop = ShopEnv(catalog)
        self.tasks = {t.task_id: t for t in tasks}
        self.order = sorted(self.tasks)
        self.max_sessions = max_sessions
        self.details = details
        self.live: OrderedDict[str, ShopEnv] = OrderedDict()  # least recently used first
        self.finished: OrderedDict[str, ShopEnv] = OrderedDict()  # first finished first
        self.gone: OrderedDict[str, str] = OrderedDict()  # ended id → "closed" / "evicted"
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
        """A fresh id: the task and 128 random bits (``secrets``), held by no session.

        The id is the only key to a session (anyone holding it can read, step or close it),
        so it must not be derivable from another: a counter or a tag shared by the server's
        sessions let a client compute its neighbours' ids from its own. Random, not seeded:
        an id is a handle, not data, and nothing is drawn from it, so episodes stay
        reproducible. A GRPO group of one task and seed gets as many ids as resets; an id a
        session (or a client's own name for one) holds is drawn anew.
        """
        while True:
            episode_id = f"{task_id}-{secrets.token_urlsafe(16)}"
            if episode_id not in self.live and episode_id not in self.finished:
                return episode_id

    def reset(self, req: ResetRequest) -> dict[str, Any]:
        """Start a session; a client id that a live session holds is refused, never replaced."""
        if req.episode_id is not None and len(req.episode_id) > _MAX_ID_CHARS:
            raise ShopgenError(
                f"episode_id is {len(req.episode_id):,} characters long; at most "
                f"{_MAX_ID_CHARS} (or reset without one to get a fresh one)"
            )
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
            if not env.done:  # after the end, step's own error says so
                budget = env.task.axis("B_tool")
                cap = max(_CALLS_FLOOR, _CALLS_PER_BUDGET * budget)
                calls = _calls_in(req.action.message)
                if calls > cap:
                    raise TooLarge(
                        f"the turn holds {calls:,} tool calls; this task runs at most {budget} "
                        f"per turn and the server refuses more than {cap:,} (the turn was not "
                        "played)"
                    )
            obs, done, reward, info = env.step(req.action.message)
            if done and req.episode_id in self.live:
                self.finished[req.episode_id] = self.live.pop(req.episode_id)
            info = _public_info(env, info, done, self.details)
        return {"observation": obs, "reward": reward, "done": done, "info": info}

    def state(self, episode_id: str) -> dict[str, Any]:
        """A session's turn, done flag and public state summary (never the hidden goal)."""
        with self.lock:
            env = self._get(episode_id)
            return {
                "episode_id": episode_id,
                "task_id": env.task.task_id,
                "env": env.task.env,
                "turn": env.state.turns,
                "done": env.done,
                "state": _public_state(env.state.summary(), self.details),
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


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(
        {"detail": f"request body over {limit:,} bytes (the server's --max-request-bytes)"},
        status_code=413,
    )


class BodyLimit:
    """ASGI middleware: refuse (413, JSON) a request whose body is over ``limit`` bytes.

    The body is counted as it arrives (a declared ``Content-Length`` or chunks), and kept only
    up to the limit. The rest of an oversized body is read and dropped, up to ``drain`` bytes,
    before the answer, so a client still writing it reads the 413 rather than a reset
    connection; a body declared longer than ``drain`` is answered at once, unread.
    """

    def __init__(self, app: ASGIApp, limit: int, drain: int = 64 * 1024 * 1024) -> None:
        self.app = app
        self.limit = limit
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request with its body read whole, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        over = declared is not None and declared.isdigit() and int(declared) > self.limit
        chunks: list[bytes] = []
        size, more = 0, not over or int(declared or 0) <= self.drain
        disconnect: Message | None = None
        while more:
            message = await receive()
            if message["type"] != "http.request":
                disconnect = message
                break
            body = message.get("body", b"")
            size += len(body)
            more = message.get("more_body", False)
            if size > self.limit:
                over = True
                if size > self.drain:
                    break
            elif not over:
                chunks.append(body)
        if over:
            await _too_large(self.limit)(scope, receive, send)
            return
        replay: list[Message] = [
            disconnect or {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        ]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)


class CloseRequest(BaseModel):
    """Which session to release."""

    episode_id: str = Field(description="The session from reset.")


def create_app(
    catalog: str | Path,
    *,
    tasks: list[TaskRow] | None = None,
    max_sessions: int = 4096,
    details: bool = False,
    max_request_bytes: int = MAX_REQUEST_BYTES,
) -> FastAPI:
    """The FastAPI app serving ``catalog`` (and optionally a loaded task set).

    Args:
        catalog: the catalog dataset.
        tasks: rows that ``reset(task_id=…)`` can name.
        max_sessions: sessions held at once (live and finished); see :class:`Sessions`.
        details: serve the verifier's details and the state's extra records, which name the
            hidden goal (for debugging; a trainer's client could read the answers).
        max_request_bytes: the largest request body served (larger ones get 413).
    """
    sessions = Sessions(Path(catalog), tasks or [], max_sessions, details=details)
    app = FastAPI(title="shopgen", description="OpenEnv-style shopping-agent environment")
    app.state.sessions = sessions
    app.add_middleware(BodyLimit, limit=max_request_bytes)

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
        except TooLarge as exc:
            raise HTTPException(413, str(exc)) from None
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
            "details": sessions.details,
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


__all__ = [
    "MAX_REQUEST_BYTES",
    "BodyLimit",
    "NotFound",
    "SessionConflict",
    "Sessions",
    "TooLarge",
    "create_app",
]
