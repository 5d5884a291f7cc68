"""Run every benchmark, print one table, write bench/results.json.

Usage: ``python -m bench [--quick] [name ...]``. Each module in :data:`SUITES` exposes
``run(quick: bool) -> dict``; figures are ratios against a baseline measured in the same run,
because these machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import time
from pathlib import Path

SUITES = [
    "catalog",
    "world",
    "search",
    "render",
    "runtime",
    "runtime_world",
    "tasks",
    "tasks_workers",
    "journey",
    "draws",
]


def main() -> None:
    """Run the selected suites and report."""
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes, one repeat (a smoke run)"
    )
    parser.add_argument(
        "names", nargs="*", help=f"suites to run (default: all of {', '.join(SUITES)})"
    )
    args = parser.parse_args()
    results: dict[str, dict] = {}
    for name in args.names or SUITES:
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        figures = importlib.import_module(f"bench.{name}").run(quick=args.quick)
        figures["bench_seconds"] = round(time.perf_counter() - started, 1)
        results[name] = figures
        for key, value in figures.items():
            print(f"  {key:<40} {value}")
    out = Path(__file__).with_name("results.json")
    meta = {"python": platform.python_version(), "machine": platform.machine(), "quick": args.quick}
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
