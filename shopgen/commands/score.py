"""``shopgen score``: replay trajectories against their tasks and report rewards."""

from __future__ import annotations

import json
from pathlib import Path

import click

from shopgen.commands.tasks import open_catalog
from shopgen.env.episode import ShopEnv
from shopgen.task_writer import read_tasks
from shopgen.verifiers.score import check_versions, score_lines, summarize


@click.command()
@click.option(
    "--tasks", "tasks_dir", required=True, type=click.Path(path_type=Path), help="Task dataset."
)
@click.option(
    "--trajectories", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="Catalog the tasks were drawn from (default data/catalog).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), help="Write one JSON line per trajectory here."
)
@click.option(
    "--allow-mixed-versions", is_flag=True, help="Pool tasks graded by different verifier versions."
)
def score(
    tasks_dir: Path,
    trajectories: Path,
    catalog: Path | None,
    out: Path | None,
    allow_mixed_versions: bool,
) -> None:
    """Score TRAJECTORIES (JSON lines {"task_id", "messages"}) against TASKS."""
    tasks = {t.task_id: t for t in read_tasks(tasks_dir)}
    check_versions(tasks.values(), allow_mixed=allow_mixed_versions)
    env = ShopEnv(open_catalog(catalog))
    with trajectories.open(encoding="utf-8") as fh:
        results = list(score_lines(env, tasks, fh))
    if out:
        out.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results), encoding="utf-8")
    errors = [r for r in results if r.error]
    for row in summarize(results):
        passes = "  ".join(f"{k} {v:.3f}" for k, v in row.items() if k.startswith("pass^"))
        click.echo(
            f"{row['env']:<13} d={row['d']:<3} n={row['n']:<6} correct {row['success']:.1%}  "
            f"reward {row['mean_reward']:+.3f}  {passes}"
        )
    scored = len(results) - len(errors)
    click.echo(
        f"scored {scored} trajectories" + (f"; {len(errors)} could not be scored" if errors else "")
    )
    for r in errors[:5]:
        click.echo(f"  {r.task_id}: {r.error}", err=True)
