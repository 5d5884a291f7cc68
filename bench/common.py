"""Helpers shared by benchmarks: medians and peak memory of a process tree."""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run_with_peak_rss(cmd: list[str]) -> tuple[float, int, str]:
    """Run ``cmd``; return (seconds, peak summed RSS in bytes of it and its children, stdout)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    stop.set()
    sampler.join()
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.decode()[-500:]}")
    return time.perf_counter() - started, peak, out.decode()


def indexed_catalog(tmp: str, size: int) -> Path:
    """An indexed catalog of ``size`` products built under ``tmp``.

    ``SHOPGEN_BENCH_CATALOG`` names one to reuse as is instead: building 100k or 1M takes
    minutes.
    """
    from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
    from shopgen.gen.index import build_index

    given = os.environ.get("SHOPGEN_BENCH_CATALOG")
    if given:
        return Path(given)
    root = Path(tmp) / "catalog"
    write_catalog(CatalogConfig(size=size, seed=0), root)
    build_index(root)
    return root
