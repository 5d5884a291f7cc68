"""``shopgen search``: run catalog_search by hand, as the runtime would at a given d."""

from __future__ import annotations

from pathlib import Path

import click

from shopgen.commands.options import SEED
from shopgen.env.search import SearchIndex, cards_json


@click.command()
@click.option(
    "--catalog", required=True, type=click.Path(path_type=Path), help="Catalog dataset directory."
)
@click.argument("query")
@click.option(
    "--top-k",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Retrieval depth; a result shows clamp(ceil(top_k/10), 5, 20) of its hits.",
)
@click.option(
    "--eps-rank", default=0.0, show_default=True, type=float, help="Distractor probability."
)
@click.option("--seed", default=0, show_default=True, type=SEED, help="Task seed.")
@click.option(
    "--call-index", default=0, show_default=True, type=click.IntRange(min=0), help="Search number."
)
@click.option(
    "--mode", type=click.Choice(["hybrid", "bm25", "dense"]), default="hybrid", show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Print the tool result's JSON.")
def search(
    catalog: Path,
    query: str,
    top_k: int,
    eps_rank: float,
    seed: int,
    call_index: int,
    mode: str,
    as_json: bool,
) -> None:
    """Search CATALOG for QUERY and print the product cards an agent would see."""
    if not query.strip():
        raise click.BadParameter("is empty; give the words to search for", param_hint="QUERY")
    cards = SearchIndex.open(catalog).search(
        query, top_k=top_k, eps_rank=eps_rank, seed=seed, call_index=call_index, mode=mode
    )
    if as_json:
        click.echo(cards_json(cards))
        return
    if not cards:
        click.echo("no results")
    for rank, c in enumerate(cards, 1):
        click.echo(
            f"{rank:>3}. {c.product_id}  ${c.price:<8.2f} {c.rating:.1f}★  "
            f"stock {c.stock_qty:<5} {c.title}"
        )
