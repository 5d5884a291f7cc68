"""Runtime throughput and memory: reset + a 6-call scripted episode (no search).

Baseline, measured in the same run: per episode, the same number of plain ``dict`` lookups
of product records and ``json.dumps`` of them (what a minimal tool server must do at least).
The ratio (ours / baseline time per episode) is the figure that travels between machines;
episodes/s per core is reported beside it. Memory is bytes per live episode: tracemalloc's
growth while 1,000 played episodes are held at once, divided by 1,000.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

import polars as pl

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import env_tool_schemas
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.difficulty import theta
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.base import call
from shopgen.taskgen import assistant_message


def _row(store: CatalogStore, i: int, visit: str) -> dict:
    return {
        "task_id": f"bench-{i}",
        "env": "cart",
        "d": 6,
        "theta": theta(6, T_max=8, B_tool=3).to_dict(),
        "seed": 0,
        "messages": [
            {"role": "system", "content": "You are a shop assistant."},
            {"role": "user", "content": "put my last viewed item in the cart"},
        ],
        "tools": json.dumps(
            [s for s in env_tool_schemas("cart") if s["function"]["name"] != "catalog_search"]
        ),
        "goal": "{}",
        "episode": json.dumps(
            {"visit_history": [{"product_id": visit, "title": "", "viewed_at": ""}]}
        ),
        "user_script": "{}",
        "oracle": "[]",
        "shopgen_version": "bench",
        "catalog_id": store.catalog_id,
        "verifier_version": "0",
    }


def _script(pid: str, vid: str) -> list[dict]:
    turns = [
        [call("user_get_visit_history")],
        [call("catalog_get_product", product_id=pid)],
        [call("catalog_get_variants", product_id=pid)],
        [call("cart_add", product_id=pid, variant_id=vid)],
        [call("cart_update_quantity", product_id=pid, variant_id=vid, quantity=2)],
        [call("cart_view")],
        "Done.",
    ]
    return [assistant_message(i + 1, turn) for i, turn in enumerate(turns)]


def _play(env: ShopEnv, row: dict, script: list[dict]) -> None:
    env.reset(row)
    for msg in script:
        env.step(msg)


def run(quick: bool = False) -> dict:
    """Measure episodes/s against the dict+JSON baseline, and bytes per live episode."""
    size = 10_000 if quick else 100_000
    n = 300 if quick else 2_000
    work = Path(tempfile.mkdtemp(prefix="shopgen-bench-runtime-"))
    try:
        write_catalog(CatalogConfig(size=size, seed=0), work / "catalog")
        store = CatalogStore(work / "catalog")
        products = store.products.filter(pl.col("n_variants") >= 1)["product_id"].to_list()[:64]
        cases = []
        for i, pid in enumerate(products):
            vid = max(store.variants_of(pid), key=lambda v: v["stock_qty"])["variant_id"]
            cases.append((_row(store, i, pid), _script(pid, vid)))
        env = ShopEnv(store, score=False)  # hand-made rows carry no goal: measure play, not grading
        for row, script in cases:  # warm caches (lazy frames, id indexes)
            _play(env, row, script)

        started = time.perf_counter()
        for i in range(n):
            _play(env, *cases[i % len(cases)])
        ours = (time.perf_counter() - started) / n

        table = {pid: store.product(pid) for pid in products}
        started = time.perf_counter()
        for i in range(n):
            pid = products[i % len(products)]
            for _ in range(6):
                json.dumps(table[pid], default=str)
        base = (time.perf_counter() - started) / n

        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        live = []
        for i in range(1_000):
            e = env.spawn()
            _play(e, *cases[i % len(cases)])
            live.append(e)
        per_episode = (tracemalloc.get_traced_memory()[0] - before) / len(live)
        tracemalloc.stop()
        return {
            "products": size,
            "episodes_per_s_per_core (reset + 6 calls + final)": round(1 / ours),
            "baseline_dict_json_per_s": round(1 / base),
            "ratio ours/baseline (time per episode)": round(ours / base, 1),
            "bytes_per_live_episode": round(per_episode),
            "live_episodes_per_GB": round(2**30 / per_episode),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
