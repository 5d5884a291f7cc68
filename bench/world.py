"""World generation (users, orders, lines, visits, policy rules) as a ratio to the products.

Both are measured in the same ``write_catalog`` run: the world's wall time (``write_world``)
over the time spent on everything else (product and variant shards, taxonomy, manifest). The
issue's target is a ratio <= 1.0 (the world adds at most as much time as the products).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import polars as pl


def run(quick: bool = False) -> dict:
    """Generate a catalog with its world once (twice unless quick); report the median ratio."""
    import shopgen.gen.catalog_writer as cw
    from shopgen.gen.catalog_writer import CatalogConfig, write_catalog

    size = 20_000 if quick else 100_000
    work = Path(tempfile.mkdtemp(prefix="shopgen-bench-world-"))
    original = cw.write_world
    spent: list[float] = []

    def timed(*args, **kwargs):
        started = time.perf_counter()
        original(*args, **kwargs)
        spent.append(time.perf_counter() - started)

    cw.write_world = timed
    try:
        ratios, totals = [], []
        for _ in range(1 if quick else 2):
            started = time.perf_counter()
            write_catalog(CatalogConfig(size=size), work / "cat", force=True)
            total = time.perf_counter() - started
            totals.append(total)
            ratios.append(spent[-1] / (total - spent[-1]))
        counts = {
            t: pl.scan_parquet(work / "cat" / t / "*.parquet").select(pl.len()).collect().item()
            for t in ("users", "orders", "order_lines", "visits")
        }
    finally:
        cw.write_world = original
        shutil.rmtree(work, ignore_errors=True)
    ratios.sort()
    return {
        "products": size,
        **{f"{t}_rows": n for t, n in counts.items()},
        "world_s": round(spent[-1], 2),
        "catalog_total_s": round(totals[-1], 2),
        "world_over_products_ratio (target <= 1.0)": round(ratios[len(ratios) // 2], 2),
    }
