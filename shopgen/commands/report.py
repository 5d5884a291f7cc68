"""``shopgen report``: the calibration report as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from shopgen.commands.catalogs import catalog_of_tasks, open_catalog
from shopgen.commands.options import ENV_HELP, SEED, parse_envs
from shopgen.console import counted, progress_bar
from shopgen.env.episode import ShopEnv
from shopgen.gen.difficulty import parse_d_range
from shopgen.policies import REFERENCE
from shopgen.policies.evaluate import evaluate, generated_rows
from shopgen.report import axis_effects, catalog_realism, diversity, effect_settings, render
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.validation import parse_count
from shopgen.task_writer import read_tasks


@click.command()
@click.option("--tasks", "tasks_dir", type=click.Path(path_type=Path), help="Task dataset.")
@click.option("--env", "env_name", help=f"Generate tasks: {ENV_HELP}")
@click.option("--d", "d_text", default="0-12", show_default=True, help="Levels, e.g. 0-12.")
@click.option("--n", "n_text", default="10", show_default=True, help="Tasks per (env, d).")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--catalog", type=click.Path(path_type=Path), help="Catalog (default data/catalog).")
@click.option(
    "--axis-n",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Tasks per (env, axis) for the per-axis effect.",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="HTML file to write.")
def report(
    tasks_dir: Path | None,
    env_name: str | None,
    d_text: str,
    n_text: str,
    seed: int,
    catalog: Path | None,
    axis_n: int,
    out: Path,
) -> None:
    """Write the calibration report: policies vs d, per-axis effect, catalog realism, diversity."""
    if (tasks_dir is None) == (env_name is None):
        raise ConfigError("give exactly one of --tasks DIR or --env NAME|all")
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory: name the HTML file to write")
    if tasks_dir is not None:
        store = catalog_of_tasks(catalog, [tasks_dir])
        env = ShopEnv(store)
        rows = read_tasks(tasks_dir)
    else:
        envs = parse_envs(env_name)
        levels, n = parse_d_range(d_text), parse_count(n_text, field="n")
        store = open_catalog(catalog, envs=envs)
        env = ShopEnv(store)
        with progress_bar(len(envs) * len(levels) * n, "making tasks") as advance:
            rows = list(counted(generated_rows(env, envs, levels, n, seed=seed), advance))
    if not rows:
        raise ConfigError("no tasks to report on")
    with progress_bar(len(rows), "playing the reference policies") as advance:
        cells = evaluate(env, counted(rows, advance), REFERENCE)
    envs_seen = sorted({r.env for r in rows})
    d = max(r.d for r in rows)
    runs = sum(len(effect_settings(e, d)) for e in envs_seen)
    with progress_bar(runs * axis_n, "per-axis effects") as advance:
        effects = axis_effects(env, envs_seen, d, axis_n, seed=seed, progress=advance)
    page = render(
        cells=cells, effects=effects, realism=catalog_realism(store.root), diverse=diversity(rows)
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    click.echo(f"wrote {out} ({len(rows)} tasks, {len(cells)} policy cells)")
