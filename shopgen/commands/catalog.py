"""``shopgen catalog``: generate a catalog dataset."""

from __future__ import annotations

import time
from pathlib import Path

import click

from shopgen.commands.catalogs import check_output
from shopgen.commands.options import SEED
from shopgen.console import print_summary, progress_bar
from shopgen.gen.backends import BACKENDS
from shopgen.gen.catalog import check_size
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.plan import compile_plan
from shopgen.schemas.validation import parse_count


@click.command()
@click.option(
    "--size", default="10k", show_default=True, help="Products: 1000, 10k, 250k, 1M, 2.5M …"
)
@click.option("--seed", default=0, show_default=True, type=SEED, help="Root seed.")
@click.option("--out", default="data/catalog", show_default=True, type=click.Path(path_type=Path))
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Processes."
)
@click.option(
    "--taxonomy", type=click.Path(exists=True, dir_okay=False), help="Use this taxonomy file."
)
@click.option(
    "--users", default=None, help="Customers in the world: 1000, 10k … (default size/10)."
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="local",
    show_default=True,
    help="Where shards run: local processes or a Ray cluster (pip install shopgen[ray]).",
)
@click.option("--address", help="Ray cluster address (--backend ray; default: a local Ray).")
@click.option("--force", is_flag=True, help="Replace an existing output directory.")
def catalog(
    size: str,
    seed: int,
    out: Path,
    workers: int,
    taxonomy: str | None,
    users: str | None,
    backend: str,
    address: str | None,
    force: bool,
) -> None:
    """Generate products, variants and their world (customers, visits, orders, store policies).

    The result is one versioned Parquet dataset; `shopgen index` then adds its search index.
    """
    check_output(out, {"--taxonomy": Path(taxonomy) if taxonomy else None}, force=force)
    config = CatalogConfig(
        size=parse_count(size),
        seed=seed,
        taxonomy=taxonomy,
        users=None if users is None else parse_count(users, field="users"),
    )
    check_size(compile_plan(config.seed, config.taxonomy), config.size)
    started = time.perf_counter()
    phases: dict[str, float] = {}
    with progress_bar(config.size, "products") as advance:
        manifest = write_catalog(
            config,
            out,
            workers=workers,
            force=force,
            progress=advance,
            backend=backend,
            address=address,
            timings=phases,
        )
    print_summary(out, manifest, time.perf_counter() - started)
    click.echo("phases: " + ", ".join(f"{name} {secs:.1f} s" for name, secs in phases.items()))
