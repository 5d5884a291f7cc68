"""``shopgen serve``: the OpenEnv-style HTTP server over a catalog (loopback by default)."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from shopgen.commands.catalogs import catalog_of_tasks, checked
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError


def free_port(host: str, port: int) -> int:
    """``port`` (or, for 0, a free one) once a socket could bind it on ``host``.

    Checked before the catalog loads and the address is announced, so a port in use is one
    line naming the fix instead of a server that says it is serving and then exits.

    Raises:
        ConfigError: when the address cannot be bound (in use, not this machine's, unknown).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
            return probe.getsockname()[1]
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port/--host)"
        ) from None


@click.command()
@click.option("--catalog", required=True, type=click.Path(path_type=Path), help="Catalog dataset.")
@click.option(
    "--tasks",
    "task_dirs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Task dataset(s) whose tasks reset(task_id=…) can name (repeatable).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--max-sessions", default=4096, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--max-request-bytes",
    default=2 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(min=1024),
    help="Largest request body served (larger ones get 413).",
)
@click.option(
    "--details",
    is_flag=True,
    help="Also serve the verifier's score details and the state's extra records. They name "
    "the hidden goal (a cart's missing lines, the customer's slots): for debugging, never "
    "for training.",
)
def serve(
    catalog: Path,
    task_dirs: tuple[Path, ...],
    host: str,
    port: int,
    max_sessions: int,
    max_request_bytes: int,
    details: bool,
) -> None:
    """Serve shopgen episodes over HTTP: reset, step, state, close, health, schema."""
    try:
        import uvicorn

        from shopgen.server import create_app
    except ImportError:
        raise ConfigError(
            "shopgen serve needs the server extra: pip install 'shopgen[server]'"
        ) from None
    from shopgen.task_writer import read_tasks

    port = free_port(host, port)
    if task_dirs:
        catalog_of_tasks(catalog, task_dirs)
    else:
        checked(CatalogStore(catalog))
    tasks = [t for d in task_dirs for t in read_tasks(d)]
    app = create_app(
        catalog,
        tasks=tasks,
        max_sessions=max_sessions,
        details=details,
        max_request_bytes=max_request_bytes,
    )
    shown = ", with score details (hidden goal data)" if details else ""
    click.echo(f"serving {catalog} ({len(tasks):,} tasks{shown}) on http://{host}:{port}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
