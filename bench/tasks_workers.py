"""How task generation scales with local worker processes (issue #7's throughput, issue #9).

``shopgen tasks --workers W`` runs shards of 50 tasks in this process (W = 1) or in W spawned
processes, each opening the catalog and index once. This suite generates every environment at
d = 5 end to end — start-up, index load, generation with the oracle replay — with one worker
and with two, and reports the wall-clock tasks/s of each and their ratio (the scaling
efficiency on this machine; 2.0 would be perfect). Wall time is what a user waits for; the ratio is measured in the same run, so
the machine's load affects both sides alike.

The catalog is built in a temporary directory (10k products quick, 100k full) unless
``SHOPGEN_BENCH_CATALOG`` names an indexed catalog to reuse.
"""

from __future__ import annotations

import tempfile
import time

from bench.common import indexed_catalog
from bench.tasks import D
from shopgen.gen.backends import open_executor
from shopgen.schemas.envs import ENV_NAMES
from shopgen.task_shards import generate_sharded, task_shards

#: Worker counts compared (the machines have two cores).
WORKERS = (1, 2)


def run(quick: bool = False) -> dict:
    """Wall-clock tasks/s for every environment at d = 5 with 1 and 2 worker processes."""
    size, n = (10_000, 50) if quick else (100_000, 200)
    out: dict[str, float | int | str] = {"d": D, "tasks_per_env": n}
    with tempfile.TemporaryDirectory() as tmp:
        root = indexed_catalog(tmp, size)
        shards = task_shards(root, envs=list(ENV_NAMES), ds=[D], n=n, seed=0)
        rates = {}
        for workers in WORKERS:
            started = time.perf_counter()
            # What ``shopgen tasks --workers N`` runs: this process for one worker, else
            # spawned processes (forking a process that has run other suites can deadlock).
            with open_executor("local", workers=workers, jobs=len(shards)) as pool:
                made = sum(1 for _ in generate_sharded(pool, shards))
            rates[workers] = made / (time.perf_counter() - started)
            out[f"workers{workers}.tasks_per_s"] = round(rates[workers], 1)
        out["scaling_2_vs_1"] = round(rates[2] / rates[1], 2)
    return out
