"""The ``shopgen`` command: a Click group whose subcommands load on first use.

Every error a user can cause ends as one line on stderr and a non-zero exit; a traceback is
shown only with ``SHOPGEN_DEBUG=1``.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
#: A run ended by SIGTERM exits as a shell reports a process killed by it: 128 + 15.
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is, so that the same cleanup runs.

    Without it SIGTERM ended the process at once: worker pools were never shut down (their
    processes and the resource tracker lived on, reparented to init) and staging
    directories stayed behind.
    """


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (only in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        if previous is not None:  # None: a handler not installed from Python; leave ours
            signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and turn every failure into one line and an exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        with sigterm_as_interrupt():
            cli.main(args=args, prog_name="shopgen", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.Abort as exc:  # Click turns KeyboardInterrupt into Abort
        if isinstance(exc.__cause__, Terminated):
            return _fail("terminated", EXIT_TERMINATED)
        return _fail("aborted", EXIT_INTERRUPTED)
    except _NO_ARGS_IS_HELP as exc:  # bare ``shopgen``: the help, as Click shows it
        exc.show()
        return EXIT_USAGE
    except click.ClickException as exc:
        return _fail(
            exc.format_message(), EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_ERROR
        )
    except ShopgenError as exc:
        return _fail(str(exc), EXIT_ERROR)
    except Terminated:
        return _fail("terminated", EXIT_TERMINATED)
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
            return _fail(unreadable_message(exc, args), EXIT_ERROR)
        return _fail(
            f"internal error: {type(exc).__name__}: {exc} (set SHOPGEN_DEBUG=1 for a traceback)",
            EXIT_BUG,
        )
    except BaseException as exc:  # pyo3's PanicException (a polars panic) is no Exception
        if os.environ.get("SHOPGEN_DEBUG") or not is_panic(exc):
            raise
        return _panic(exc, args)
    return 0


#: Click ≥ 8.2 raises this for a group called without a command (older Clicks print the
#: help and exit themselves).
_NO_ARGS_IS_HELP: tuple[type[BaseException], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic raised through pyo3 (polars): a ``BaseException``."""
    return any(
        cls.__name__ == "PanicException" and cls.__module__.startswith("pyo3")
        for cls in type(exc).__mro__
    )


def _panic(exc: BaseException, args: list[str]) -> int:
    """A polars panic: a damaged data file when one of the command's datasets holds one."""
    found = _damaged_file(args)
    if found is not None:
        return _fail(_name_damaged(*found), EXIT_ERROR)
    first = " ".join(str(exc).split())[:200]
    return _fail(
        f"internal error: the data reader (polars) panicked: {first}; if a dataset file is "
        "damaged, `shopgen validate DIR` finds it (set SHOPGEN_DEBUG=1 for a traceback)",
        EXIT_BUG,
    )


def unreadable_message(exc: BaseException, args: list[str]) -> str:
    """One line for a reader's failure, naming the damaged file when it can be found."""
    found = _damaged_file(args)
    if found is not None:
        return _name_damaged(*found)
    return f"unreadable data file: {exc} (`shopgen validate DIR` checks a dataset)"


def _name_damaged(path: Path, problem: str) -> str:
    root = next((p for p in path.parents if (p / "manifest.json").is_file()), path.parent)
    return (
        f"unreadable data file {path}: {problem} (damaged or changed in place; "
        f"`shopgen validate {root}` checks the whole dataset)"
    )


def _damaged_file(args: list[str]) -> tuple[Path, str] | None:
    """The first unreadable Parquet file of the datasets a command was given, if any.

    Candidates: every argument (or ``--option=value``) naming a dataset directory, the
    catalogs those task datasets were made from, and the default catalog.
    """
    try:
        from shopgen.gen.validate import unreadable_file

        return unreadable_file(_dataset_dirs(args))
    except Exception:  # naming the file is a courtesy; the error is reported without it
        return None


def _dataset_dirs(args: list[str]) -> list[Path]:
    import json

    values = [a.partition("=")[2] if a.startswith("--") else a for a in args]
    roots = [Path(v) for v in values if v and (Path(v) / "manifest.json").is_file()]
    for root in list(roots):
        try:
            recorded = json.loads((root / "manifest.json").read_text())["config"].get("catalog")
        except (OSError, ValueError, KeyError, AttributeError):
            continue
        if isinstance(recorded, str) and (Path(recorded) / "manifest.json").is_file():
            roots.append(Path(recorded))
    default = Path("data/catalog")
    if (default / "manifest.json").is_file():
        roots.append(default)
    return list(dict.fromkeys(roots))


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
