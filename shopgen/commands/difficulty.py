"""``shopgen difficulty``: print θ(d) and the environment schedules for one level or a grid."""

from __future__ import annotations

import sys

import click

from shopgen.gen.difficulty import AXES, parse_d_range, theta
from shopgen.gen.schedules import SCHEDULES, schedules


def _fmt(value: float) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def rows(levels: list[int]) -> tuple[list[str], list[list[str]]]:
    """Header and one row per axis, then a ``schedule`` header and one row per schedule.

    The second header keeps the twelve θ axes (what ``--axis`` overrides) apart from the
    environments' own schedules, which are derived from ``d`` and cannot be overridden.
    """
    header = ["axis", *(f"d={d}" for d in levels)]
    table = {d: {**theta(d).to_dict(), **schedules(d)} for d in levels}
    body = [[name, *(_fmt(table[d][name]) for d in levels)] for name in AXES]
    body.append(["schedule", *header[1:]])
    body += [[name, *(_fmt(table[d][name]) for d in levels)] for name in SCHEDULES]
    return header, body


@click.command()
@click.option(
    "--d",
    "d_text",
    default="5",
    show_default=True,
    help="A level (5), range (0-12) or list (0,3,6).",
)
def difficulty(d_text: str) -> None:
    """Print the difficulty axes θ(d) and the environment schedules."""
    header, body = rows(parse_d_range(d_text))
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*header, title="θ(d)")
        for row in body:
            if row[0] == "schedule":
                table.add_section()
            table.add_row(*row, style="bold" if row[0] == "schedule" else None)
        Console().print(table)
        return
    widths = [max(len(r[i]) for r in (header, *body)) for i in range(len(header))]
    for row in (header, *body):
        click.echo(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
