"""shopgen: synthetic e-commerce worlds and verifiable shopping-agent tasks for RL.

The public API is small; everything else is reachable through its module. Names load on first
use, so ``import shopgen`` (and the CLI) stays fast.

>>> import shopgen
>>> shopgen.theta(5).T_max
6
"""

from __future__ import annotations

import importlib
from typing import Any

from shopgen.schemas.version import SHOPGEN_VERSION as __version__

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    "CatalogConfig": "shopgen.gen.catalog_writer",
    "write_catalog": "shopgen.gen.catalog_writer",
    "CatalogStore": "shopgen.gen.store",
    "theta": "shopgen.gen.difficulty",
    "ENV_NAMES": "shopgen.schemas.envs",
    "ShopEnv": "shopgen.env.episode",
    "TaskRow": "shopgen.schemas.task",
    "TaskFactory": "shopgen.taskgen",
    "read_tasks": "shopgen.task_writer",
    "check_env": "shopgen.testing",
    "ShopgenError": "shopgen.schemas.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'shopgen' has no attribute {name!r}")
