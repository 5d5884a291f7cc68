"""What composing steps costs: journey tasks/s against the same steps generated alone.

A journey at difficulty d draws L(d) sub-tasks for one customer, merges their episodes and
plays their oracles side by side. Its cost is compared with a baseline measured in the same
run: the CPU time the same environments take to make proven tasks on their own at the same d
(the journey's steps weighted as they occurred). ``overhead`` = journey CPU time / that sum;
1.0 means composition is free, above 1 it costs redraws (a step that does not fit the
customer, the categories or the turns) and the larger merged episode.

The catalog is built in a temporary directory (5k products quick, 20k full) unless
``SHOPGEN_BENCH_CATALOG`` names an indexed catalog to reuse.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter

from bench.common import indexed_catalog
from shopgen.env.episode import ShopEnv
from shopgen.taskgen import TaskFactory

#: Levels measured: the issue's d = 5 and the longest journeys.
LEVELS = (5, 12)
#: Warm-up tasks per environment and level (category tables, index pages, templates).
WARM = 4


def _cpu_seconds(factory: TaskFactory, env: str, d: int, n: int) -> tuple[float, list]:
    for k in range(WARM):
        factory.make(env, d, 10**6 + k)
    started = time.process_time()
    made = [factory.make(env, d, k) for k in range(n)]
    return time.process_time() - started, made


def run(quick: bool = False) -> dict:
    """Journey tasks/s per level and its overhead over its steps made alone."""
    size, n = (5_000, 12) if quick else (20_000, 40)
    out: dict[str, float | int | str] = {"tasks_per_level": n}
    with tempfile.TemporaryDirectory() as tmp:
        env = ShopEnv(indexed_catalog(tmp, size))
        out["catalog_products"] = env.store.products.height
        factory = TaskFactory(env, seed=0)
        for d in LEVELS:
            spent, made = _cpu_seconds(factory, "journey", d, n)
            steps = Counter(s["env"] for g in made for s in g.row.decoded("goal")["steps"])
            alone = 0.0
            for name, count in sorted(steps.items()):
                seconds, _ = _cpu_seconds(factory, name, d, n)
                alone += count * seconds / n
            out[f"d{d}.journey_tasks_per_s"] = round(n / max(spent, 1e-9), 1)
            out[f"d{d}.steps_per_journey"] = round(sum(steps.values()) / n, 2)
            out[f"d{d}.redraws_per_task"] = round(sum(g.attempt for g in made) / n, 2)
            out[f"d{d}.overhead_vs_steps_alone"] = round(spent / max(alone, 1e-9), 2)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick=True), indent=2))
