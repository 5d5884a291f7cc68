"""Task-generation and scoring throughput of every environment (issue #7, Performance).

For each environment at d = 5 on one catalog:

- generation: proven tasks/s (draw, first message, live oracle through the runtime, replay
  proof), measured twice. ``first_tasks_per_s`` are the first ``n`` tasks after a short
  warm-up, while per-category tables, search cards and encoder look-ups are still being
  filled; ``tasks_per_s`` are at least ``n`` more, and at least ``MIN_SECONDS`` of CPU
  (``steady_tasks`` says how many), after ``STEADY_WARM`` further tasks, the rate a long
  ``shopgen tasks`` run settles at. Both are reported because a 100-task run pays the first.
- scoring: the oracle transcripts replayed and graded (``verifiers.replay.play``), every search
  answered by the runtime's memo, at least ``5 n`` replays and ``MIN_SECONDS`` of CPU.
  ``scored_per_s`` counts all of it; the issue's target is
  stated *excluding search*, so ``scored_per_s_excl_search`` subtracts the CPU time spent
  inside ``catalog_search`` calls (measured by wrapping the registered tool).
- the retrieval bound: during the ``tasks_per_s`` measurement, the BM25 and dense retrievals
  the live oracles ran (searches no earlier task ran; drawn-and-rejected attempts included)
  per accepted task, and their CPU time. ``retrieval_bound_tasks_per_s`` is the rate a core could
  not exceed even if everything else in a task cost nothing, and ``tasks_per_s_excl_retrieval``
  the rate with that time subtracted (the convention the scoring target states).

Each environment is measured in a process of its own (spawned, one at a time), as
``shopgen tasks --env NAME`` runs it: caches, memos and the heap are that environment's alone,
so one environment's figures do not depend on which ran before it (in one shared process an
environment inherited the earlier ones' card book, encoder memo and heap, which warmed the
search environments for each other and slowed the later order environments).
``peak_rss_mb`` is that process's peak resident memory and ``search_memo_hit_rate`` the share of
its searches the memo answered. ``bench tasks_workers`` measures all
environments mixed in one run.

Rates are CPU seconds of the measuring process (the shared machines are noisy in wall time),
and each is also reported as a ratio to a baseline measured in the same process: the rate of
bare ``render_first_message`` calls, the cheapest step every task pays.

The catalog is built in a temporary directory (10k products quick, 100k full) unless
``SHOPGEN_BENCH_CATALOG`` names an indexed catalog to reuse.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from bench.common import indexed_catalog
from shopgen.env.episode import ShopEnv
from shopgen.env.search import SearchIndex
from shopgen.env.tools.registry import REGISTRY
from shopgen.gen.difficulty import theta
from shopgen.gen.render import render_first_message
from shopgen.gen.seeding import stream
from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.replay import play

#: Difficulty the issue's target is stated at.
D = 5
#: Warm-up tasks per environment before the first measurement (templates, encoders).
WARM = 10
#: Further tasks before the steady-state measurement (full run only).
STEADY_WARM = 300
#: CPU seconds the steady generation and the scoring measurements last at least (full run):
#: 100 tasks of a fast environment are a fifth of a second, too short to be steady.
MIN_SECONDS = 3.0


def _cpu_rate(fn: Callable[[int], object], n: int) -> float:
    return _cpu_run(fn, n)[0]


def _cpu_run(fn: Callable[[int], object], n: int, seconds: float = 0.0) -> tuple[float, int]:
    """Calls ``fn(0)``, ``fn(1)``, … at least ``n`` times and for ``seconds`` CPU seconds.

    Returns the calls per CPU second and the number of calls.
    """
    started = time.process_time()
    k = 0
    while k < n or time.process_time() - started < seconds:
        fn(k)
        k += 1
    return k / max(time.process_time() - started, 1e-9), k


@contextmanager
def _timed_tool(name: str) -> Iterator[list[float]]:
    """CPU seconds spent inside tool ``name`` while the block runs (one-element list)."""
    spent = [0.0]
    spec = REGISTRY[name]

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return spec.fn(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - started

    REGISTRY[name] = dataclasses.replace(spec, fn=timed)
    try:
        yield spent
    finally:
        REGISTRY[name] = spec


@contextmanager
def _timed_retrieval() -> Iterator[list[float]]:
    """CPU seconds and calls of the BM25 and dense retrievers while the block runs.

    Both are looked up on the class at call time, so wrapping them there counts every fresh
    retrieval (the search memo answers repeats without calling them).
    """
    spent = [0.0, 0]
    originals = {name: getattr(SearchIndex, name) for name in ("bm25_rows", "dense_rows")}

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - started
                spent[1] += 1

        return wrapper

    for name, fn in originals.items():
        setattr(SearchIndex, name, timed(fn))
    try:
        yield spent
    finally:
        for name, fn in originals.items():
            setattr(SearchIndex, name, fn)


def run(quick: bool = False) -> dict:
    """Tasks/s and scored trajectories/s per environment, absolute and per baseline unit."""
    size, n, steady_warm = (10_000, 20, 0) if quick else (100_000, 100, STEADY_WARM)
    seconds = 0.0 if quick else MIN_SECONDS
    out: dict[str, float | int | str] = {"d": D, "tasks_per_env": n}
    # Spawned, not forked: a fork of a process that has run other suites can deadlock.
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        root = indexed_catalog(tmp, size)
        for name in ENV_NAMES:
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                job = pool.submit(_measured_alone, root, name, n, steady_warm, seconds)
                figures, out["catalog_products"] = job.result()
            out.update({f"{name}.{key}": value for key, value in figures.items()})
    return out


def _measured_alone(
    root: str, name: str, n: int, steady_warm: int, seconds: float
) -> tuple[dict[str, float], int]:
    """One environment's figures in this (fresh) process, and the catalog's size.

    Besides :func:`_environment`'s: the process's peak RSS and its search memo's hit rate.
    """
    env = ShopEnv(root)
    factory = TaskFactory(env, seed=0, freeze_heap=True)  # as `shopgen tasks` runs it
    figures = _environment(env, factory, name, n, steady_warm, seconds)
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    memo = env._shared.search
    if memo is not None and memo.hits + memo.misses:
        figures["search_memo_hit_rate"] = round(memo.hits / (memo.hits + memo.misses), 3)
    return figures, env.store.products.height


def _environment(
    env: ShopEnv, factory: TaskFactory, name: str, n: int, steady_warm: int, seconds: float
) -> dict[str, float]:
    for k in range(WARM):
        factory.make(name, D, 10**6 + k)
    made: list = []

    def measure(start: int, seconds: float) -> tuple[float, int, list[float]]:
        with _timed_retrieval() as retrieval:
            rate, count = _cpu_run(
                lambda k: made.append(factory.make(name, D, start + k)), n, seconds
            )
        return rate, count, retrieval

    first, count, retrieval = measure(0, 0.0)
    for k in range(steady_warm):
        factory.make(name, D, 2 * 10**6 + k)
    if steady_warm:
        rate, count, retrieval = measure(n, seconds)
    else:
        rate = first
    retrieval_ms = 1000 * retrieval[0] / count
    rate_excl = count / max(count / rate - retrieval[0], 1e-9)
    drafts = [g.draft for g in made]
    renders = _cpu_rate(
        lambda k: render_first_message(
            name,
            drafts[k % len(drafts)].slots,
            d=D,
            rng=stream(0, "bench-render", k),
            axes=theta(D),
        ),
        n,
    )
    rows = [(g.row, json.loads(g.row.oracle)) for g in made]
    for row in rows:  # fill the search memo: scoring is measured without retrieval
        _score(env, *row)
    with _timed_tool("catalog_search") as searching:
        scores, scored = _cpu_run(lambda k: _score(env, *rows[k % len(rows)]), 5 * n, seconds)
    scores_excl = scored / max(scored / scores - searching[0], 1e-9)
    return {
        "first_tasks_per_s": round(first, 1),
        "tasks_per_s": round(rate, 1),
        "tasks_per_s_excl_retrieval": round(rate_excl, 1),
        "steady_tasks": count,
        "retrievals_per_task": round(retrieval[1] / 2 / count, 2),
        "retrieval_ms_per_task": round(retrieval_ms, 3),
        "retrieval_bound_tasks_per_s": round(1000 / retrieval_ms, 1) if retrieval_ms else None,
        "scored_per_s": round(scores, 1),
        "scored_per_s_excl_search": round(scores_excl, 1),
        "renders_per_s": round(renders, 1),
        "tasks_per_render": round(rate / renders, 4),
        "scored_per_render": round(scores / renders, 4),
    }


def _score(env: ShopEnv, row, messages: list[dict]) -> None:
    score, _ = play(env, row, messages)
    if score is None or not score.is_correct:
        raise RuntimeError(f"{row.env} oracle {row.task_id} no longer scores correct")
