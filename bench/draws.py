"""How often generation rejects a draw, per environment and difficulty, and what that risks.

A task is made by drawing until a draw's oracle proves it (``shopgen.taskgen``); a rejected
draw costs a generator call and often a live drive. Attempts are independent, so with a
fraction p of draws rejected a task runs out of its ``MAX_ATTEMPTS`` with probability
p ** MAX_ATTEMPTS, and the run ends with ``DrawsExhausted``. Both grow with d and with the
catalog (more products to find in the same few search pages), so this suite measures them
where they are worst: d = 5, 10 and 12 on the 100k catalog (20k quick, or
``SHOPGEN_BENCH_CATALOG``). ``redraws_per_task`` is the ratio of rejected to accepted draws;
``run_out_per_task`` is p ** MAX_ATTEMPTS, the chance a task of that level aborts a run.
"""

from __future__ import annotations

import tempfile

from bench.common import indexed_catalog
from shopgen.env.episode import ShopEnv
from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import MAX_ATTEMPTS, TaskFactory

#: Levels measured: the issue's d = 5 and the two hardest levels the schedules reach.
LEVELS = (5, 10, 12)


def run(quick: bool = False) -> dict:
    """Rejected draws per accepted task and the run-out chance, per environment and level."""
    size, n = (20_000, 10) if quick else (100_000, 40)
    out: dict[str, float | int | str] = {"tasks_per_level": n, "max_attempts": MAX_ATTEMPTS}
    with tempfile.TemporaryDirectory() as tmp:
        env = ShopEnv(indexed_catalog(tmp, size))
        out["catalog_products"] = env.store.products.height
        factory = TaskFactory(env, seed=11)
        for name in ENV_NAMES:
            for d in LEVELS:
                rejected = sum(factory.make(name, d, k).attempt for k in range(n))
                p = rejected / (rejected + n)
                out[f"{name}.d{d}.redraws_per_task"] = round(rejected / n, 2)
                run_out = p**MAX_ATTEMPTS
                out[f"{name}.d{d}.run_out_per_task"] = (
                    f"{run_out:.1e}" if run_out > 1e-30 else "<1e-30"
                )
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick=True), indent=2))
