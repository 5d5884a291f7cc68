"""``shopgen index``: build a catalog's search index (BM25 + FAISS) inside the dataset."""

from __future__ import annotations

import time
from pathlib import Path

import click

from shopgen.gen.backends import BACKENDS, open_executor
from shopgen.gen.encoders import ENCODERS
from shopgen.gen.index import FLAT_LIMIT, KINDS, IndexConfig, build_index


@click.command()
@click.option(
    "--catalog", required=True, type=click.Path(path_type=Path), help="Catalog dataset directory."
)
@click.option(
    "--encoder",
    type=click.Choice(ENCODERS),
    default="static",
    show_default=True,
    help="Dense encoder: static (distilled, fast) or minilm (~450 products/s).",
)
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="auto",
    show_default=True,
    help=f"FAISS index: auto = exact flat below {FLAT_LIMIT:,} products, IVF above; "
    "ivfpq for 10M+.",
)
@click.option(
    "--shards",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="ivf/ivfpq: train once, encode and add this many row ranges in parallel, merge.",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="local",
    show_default=True,
    help="Where the shards run (pip install shopgen[ray] for ray).",
)
@click.option("--address", help="Ray cluster address (--backend ray; default: a local Ray).")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Local processes."
)
def index(
    catalog: Path,
    encoder: str,
    kind: str,
    shards: int,
    backend: str,
    address: str | None,
    workers: int,
) -> None:
    """Index CATALOG for catalog_search; the files are listed in its manifest."""
    started = time.perf_counter()
    config = IndexConfig(encoder=encoder, kind=kind, shards=shards)
    with open_executor(backend, workers=workers, address=address, jobs=shards) as executor:
        meta = build_index(
            catalog,
            config,
            progress=lambda stage: click.echo(f"  {stage} …", err=True),
            executor=executor,
        )
    params = ", ".join(f"{k}={v}" for k, v in meta["dense"].items())
    click.echo(
        f"indexed {meta['n']:,} products of {meta['catalog_id']} with {encoder} "
        f"({params}) in {time.perf_counter() - started:.1f} s"
    )
