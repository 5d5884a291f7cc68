"""``shopgen index``: build a catalog's search index (BM25 + FAISS) inside the dataset."""

from __future__ import annotations

import time
from pathlib import Path

import click

from shopgen.gen.encoders import ENCODERS
from shopgen.gen.index import KINDS, IndexConfig, build_index


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
    help="FAISS index: auto = exact flat below 100k products, IVF above.",
)
def index(catalog: Path, encoder: str, kind: str) -> None:
    """Index CATALOG for catalog_search; the files are listed in its manifest."""
    started = time.perf_counter()
    meta = build_index(
        catalog,
        IndexConfig(encoder=encoder, kind=kind),
        progress=lambda stage: click.echo(f"  {stage} …", err=True),
    )
    params = ", ".join(f"{k}={v}" for k, v in meta["dense"].items())
    click.echo(
        f"indexed {meta['n']:,} products of {meta['catalog_id']} with {encoder} "
        f"({params}) in {time.perf_counter() - started:.1f} s"
    )
