"""Shared fixtures and Hypothesis profiles (select with HYPOTHESIS_PROFILE=dev|ci|thorough)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

#: The tiny catalog every unit test shares: big enough that every leaf category has products.
FIXTURE_SIZE = 3000


@pytest.fixture(scope="session")
def catalog_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog dataset of FIXTURE_SIZE products, seed 0, built once per test session."""
    from shopgen.gen.catalog_writer import CatalogConfig, write_catalog

    out = tmp_path_factory.mktemp("fixture") / "catalog"
    write_catalog(CatalogConfig(size=FIXTURE_SIZE, seed=0), out)
    return out


@pytest.fixture(scope="session")
def indexed_catalog_dir(catalog_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture catalog with its search index (static encoder), built once."""
    import shutil

    from shopgen.gen.index import build_index

    out = tmp_path_factory.mktemp("indexed") / "catalog"
    shutil.copytree(catalog_dir, out)
    build_index(out)
    return out
