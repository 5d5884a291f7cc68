"""Task-generation and scoring throughput of every environment (issue #7, Performance).

For each environment: proven tasks/s at d = 5 (draw, first message, live oracle through the
runtime, replay proof) on one catalog, and scoring trajectories/s — the oracle transcripts
replayed and graded, with every search answered by the runtime's memo (what "excluding
search" means: retrieval latency is ``bench/search.py``'s subject). Rates are CPU seconds of
this process (the shared machines are noisy in wall time) after a warm-up that fills the
per-context caches, and each is also reported as a ratio to a baseline measured in the same
run: the rate of bare ``render_first_message`` calls, the cheapest step every task pays.

The catalog is built in a temporary directory (10k products quick, 100k full) unless
``SHOPGEN_BENCH_CATALOG`` names an indexed catalog to reuse.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable

from bench.common import indexed_catalog
from shopgen.env.episode import ShopEnv
from shopgen.gen.difficulty import theta
from shopgen.gen.render import render_first_message
from shopgen.gen.seeding import stream
from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.replay import play

#: Difficulty the issue's target is stated at.
D = 5
#: Warm-up tasks per environment (index pages, category tables, encoders, templates).
WARM = 10


def _cpu_rate(fn: Callable[[int], object], n: int) -> float:
    started = time.process_time()
    for k in range(n):
        fn(k)
    return n / max(time.process_time() - started, 1e-9)


def run(quick: bool = False) -> dict:
    """Tasks/s and scored trajectories/s per environment, absolute and per baseline unit."""
    size, n = (10_000, 20) if quick else (100_000, 100)
    out: dict[str, float | int | str] = {"d": D, "tasks_per_env": n}
    with tempfile.TemporaryDirectory() as tmp:
        root = indexed_catalog(tmp, size)
        env = ShopEnv(root)
        out["catalog_products"] = env.store.products.height
        factory = TaskFactory(env, seed=0)
        for name in ENV_NAMES:
            for k in range(WARM):
                factory.make(name, D, 10**6 + k)
            made = []
            rate = _cpu_rate(
                lambda k, name=name, made=made: made.append(factory.make(name, D, k)), n
            )
            drafts = [g.draft for g in made]
            renders = _cpu_rate(
                lambda k, name=name, drafts=drafts: render_first_message(
                    name,
                    drafts[k % len(drafts)].slots,
                    d=D,
                    rng=stream(0, "bench-render", k),
                    axes=theta(D),
                ),
                n,
            )
            rows = [(g.row, _oracle(g.row.oracle)) for g in made]
            scores = _cpu_rate(lambda k, rows=rows: _score(env, *rows[k % len(rows)]), 5 * n)
            out[f"{name}.tasks_per_s"] = round(rate, 1)
            out[f"{name}.scored_per_s"] = round(scores, 1)
            out[f"{name}.renders_per_s"] = round(renders, 1)
            out[f"{name}.tasks_per_render"] = round(rate / renders, 4)
            out[f"{name}.scored_per_render"] = round(scores / renders, 4)
        memo = env._shared.search
        if memo is not None:
            out["search_memo_hit_rate"] = round(memo.hits / max(1, memo.hits + memo.misses), 3)
    return out


def _oracle(text: str) -> list[dict]:
    return json.loads(text)


def _score(env: ShopEnv, row, messages: list[dict]) -> None:
    score, _ = play(env, row, messages)
    if score is None or not score.is_correct:
        raise RuntimeError(f"{row.env} oracle {row.task_id} no longer scores correct")
