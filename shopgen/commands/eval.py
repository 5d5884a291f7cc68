"""``shopgen eval``: play reference and degenerate policies; print one table per policy.

Tasks come from a dataset (``--tasks DIR``) or are generated on the fly (``--env all --d 0-12
--n 200``); each cell is the share solved and the mean reward of one (env, d).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from shopgen.commands.catalogs import catalog_of_tasks, open_catalog
from shopgen.commands.options import ENV_HELP, SEED, parse_envs
from shopgen.commands.tasks import parse_overrides
from shopgen.console import counted, progress_bar
from shopgen.env.episode import ShopEnv
from shopgen.gen.difficulty import parse_d_range
from shopgen.policies import POLICIES, REFERENCE
from shopgen.policies.evaluate import Cell, generated_rows
from shopgen.policies.evaluate import evaluate as play_all
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.validation import parse_count
from shopgen.task_writer import read_tasks


@click.command(name="eval")
@click.option("--tasks", "tasks_dir", type=click.Path(path_type=Path), help="Task dataset.")
@click.option("--env", "env_name", help=f"Generate tasks: {ENV_HELP}")
@click.option("--d", "d_text", default="0-12", show_default=True, help="Levels, e.g. 0-12.")
@click.option("--n", "n_text", default="20", show_default=True, help="Tasks per (env, d).")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--axis", "axes", multiple=True, help="θ override name=value (repeatable).")
@click.option("--catalog", type=click.Path(path_type=Path), help="Catalog (default data/catalog).")
@click.option(
    "--policy",
    "policies",
    multiple=True,
    type=click.Choice(POLICIES),
    help="Policies to play (repeatable; default: oracle, heuristic, random).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines instead of a table.")
@click.option(
    "--summary", is_flag=True, help="One table of policies × environments over all levels."
)
def evaluate_cmd(
    tasks_dir: Path | None,
    env_name: str | None,
    d_text: str,
    n_text: str,
    seed: int,
    axes: tuple[str, ...],
    catalog: Path | None,
    policies: tuple[str, ...],
    as_json: bool,
    summary: bool,
) -> None:
    """Play policies on a task dataset or on tasks generated now; print solve rate and reward."""
    if (tasks_dir is None) == (env_name is None):
        raise ConfigError("give exactly one of --tasks DIR or --env NAME|all")
    if tasks_dir is not None:
        env = ShopEnv(catalog_of_tasks(catalog, [tasks_dir]))
        rows = read_tasks(tasks_dir)
        total = len(rows)
    else:
        envs = parse_envs(env_name)
        levels, n = parse_d_range(d_text), parse_count(n_text, field="n")
        overrides = parse_overrides(axes)
        env = ShopEnv(open_catalog(catalog, envs=envs))
        rows = generated_rows(env, envs, levels, n, seed=seed, overrides=overrides)
        total = len(envs) * len(levels) * n
    with progress_bar(total, "tasks") as advance:
        cells = play_all(env, counted(rows, advance), policies or REFERENCE)
    if as_json:
        for cell in cells:
            click.echo(json.dumps(cell.to_dict()))
        return
    if summary:
        print_summary(cells)
    else:
        print_table(cells)


def print_table(cells: list[Cell]) -> None:
    """One block per policy: rows are environments, columns difficulty levels."""
    levels = sorted({c.d for c in cells})
    for policy in dict.fromkeys(c.policy for c in cells):
        mine = {(c.env, c.d): c for c in cells if c.policy == policy}
        click.echo(f"\n{policy}  (solve rate / mean reward; max reward 0.90)")
        click.echo(f"{'env':<14}" + "".join(f"{'d=' + str(d):>13}" for d in levels))
        for env_name in sorted({e for e, _ in mine}):
            row = [mine.get((env_name, d)) for d in levels]
            click.echo(
                f"{env_name:<14}"
                + "".join(
                    f"{c.solve_rate:>6.0%}/{c.mean_reward:+.2f}" if c else f"{'-':>13}" for c in row
                )
            )


def print_summary(cells: list[Cell]) -> None:
    """One table over all levels: rows are policies, columns environments."""
    envs = sorted({c.env for c in cells})
    click.echo(f"{'policy':<22}" + "".join(f"{e:>14}" for e in envs))
    for policy in dict.fromkeys(c.policy for c in cells):
        row = []
        for e in envs:
            mine = [c for c in cells if c.policy == policy and c.env == e]
            n = sum(c.n for c in mine)
            if not n:
                row.append(f"{'-':>14}")
                continue
            solved = sum(c.solved for c in mine) / n
            reward = sum(c.reward_sum for c in mine) / n
            row.append(f"{solved:>6.0%}/{reward:+.2f}".rjust(14))
        click.echo(f"{policy:<22}" + "".join(row))
    click.echo("(solve rate / mean reward over every level; the maximum reward is 0.90)")
