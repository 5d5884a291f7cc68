"""``shopgen validate``: check a dataset against its manifest, schemas and invariants."""

from __future__ import annotations

from pathlib import Path

import click

from shopgen.gen.validate import validate_dataset
from shopgen.schemas.errors import DatasetError


@click.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--no-checksums", is_flag=True, help="Skip SHA-256 verification (faster on big datasets)."
)
def validate(directory: Path, no_checksums: bool) -> None:
    """Check DIRECTORY: checksums, schemas, integrity, value ranges and its policy rules.

    A world's stored policy rules must be the rule file the runtime evaluates; a task set's
    rows must be ones play can read (θ's axes, the episode's keys, the user script).
    """
    problems = validate_dataset(directory, checksums=not no_checksums)
    if problems:
        for problem in problems:
            click.echo(f"  {problem}", err=True)
        raise DatasetError(f"{directory}: {len(problems)} problem(s) found")
    click.echo(f"{directory}: valid")
