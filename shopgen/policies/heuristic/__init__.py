"""Rule-based agents, one module per environment, each ``heuristic(PublicTask) -> Oracle``."""

from __future__ import annotations

import importlib

from shopgen.policies.base import Agent


def heuristic_for(env: str) -> Agent:
    """The heuristic agent of environment ``env`` (module ``shopgen.policies.heuristic.<env>``)."""
    return importlib.import_module(f"shopgen.policies.heuristic.{env}").heuristic
