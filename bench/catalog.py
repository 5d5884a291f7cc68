"""Catalog generation against a DuckDB baseline writing random data of the same shape.

The baseline writes the same number of product and variant rows, with the same column types
and the same average string lengths, to zstd Parquet with ``COPY … TO``, on the same two
threads. The ratio (ours / baseline) is the figure that travels between machines.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import duckdb
import polars as pl

from bench.common import median_seconds, run_with_peak_rss


def _avg_lengths(frame: pl.DataFrame) -> dict[str, int]:
    return {
        name: max(1, round(frame[name].str.len_chars().mean()))
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    }


def _text(length: int, salt: str) -> str:
    # md5 gives 32 pseudo-random hex characters per row; repeat to the target length.
    reps = length // 32 + 1
    return f"substr(repeat(md5(i::VARCHAR || '{salt}'), {reps}), 1, {length})"


def _baseline(
    out: Path, n_products: int, n_variants: int, plen: dict[str, int], vlen: dict[str, int]
) -> None:
    con = duckdb.connect()
    con.execute("SET threads = 2")
    p = {k: _text(v, k) for k, v in plen.items()}
    con.execute(
        f"""COPY (SELECT {p["product_id"]} AS product_id, {p["title"]} AS title, {p["brand"]} AS brand,
            {p["department"]} AS department, {p["category_id"]} AS category_id,
            {p["category_path"]} AS category_path, random() * 100 AS price, random() * 120 AS list_price,
            1 + random() * 4 AS rating, (random() * 1e5)::INTEGER AS rating_count,
            (random() * 100)::INTEGER AS stock_qty, (1 + random() * 6)::TINYINT AS ship_days,
            (random() * 20)::SMALLINT AS n_variants, {p["attributes"]} AS attributes,
            [md5(i::VARCHAR)[:9], md5(i::VARCHAR)[10:18], md5(i::VARCHAR)[19:26]] AS key_attrs,
            {p["description"]} AS description
        FROM range({n_products}) t(i)) TO '{out}/products.parquet' (FORMAT parquet, COMPRESSION zstd)"""
    )
    v = {k: _text(val, k) for k, val in vlen.items()}
    con.execute(
        f"""COPY (SELECT {v["variant_id"]} AS variant_id, {v["product_id"]} AS product_id,
            {v["attributes"]} AS attributes, {v["label"]} AS label, random() * 10 AS price_delta,
            (random() * 50)::INTEGER AS stock_qty
        FROM range({n_variants}) t(i)) TO '{out}/variants.parquet' (FORMAT parquet, COMPRESSION zstd)"""
    )


def _phases(stdout: str) -> dict[str, float]:
    """The ``phases:`` line ``shopgen catalog`` prints, as name → seconds."""
    line = next(x for x in stdout.splitlines() if x.startswith("phases:"))
    pairs = (part.strip().rsplit(" ", 2) for part in line.removeprefix("phases:").split(","))
    return {name: float(secs) for name, secs, _unit in pairs}


def run(quick: bool = False) -> dict:
    """Time ``shopgen catalog`` and the same-shape DuckDB baseline; report the ratio."""
    size = 100_000 if quick else 1_000_000
    repeats = 1 if quick else 3
    work = Path(tempfile.mkdtemp(prefix="shopgen-bench-"))
    try:
        ours, peaks, phases = [], [], []
        for _ in range(repeats):
            cmd = [
                sys.executable,
                "-m",
                "shopgen",
                "catalog",
                "--size",
                str(size),
                "--workers",
                "2",
            ]
            seconds, peak, stdout = run_with_peak_rss(
                [*cmd, "--out", str(work / "ours"), "--force"]
            )
            ours.append(seconds)
            peaks.append(peak)
            phases.append(_phases(stdout))
        products = pl.read_parquet(work / "ours" / "products")
        variants = pl.read_parquet(work / "ours" / "variants")
        plen, vlen = _avg_lengths(products), _avg_lengths(variants)
        n_variants = variants.height
        del products, variants
        base_dir = work / "base"
        base_dir.mkdir()
        baseline = median_seconds(
            lambda: _baseline(base_dir, size, n_variants, plen, vlen), repeats
        )
        ours_median = statistics.median(ours)
        products_s = statistics.median(p["products"] for p in phases)
        world_s = statistics.median(p["world"] for p in phases)
        return {
            "products": size,
            "variants": n_variants,
            "shopgen_catalog_s (median, 2 workers, whole command)": round(ours_median, 2),
            "  of which products+variants phase_s": round(products_s, 2),
            "  of which world phase_s": round(world_s, 2),
            "duckdb_same_shape_s (products+variants, median, 2 threads)": round(baseline, 2),
            "ratio products phase / duckdb (target <= 1.5)": round(products_s / baseline, 2),
            "ratio whole command incl. world / duckdb": round(ours_median / baseline, 2),
            "ratio world / products phase (target <= 1.0)": round(world_s / products_s, 2),
            "peak_rss_gb (target <= 4)": round(max(peaks) / 2**30, 2),
            "products_per_s (products phase)": round(size / products_s),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
