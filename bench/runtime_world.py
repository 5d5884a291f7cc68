"""Runtime throughput of order, return, policy and ask_user episodes (issue #6).

A returns episode: reset, ``orders_list``, ``order_get_details``, ``return_check_eligibility``,
``ask_user``, ``policy_search``, final message, on generated ``returns`` tasks.
Baseline, measured in the same run: per episode, six ``json.dumps`` of an order record from a
plain ``dict`` (the least a tool server must do). Reported: episodes/s per core and the ratio
ours/baseline in time per episode.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from shopgen.env.episode import ShopEnv
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.base import call
from shopgen.taskgen import TaskFactory, assistant_message


def _script(store: CatalogStore, row: dict) -> list[dict]:
    episode = json.loads(row["episode"])
    order_id = episode["order_ids"][0]
    product_id = store.lines_of(order_id)[0]["product_id"]
    turns = [
        [call("orders_list")],
        [call("order_get_details", order_id=order_id)],
        [call("return_check_eligibility", order_id=order_id, product_id=product_id)],
        [call("ask_user", question="Why are you returning it, and which order was it?")],
        [call("policy_search", query="return window restocking fee")],
        "Done.",
    ]
    return [assistant_message(i + 1, turn) for i, turn in enumerate(turns)]


def run(quick: bool = False) -> dict:
    """Returns-episode throughput against the dict+JSON baseline."""
    size = 10_000 if quick else 100_000
    n = 300 if quick else 2_000
    work = Path(tempfile.mkdtemp(prefix="shopgen-bench-world-"))
    try:
        write_catalog(CatalogConfig(size=size, seed=0), work / "catalog")
        store = CatalogStore(work / "catalog")
        factory = TaskFactory(ShopEnv(store), seed=0)
        rows = [factory.make("returns", 6, k).row.to_row() for k in range(32)]
        rows = [{**r, "theta": {**r["theta"], "T_max": 10, "B_tool": 3}} for r in rows]
        cases = [(r, _script(store, r)) for r in rows]
        env = ShopEnv(store, score=False)

        def play(row: dict, script: list[dict]) -> None:
            env.reset(row)
            for msg in script:
                env.step(msg)

        for case in cases:  # warm: world indexes, policy index, compiled user scripts
            play(*case)
        started = time.perf_counter()
        for i in range(n):
            play(*cases[i % len(cases)])
        ours = (time.perf_counter() - started) / n

        orders = [store.order(json.loads(r["episode"])["order_ids"][0]) for r in rows]
        started = time.perf_counter()
        for i in range(n):
            for _ in range(6):
                json.dumps(orders[i % len(orders)], default=str)
        base = (time.perf_counter() - started) / n
        return {
            "products": size,
            "returns_episodes_per_s_per_core": round(1 / ours),
            "baseline_dict_json_per_s": round(1 / base),
            "ratio ours/baseline (time per episode)": round(ours / base, 1),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
