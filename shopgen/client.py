"""A small client for ``shopgen serve`` (standard library only, one connection per call).

>>> # c = ShopgenClient("http://127.0.0.1:8000"); obs = c.reset(env="status", seed=3)
>>> # obs, done, reward, info = c.step({"role": "assistant", "content": "Done."})

``step`` returns ``(observation, done, reward, info)``, the order of
:meth:`shopgen.env.episode.ShopEnv.step`, so code written for the in-process env runs as is.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from shopgen.schemas.errors import ShopgenError


class ServerError(ShopgenError):
    """The server refused a request (its message says why)."""


class ShopgenClient:
    """One session against a shopgen server.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000``.
        timeout: seconds per request.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.episode_id: str | None = None

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            with contextlib.suppress(json.JSONDecodeError, AttributeError):
                detail = json.loads(detail).get("detail", detail)
            raise ServerError(f"{method} {path}: {exc.code} {detail}") from None

    def health(self) -> dict[str, Any]:
        """The server's health record."""
        return self._call("GET", "/health")

    def schema(self) -> dict[str, Any]:
        """Action, observation and tool schemas."""
        return self._call("GET", "/schema")

    def reset(self, **request: Any) -> dict[str, Any]:
        """Start an episode (``seed``, ``episode_id``, ``task_id``, ``task``, ``env``, ``d``)."""
        out = self._call("POST", "/reset", {k: v for k, v in request.items() if v is not None})
        self.episode_id = out["episode_id"]
        return out["observation"]

    def step(
        self, message: dict[str, Any] | str
    ) -> tuple[dict[str, Any], bool, float | None, dict[str, Any]]:
        """One assistant turn: ``(observation, done, reward, info)``, as ``ShopEnv.step``.

        ``done`` is a bool; ``reward`` is 0.0 until the final turn, then the verifier's reward
        (None for an environment without one). The final ``info`` holds ``reward``,
        ``r_task``, ``r_eff``, ``r_hall``, ``is_correct``, ``task_id``, ``env``, ``d`` and
        ``verifier_version`` (the verifier's details only from a ``--details`` server).

        Raises:
            ServerError: before ``reset``, or when the server refuses the turn.
        """
        if self.episode_id is None:
            raise ServerError("call reset() before step()")
        out = self._call(
            "POST", "/step", {"episode_id": self.episode_id, "action": {"message": message}}
        )
        return out["observation"], out["done"], out["reward"], out["info"]

    def state(self) -> dict[str, Any]:
        """The session's turn, done flag and state summary."""
        query = urllib.parse.urlencode({"episode_id": self.episode_id})
        return self._call("GET", f"/state?{query}")

    def close(self) -> dict[str, Any]:
        """Release the session on the server, so it never waits for eviction."""
        if self.episode_id is None:
            raise ServerError("nothing to close: call reset() before close()")
        out = self._call("POST", "/close", {"episode_id": self.episode_id})
        self.episode_id = None
        return out


__all__ = ["ServerError", "ShopgenClient"]
