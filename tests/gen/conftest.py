"""Fixtures the generator tests share: the session catalog opened as a store and a context.

Module-scoped, as each module had them: a module's tests share one store's caches, and no
module sees another's.
"""

from __future__ import annotations

import pytest

from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.base import GenContext


@pytest.fixture(scope="module")
def store(catalog_dir) -> CatalogStore:
    return CatalogStore(catalog_dir)


@pytest.fixture(scope="module")
def ctx(store) -> GenContext:
    return GenContext(store, seed=0)
