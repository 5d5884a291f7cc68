"""``shopgen tasks``: generate proven tasks for one or all environments."""

from __future__ import annotations

import time
from pathlib import Path

import click

from shopgen.commands.catalogs import DEFAULT_CATALOG, check_output, open_catalog
from shopgen.commands.options import ENV_HELP, SEED, parse_envs
from shopgen.console import print_summary, progress_bar
from shopgen.env.episode import ShopEnv
from shopgen.gen.backends import BACKENDS, check_backend, open_executor
from shopgen.gen.difficulty import parse_d_range
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.validation import parse_count
from shopgen.task_shards import generate_sharded, task_shards
from shopgen.task_writer import write_tasks
from shopgen.taskgen import TaskFactory


def parse_overrides(pairs: tuple[str, ...]) -> dict[str, float]:
    """``("p_noise=0", "T_max=8")`` → ``{"p_noise": 0.0, "T_max": 8}``."""
    out: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            out[name.strip()] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
        except ValueError:
            raise ConfigError(
                f"--axis {pair!r} must look like name=value (e.g. p_noise=0)"
            ) from None
        if not sep:
            raise ConfigError(f"--axis {pair!r} must look like name=value (e.g. p_noise=0)")
    return out


def read_prompt(path: Path) -> str:
    """The text of ``--system-prompt``; an empty file is refused rather than silently ignored.

    Raises:
        ConfigError: when the file is empty or not UTF-8 text.
    """
    try:
        text = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"--system-prompt {path} is not UTF-8 text") from None
    if not text:
        raise ConfigError(f"--system-prompt {path} is empty")
    return text


@click.command()
@click.option("--env", "env_name", required=True, help=ENV_HELP)
@click.option(
    "--d", "d_text", default="5", show_default=True, help="Level (5), range (0-12) or list (0,3,6)."
)
@click.option(
    "--n", "n_text", default="100", show_default=True, help="Tasks per environment and level."
)
@click.option(
    "--catalog", type=click.Path(path_type=Path), help="Catalog dataset (default data/catalog)."
)
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option(
    "--out", type=click.Path(path_type=Path), help="Output dataset (default data/tasks/ENV-dD)."
)
@click.option(
    "--system-prompt",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Use this system prompt.",
)
@click.option(
    "--axis", "axes", multiple=True, metavar="NAME=VALUE", help="Override a θ axis (repeatable)."
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="local",
    show_default=True,
    help="Where task shards run: local processes or a Ray cluster (pip install shopgen[ray]).",
)
@click.option("--address", help="Ray cluster address (--backend ray; default: a local Ray).")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Local processes."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Stop at the first draw whose oracle fails (a generator bug) instead of skipping it.",
)
@click.option("--force", is_flag=True, help="Replace an existing output directory.")
def tasks(
    env_name: str,
    d_text: str,
    n_text: str,
    catalog: Path | None,
    seed: int,
    out: Path | None,
    system_prompt: Path | None,
    axes: tuple[str, ...],
    backend: str,
    address: str | None,
    workers: int,
    strict: bool,
    force: bool,
) -> None:
    """Generate tasks whose oracle is replayed to the maximum reward before they are kept.

    A draw whose oracle fails is a generator bug: it is skipped like an unusable draw (the
    task is drawn again), listed in the manifest's config.skipped_draws and reported at
    the end, so one rare bug does not end a long run; --strict stops at it instead.
    """
    envs = parse_envs(env_name)
    levels = parse_d_range(d_text)
    n = parse_count(n_text, field="n")
    overrides = parse_overrides(axes)
    check_backend(backend, workers=workers, address=address)
    out = out or Path("data/tasks") / f"{env_name.replace(',', '+')}-d{d_text.replace(',', '_')}"
    inputs = {"--catalog": catalog or DEFAULT_CATALOG, "--system-prompt": system_prompt}
    check_output(out, inputs, force=force)  # before the default catalog is built
    prompt = read_prompt(system_prompt) if system_prompt else None
    store = open_catalog(catalog, envs=envs)
    factory = TaskFactory(
        ShopEnv(store),
        seed=seed,
        overrides=overrides,
        prompt=prompt,
        freeze_heap=True,
        skip_failed_oracles=not strict,
    )
    config = {
        "envs": envs,
        "d": levels,
        "n": n,
        "seed": seed,
        "axis_overrides": overrides,
        "catalog": str(store.root.resolve()),
        "system_prompt": str(system_prompt) if system_prompt else None,
        "skip_failed_oracles": not strict,
    }
    started = time.perf_counter()
    sharded = backend != "local" or workers > 1
    shards = task_shards(
        store.root,
        envs=envs,
        ds=levels,
        n=n,
        seed=seed,
        overrides=overrides,
        prompt=prompt,
        skip_failed_oracles=not strict,
    )
    skipped = [] if sharded else factory.skipped
    with (
        progress_bar(len(envs) * len(levels) * n, "tasks") as advance,
        open_executor(backend, workers=workers, address=address, jobs=len(shards)) as executor,
    ):
        # Sharded or not, the rows and their order are the same (tests/gen/test_backends.py).
        if sharded:
            rows = generate_sharded(executor, shards, skipped)
        else:
            rows = (g.row for g in factory.batch(envs, levels, n))
        manifest = write_tasks(
            rows,
            out,
            seed=seed,
            config=config,
            parents=[store.catalog_id],
            force=force,
            progress=advance,
            outcome=lambda: {"skipped_draws": [s.to_dict() for s in skipped]},
        )
    print_summary(out, manifest, time.perf_counter() - started)
    if skipped:
        first = skipped[0]
        click.echo(
            f"warning: skipped {len(skipped)} draw(s) whose oracle failed, a generator bug "
            f"(first: {first.env} d={first.d} k={first.k} attempt {first.attempt}); all are "
            f"listed in {out / 'manifest.json'} under config.skipped_draws: please report them",
            err=True,
        )
