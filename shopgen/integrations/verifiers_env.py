"""``verifiers`` adapter: ``load_environment()`` for a shopgen ``verifiers`` export.

Targets ``verifiers`` 0.4, whose stack is ``verifiers.v1`` (tasksets, tasks, harnesses; the
old ``MultiTurnEnv``/``Rubric`` API is gone). The plugin itself lives in
:mod:`shopgen.integrations.vf_taskset`, which imports the library; this module does not, so
:class:`ShopgenSession` (play assistant messages on a row, keep the score) works without it.
"""

from __future__ import annotations

import importlib.util
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
    """A ``verifiers`` (≥ 0.4, ``verifiers.v1``) environment over a shopgen ``verifiers`` export.

    Builds the ``EnvConfig`` naming the shopgen plugin
    (:mod:`shopgen.integrations.vf_taskset`) and constructs it with ``vf.load_environment``,
    the library's own loader, so the result is what ``vf-eval`` would run: a
    ``SingleAgentEnv`` over :class:`~shopgen.integrations.vf_taskset.ShopgenTaskset`, played by
    the in-process :class:`~shopgen.integrations.vf_taskset.ShopgenHarness` and scored by the
    shopgen verifier.

    Args:
        dataset_dir: the export (``shopgen export --format verifiers``); its ``data/*.parquet``.
        catalog: the tasks' catalog.
        **kwargs: ``EnvConfig`` fields to override (e.g. ``max_concurrent_agents``).
    """
    if dataset_dir is None or catalog is None:
        raise ValueError("load_environment needs dataset_dir= and catalog=")
    try:
        import verifiers.v1 as vf

        from shopgen.integrations.vf_taskset import env_config
    except ImportError as exc:
        raise ImportError(_missing_verifiers()) from exc
    config = env_config(dataset_dir, catalog)
    if kwargs:
        config = config.model_copy(update=kwargs)
    return vf.load_environment(config)


def _missing_verifiers() -> str:
    """Why ``import verifiers.v1`` failed: the package missing, or shadowed by our source.

    Run from a shopgen checkout's root, ``import verifiers`` finds its ``verifiers/`` folder
    (shopgen's own graders) before the installed package, and the old message asked to
    install what was installed.
    """
    found = importlib.util.find_spec("verifiers")
    ours = Path(importlib.util.find_spec("shopgen.verifiers").origin).resolve().parent
    if found is not None and found.origin and Path(found.origin).resolve().parent == ours:
        return (
            f"`import verifiers` finds shopgen's own source folder {ours}, which shadows the "
            "verifiers package: run from outside the repository's root"
        )
    return "load_environment needs verifiers>=0.4 (pip install 'shopgen[vf]')"


__all__ = ["ShopgenSession", "load_environment"]
