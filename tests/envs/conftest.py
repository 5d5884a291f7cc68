"""Fixtures shared by the environment tests: one runtime per session on the indexed catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.taskgen import TaskFactory


@pytest.fixture(scope="session")
def shop_env(indexed_catalog_dir: Path) -> ShopEnv:
    """A runtime on the indexed fixture catalog (shared by every environment test)."""
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="session")
def factory(shop_env: ShopEnv) -> TaskFactory:
    """A task factory with seed 0 on that runtime."""
    return TaskFactory(shop_env, seed=0)
