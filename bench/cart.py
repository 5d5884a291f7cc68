"""Cart task generation: tasks/s of the draw alone and of the whole proven pipeline.

Figures are ratios against one baseline measured in the same run — the rate of bare
``catalog_search`` calls on the same catalog — because the shared machines are noisy; the
pipeline's cost is mostly the searches its oracle plays live and again on replay.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

from shopgen.env.episode import ShopEnv
from shopgen.env.search import SearchIndex
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.difficulty import theta
from shopgen.gen.index import build_index
from shopgen.gen.seeding import stream
from shopgen.gen.tasks import cart
from shopgen.gen.tasks.base import Redraw
from shopgen.taskgen import TaskFactory


def _rate(fn, n: int) -> float:
    started = time.perf_counter()
    for k in range(n):
        fn(k)
    return n / (time.perf_counter() - started)


def run(quick: bool = False) -> dict:
    """Draws/s and proven tasks/s at d=5, and each as a multiple of searches/s."""
    size, n = (3000, 30) if quick else (20000, 200)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "catalog"
        write_catalog(CatalogConfig(size=size, seed=0), root)
        build_index(root)
        env = ShopEnv(root)
        factory = TaskFactory(env, seed=0)
        factory.make("cart", 5, 10**6)  # warm caches, encoder and index
        index = SearchIndex.open(root)
        queries = [t.split(",")[0] for t in env.store.products["title"].head(n).to_list()]
        searches = _rate(lambda k: index.search(queries[k], top_k=150, eps_rank=0.1), n)

        def draw(k: int) -> None:
            with contextlib.suppress(Redraw):
                cart.generate(factory.ctx, 5, theta(5), stream(0, "bench-cart", k))

        draws = _rate(draw, n)
        tasks = _rate(lambda k: factory.make("cart", 5, k), n)
    return {
        "catalog_products": size,
        "searches_per_s": round(searches, 1),
        "draws_per_s": round(draws, 1),
        "tasks_per_s": round(tasks, 1),
        "draws_per_search": round(draws / searches, 3),
        "tasks_per_search": round(tasks / searches, 4),
    }
