"""``shopgen eval``: play reference policies on a task dataset and print one table."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import click

from shopgen.commands.tasks import open_catalog
from shopgen.env.episode import ShopEnv
from shopgen.task_writer import read_tasks
from shopgen.testing import DEGENERATE, run_policy
from shopgen.verifiers.replay import play

POLICIES = ("oracle", *DEGENERATE)


@click.command(name="eval")
@click.option(
    "--tasks", "tasks_dir", required=True, type=click.Path(path_type=Path), help="Task dataset."
)
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="Catalog the tasks were drawn from (default data/catalog).",
)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    type=click.Choice(POLICIES),
    help="Policies to play (repeatable; default: all).",
)
def evaluate(tasks_dir: Path, catalog: Path | None, policies: tuple[str, ...]) -> None:
    """Play the oracle and the degenerate policies on TASKS; print success and mean reward."""
    rows = read_tasks(tasks_dir)
    env = ShopEnv(open_catalog(catalog))
    chosen = policies or POLICIES
    table: dict[tuple[str, str], list[tuple[bool, float]]] = defaultdict(list)
    for row in rows:
        for name in chosen:
            if name == "oracle":
                score, _ = play(env, row, json.loads(row.oracle))
            else:
                score = run_policy(env, row, DEGENERATE[name])
            if score is not None:
                table[(row.env, name)].append((score.is_correct, score.reward))
    envs = sorted({e for e, _ in table})
    click.echo(f"{'policy':<22}" + "".join(f"{e:>22}" for e in envs))
    for name in chosen:
        cells = []
        for e in envs:
            results = table.get((e, name), [])
            if not results:
                cells.append(f"{'-':>22}")
                continue
            ok = sum(c for c, _ in results) / len(results)
            mean = sum(r for _, r in results) / len(results)
            cells.append(f"{ok:>10.0%} {mean:>+10.3f} ")
        click.echo(f"{name:<22}" + "".join(cells))
    click.echo("(each cell: share correct, mean reward; the maximum reward is 0.90)")
