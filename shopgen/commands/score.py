"""``shopgen score``: replay trajectories against their tasks and report rewards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click

from shopgen.commands.catalogs import catalog_of_tasks, check_output
from shopgen.env.episode import ShopEnv
from shopgen.schemas.errors import DatasetError
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
    help="Catalog the tasks were drawn from (default: the path their manifest recorded, then "
    "data/catalog).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write one JSON line per trajectory here (with the reason for any not scored).",
)
@click.option(
    "--allow-mixed-versions",
    is_flag=True,
    help="Score tasks made for other verifier versions than the installed one, or for several.",
)
def score(
    tasks_dir: Path,
    trajectories: Path,
    catalog: Path | None,
    out: Path | None,
    allow_mixed_versions: bool,
) -> None:
    """Score TRAJECTORIES (JSON lines {"task_id", "messages"}) against TASKS.

    Exits non-zero when any line could not be scored (unreadable, unknown task_id), after
    printing the scores of the others and writing every line's result to --out; a file that
    is not UTF-8 text stops before anything is printed or written.
    """
    store = catalog_of_tasks(catalog, [tasks_dir])
    if out:
        inputs = {"--tasks": tasks_dir, "--trajectories": trajectories, "--catalog": store.root}
        check_output(out, inputs)
    tasks = {t.task_id: t for t in read_tasks(tasks_dir)}
    check_versions(tasks.values(), allow_mixed=allow_mixed_versions)
    env = ShopEnv(store)
    lines = _text_lines(trajectories)
    results = list(score_lines(env, tasks, lines))
    if not results:
        raise DatasetError(f"{trajectories} holds no trajectories")
    if out:
        out.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results), encoding="utf-8")
    errors = [r for r in results if r.error]
    for row in summarize(results):
        passes = "  ".join(f"{k} {v:.3f}" for k, v in row.items() if k.startswith("pass^"))
        click.echo(
            f"{row['env']:<13} d={row['d']:<3} n={row['n']:<6} correct {row['success']:.1%}  "
            f"reward {row['mean_reward']:+.3f} (r_task {row['mean_r_task']:+.3f}, "
            f"r_eff {row['mean_r_eff']:.3f}, r_hall {row['mean_r_hall']:+.3f})  {passes}"
        )
    click.echo(f"scored {len(results) - len(errors)} trajectories")
    if errors:
        where = f"every reason is in {out}" if out else "--out FILE keeps every reason"
        raise DatasetError(
            f"{len(errors)} of {len(results)} trajectories could not be scored; the first, "
            f"{errors[0].task_id}: {errors[0].error} ({where})"
        )


def _text_lines(path: Path) -> Iterator[str]:
    """The lines of ``path`` as text; a line that is not UTF-8 stops the run.

    Raises:
        DatasetError: naming the first line that does not decode.
    """
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DatasetError(
                    f"{path}: line {number} is not UTF-8 text (expected JSON lines)"
                ) from None
