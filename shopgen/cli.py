"""The ``shopgen`` command: a Click group whose subcommands load on first use.

Every error a user can cause ends as one line on stderr and a non-zero exit; a traceback is
shown only with ``SHOPGEN_DEBUG=1``.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from shopgen.schemas.errors import ShopgenError

#: Command name → "module:attribute". Adding a command is one line here plus its module.
COMMANDS: dict[str, str] = {
    "catalog": "shopgen.commands.catalog:catalog",
    "validate": "shopgen.commands.validate:validate",
    "difficulty": "shopgen.commands.difficulty:difficulty",
    "index": "shopgen.commands.index:index",
    "search": "shopgen.commands.search:search",
    "play": "shopgen.commands.play:play",
    "tasks": "shopgen.commands.tasks:tasks",
    "score": "shopgen.commands.score:score",
    "export": "shopgen.commands.export:export",
    "serve": "shopgen.commands.serve:serve",
    "eval": "shopgen.commands.eval:evaluate_cmd",
    "report": "shopgen.commands.report:report",
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 (Click's API)
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: D102
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shopgen")
def cli() -> None:
    """Synthetic e-commerce worlds and verifiable shopping-agent tasks for RL."""


EXIT_USAGE, EXIT_ERROR, EXIT_BUG, EXIT_INTERRUPTED = 2, 1, 70, 130


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and turn every failure into one line and an exit code."""
    try:
        cli.main(args=argv, prog_name="shopgen", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.Abort:
        return _fail("aborted", EXIT_INTERRUPTED)
    except click.ClickException as exc:
        return _fail(
            exc.format_message(), EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_ERROR
        )
    except ShopgenError as exc:
        return _fail(str(exc), EXIT_ERROR)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except OSError as exc:
        return _fail(
            f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", EXIT_ERROR
        )
    except Exception as exc:  # the boundary: anything else is a bug, reported in one line
        if os.environ.get("SHOPGEN_DEBUG"):
            raise
        if is_unreadable_data(exc):
            return _fail(
                f"unreadable data file: {exc} (`shopgen validate DIR` checks a dataset)",
                EXIT_ERROR,
            )
        return _fail(
            f"internal error: {type(exc).__name__}: {exc} (set SHOPGEN_DEBUG=1 for a traceback)",
            EXIT_BUG,
        )
    return 0


#: (module prefix, class name) of the readers' errors for a file that is not valid Parquet.
_READER_ERRORS = (
    ("pyarrow", "ArrowInvalid"),
    ("polars", "ComputeError"),
    ("duckdb", "IOException"),
    ("duckdb", "InvalidInputException"),
)


def is_unreadable_data(exc: BaseException) -> bool:
    """Whether ``exc`` is a Parquet reader rejecting a file: damaged data, not a shopgen bug.

    Commands check a dataset's files against its manifest before reading (sizes only), so
    this catches what that cannot: a file changed in place to the same size, or read by a
    code path that skips the check. Matched by name so the CLI imports no reader up front.
    """
    if "parquet" not in str(exc).lower():
        return False
    return any(
        cls.__module__.lstrip("_").startswith(module) and cls.__name__ == name
        for cls in type(exc).__mro__
        for module, name in _READER_ERRORS
    )


def _fail(message: str, code: int) -> int:
    first = " ".join(str(message).split())
    click.echo(f"shopgen: error: {first}", err=True)
    return code


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
