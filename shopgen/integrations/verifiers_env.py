"""``verifiers`` adapter: ``load_environment()`` for a shopgen ``verifiers`` export.

Written against the ``verifiers`` ``MultiTurnEnv`` API (``env_response(messages, state)``,
``is_completed(messages, state)``, ``vf.Rubric(funcs=…)``) with the export's columns
``prompt``, ``answer``, ``info``, ``task``. Each rollout's state holds one :class:`ShopEnv`
episode; every assistant message is played as one step, so tool execution, the simulated
customer and the verifier are shopgen's own, and the rubric reads the final score.

Note: ``verifiers`` 0.4 moved its stack to ``verifiers.v1`` (tasksets and harnesses) and no
longer ships ``MultiTurnEnv``; :func:`load_environment` then raises an ImportError naming the
supported releases. :class:`ShopgenSession` (the part that plays and scores) has no
dependency on the library and is tested on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shopgen.env.episode import ShopEnv


class ShopgenSession:
    """One rollout: reset from the row's ``info``, play assistant messages, keep the score."""

    def __init__(self, shop: ShopEnv, info: dict[str, Any]) -> None:
        self.env = shop.spawn()
        self.observation = self.env.reset(json.loads(info["task_row"]))
        self.score: dict[str, Any] | None = None

    def respond(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Play one assistant message; the tool results and customer lines to append."""
        obs, done, _, info = self.env.step(message)
        if done:
            self.score = info.get("score") or {"reward": info.get("reward")}
        return obs["messages"]

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.score is not None


def load_environment(
    dataset_dir: str | Path | None = None,
    catalog: str | Path | None = None,
    **kwargs: Any,
) -> Any:
    """A ``verifiers`` environment over a shopgen ``verifiers`` export.

    Args:
        dataset_dir: the export (``shopgen export --format verifiers``); its ``data/*.parquet``.
        catalog: the tasks' catalog.
        **kwargs: passed to the environment (e.g. ``max_turns``).
    """
    try:
        from datasets import load_dataset

        import verifiers as vf

        base = vf.MultiTurnEnv
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            "load_environment needs a verifiers release with MultiTurnEnv (verifiers<0.4) "
            "and datasets"
        ) from exc
    if dataset_dir is None or catalog is None:
        raise ValueError("load_environment needs dataset_dir= and catalog=")
    shop = ShopEnv(catalog)
    files = str(Path(dataset_dir) / "data" / "*.parquet")
    dataset = load_dataset("parquet", data_files=files, split="train")

    class ShopgenVerifiersEnv(base):  # type: ignore[misc, valid-type]
        async def setup_state(self, state: dict[str, Any], **_: Any) -> dict[str, Any]:
            state["shopgen"] = ShopgenSession(shop, state["info"])
            return state

        async def is_completed(self, messages: Any, state: dict[str, Any], **_: Any) -> bool:
            session = state.get("shopgen")
            if session is None or not messages or messages[-1].get("role") != "assistant":
                return bool(session and session.done)
            if not session.done:
                state["shopgen_tail"] = session.respond(messages[-1])
            return session.done

        async def env_response(
            self, messages: Any, state: dict[str, Any], **_: Any
        ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            return state.pop("shopgen_tail", []), state

    def shopgen_reward(
        completion: Any = None, state: dict[str, Any] | None = None, **_: Any
    ) -> float:
        session = (state or {}).get("shopgen")
        return float((session.score or {}).get("reward") or 0.0) if session else 0.0

    rubric = vf.Rubric(funcs=[shopgen_reward], weights=[1.0])
    return ShopgenVerifiersEnv(dataset=dataset, rubric=rubric, **kwargs)


__all__ = ["ShopgenSession", "load_environment"]
