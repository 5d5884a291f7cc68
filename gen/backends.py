"""Where shard jobs run: in this process, in local worker processes, or on a Ray cluster.

Every parallel writer (catalog shards, world shards, task shards, index shards) cuts its work
into independent jobs keyed by row ranges, as TPC-DS's ``dsdgen -parallel N -child i`` does,
and hands them to a :class:`concurrent.futures.Executor`. The output never depends on which
executor ran the jobs: each job draws only from its own hash-keyed streams (DESIGN §4) and
results are consumed in job order, so a catalog made on Ray is byte-identical to one made in
one process.

Three executors behind one name each (``--backend``):

- ``local`` with ``workers == 1``: :class:`SerialExecutor`, the jobs run lazily in order in
  this process (no pickling, progress after every job);
- ``local`` with ``workers > 1``: a spawn-context ``ProcessPoolExecutor`` (Polars is not
  fork-safe);
- ``ray``: :class:`RayExecutor`, one Ray task per job on a cluster (``address``) or on a
  local Ray instance. Ray is an optional extra: ``pip install "shopgen[ray]"``.

Jobs that write files write them under the output's staging directory, so on a multi-node
Ray cluster that directory must be on a filesystem every node sees (NFS, a shared volume),
exactly as dsdgen's children write to one shared directory; :func:`check_shared` turns a
missing share into one clear error instead of a half-written dataset.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from shopgen.schemas.errors import ConfigError, DatasetError

#: ``--backend`` names, default first.
BACKENDS: tuple[str, ...] = ("local", "ray")
_RAY_HINT = 'the ray backend needs Ray: pip install "shopgen[ray]"'


class SerialExecutor(Executor):
    """Runs each job in this process when its result is asked for.

    ``map`` is lazy (unlike ``Executor.map``, which submits everything first), so a progress
    bar advances job by job and an error stops the run at the failing job.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:  # noqa: D102
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def map(  # noqa: D102 (Executor's API)
        self,
        fn: Callable[..., Any],
        *iterables: Iterable[Any],
        timeout: float | None = None,
        chunksize: int = 1,
    ) -> Iterator[Any]:
        return map(fn, *iterables)


class RayExecutor(Executor):
    """Runs each job as a Ray task; results come back in submission order.

    Args:
        address: a running cluster (``ray://host:10001`` or ``auto``); None starts a local
            Ray instance unless this process is already connected to one.
        num_cpus: CPUs of a local instance this executor starts (None: Ray's default).

    A Ray session this executor started is shut down by :meth:`shutdown`; one it found
    already running (a test's, a trainer's) is left alone.
    """

    def __init__(self, *, address: str | None = None, num_cpus: int | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is not None:
                kwargs["address"] = address
            elif num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            try:
                ray.init(**kwargs)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = address or "a local instance"
                raise ConfigError(f"cannot start or reach Ray at {where}: {exc}") from None
            self._owned = True
        self._remote: dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:  # noqa: D102
        remote = self._remote.get(fn)
        if remote is None:  # one remote function per callable: pickled once, not per job
            remote = self._remote[fn] = self._ray.remote(fn)
        return remote.remote(*args, **kwargs).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:  # noqa: D102
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error naming the extra to install."""
    if importlib.util.find_spec("ray") is None:
        raise ConfigError(_RAY_HINT)
    import ray

    return ray


def ray_available() -> bool:
    """Whether the optional Ray extra is installed (tests skip their Ray half without it)."""
    return importlib.util.find_spec("ray") is not None


def check_backend(backend: str, *, workers: int = 1, address: str | None = None) -> None:
    """Reject a bad backend combination before any work starts."""
    if backend not in BACKENDS:
        raise ConfigError(f"backend={backend!r} is not one of {', '.join(BACKENDS)}")
    if workers < 1:
        raise ConfigError(f"workers={workers} must be > 0")
    if address is not None and backend != "ray":
        raise ConfigError(f"address={address!r} needs backend='ray' (got {backend!r})")
    if backend == "ray":
        import_ray()


@contextmanager
def open_executor(
    backend: str = "local",
    *,
    workers: int = 1,
    address: str | None = None,
    jobs: int | None = None,
) -> Iterator[Executor]:
    """The executor for ``backend``, shut down when the block ends.

    Args:
        backend: ``local`` or ``ray``.
        workers: local processes (``local`` only; Ray schedules on its own CPUs).
        address: the Ray cluster to join (``ray`` only).
        jobs: how many jobs will run, when known: a local pool never starts more
            processes than jobs, and one job runs in this process.

    Raises:
        ConfigError: an unknown backend, ``address`` without Ray, or Ray not installed.
    """
    check_backend(backend, workers=workers, address=address)
    if backend == "ray":
        executor: Executor = RayExecutor(address=address)
    else:
        n = workers if jobs is None else min(workers, max(1, jobs))
        if n == 1:
            executor = SerialExecutor()
        else:
            ctx = multiprocessing.get_context("spawn")  # polars is not fork-safe
            executor = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
    try:
        yield executor
    finally:
        executor.shutdown(wait=True)


def _is_dir(path: str) -> bool:
    return os.path.isdir(path)


def check_shared(executor: Executor, root: Path) -> None:
    """Fail early when the executor's workers cannot see ``root`` (a Ray node without the share).

    Raises:
        DatasetError: a worker does not see ``root`` as a directory.
    """
    if not isinstance(executor, RayExecutor):  # local processes share this filesystem
        return
    if not executor.submit(_is_dir, str(Path(root).resolve())).result():
        raise DatasetError(
            f"{root} is not visible to the {type(executor).__name__} workers: "
            "put --out on a filesystem every node mounts"
        )
