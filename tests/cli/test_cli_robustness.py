"""Damaged data, SIGTERM, tiny inputs and a bare ``shopgen``: one line, a clean exit, no debris.

Each test here is a defect a user audit found: a polars panic's traceback, a catalog called
valid although a file of it cannot be read, worker processes orphaned by SIGTERM, "internal
error" for ``--size 1``, ``--out .`` or an IVF-PQ index of two products, and the help text
squashed onto one line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from shopgen.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "shopgen", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )
    return proc.returncode, proc.stdout, proc.stderr


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("shopgen: error:")]
    assert len(lines) == 1, err
    return lines[0]


# -- damaged data ----------------------------------------------------------------------------


def damage_in_place(path: Path, column: str = "description") -> None:
    """Overwrite bytes inside ``column``'s pages, keeping the file's size (and its footer)."""
    meta = pq.ParquetFile(path).metadata
    names = [meta.row_group(0).column(i).path_in_schema for i in range(meta.num_columns)]
    chunk = meta.row_group(0).column(names.index(column))
    start = chunk.data_page_offset + chunk.total_compressed_size // 4
    length = min(4000, chunk.total_compressed_size // 2)
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(start)
        f.write(bytes(length))
    assert path.stat().st_size == size


@pytest.fixture
def damaged_catalog(indexed_catalog_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the indexed fixture catalog whose products file is damaged in place."""
    root = tmp_path / "damaged"
    shutil.copytree(indexed_catalog_dir, root)
    shard = sorted((root / "products").glob("*.parquet"))[0]
    damage_in_place(shard)
    return root, shard


def test_validate_without_checksums_reports_an_unreadable_file(damaged_catalog):
    """It said "valid": the row count comes from the footer and no rule reads descriptions."""
    root, shard = damaged_catalog
    code, _, err = run("validate", str(root), "--no-checksums")
    assert code == 1
    assert "1 problem" in one_error_line(err)
    rel = shard.relative_to(root).as_posix()
    assert f"{rel}: not readable as Parquet" in err
    code, _, err = run("validate", str(root))  # with checksums: the mismatch names it
    assert code == 1
    assert "checksum mismatch" in err


def test_a_damaged_file_a_command_reads_is_named_in_one_line(damaged_catalog, tmp_path):
    root, shard = damaged_catalog
    args = ("tasks", "--env", "discovery", "--d", "3", "--n", "2", "--catalog", str(root))
    code, _, err = run(*args, "--out", str(tmp_path / "t"))
    assert code == 1
    line = one_error_line(err)
    assert f"unreadable data file {shard}" in line
    assert f"`shopgen validate {root}`" in line
    assert not (tmp_path / "t").exists()


def _panic(*args, **kwargs):
    raise pl.exceptions.PanicException("assertion `left == right` failed\n  left: 1\n right: 0")


def test_a_polars_panic_on_a_damaged_file_is_one_line(damaged_catalog, monkeypatch, capsys):
    """pyo3's PanicException is a BaseException: it escaped ``except Exception`` with a
    ~90-line traceback."""
    from shopgen.gen.store import CatalogStore

    root, shard = damaged_catalog
    monkeypatch.delenv("SHOPGEN_DEBUG", raising=False)
    monkeypatch.setattr(CatalogStore, "read", _panic)
    code = main(["search", "--catalog", str(root), "lamp"])
    assert code == 1
    line = one_error_line(capsys.readouterr().err)
    assert f"unreadable data file {shard}" in line
    assert "shopgen validate" in line


def test_a_polars_panic_with_no_damaged_file_is_one_line(indexed_catalog_dir, monkeypatch, capsys):
    from shopgen.gen.store import CatalogStore

    monkeypatch.delenv("SHOPGEN_DEBUG", raising=False)
    monkeypatch.setattr(CatalogStore, "read", _panic)
    assert main(["search", "--catalog", str(indexed_catalog_dir), "lamp"]) == 70
    line = one_error_line(capsys.readouterr().err)
    assert "panicked: assertion `left == right` failed" in line
    assert "shopgen validate" in line


def test_validate_reports_a_reader_panic_as_a_problem(catalog_dir, monkeypatch):
    from shopgen.gen.validate import validate_dataset

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", _panic)
    problems = validate_dataset(catalog_dir, checksums=False)
    assert problems
    assert all("not readable as Parquet (PanicException" in p for p in problems)


# -- SIGTERM ---------------------------------------------------------------------------------


def _children(pid: int) -> dict[int, int]:
    """Direct children of ``pid``: pid → ppid (psutil when installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        out = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    stat = (entry / "stat").read_text()
                    ppid = int(stat.rpartition(")")[2].split()[1])
                    if ppid == pid:
                        out[int(entry.name)] = ppid
        return out
    with contextlib.suppress(psutil.Error):
        return {c.pid: pid for c in psutil.Process(pid).children()}
    return {}


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        kids = set(_children(todo.pop())) - found
        found |= kids
        todo.extend(kids)
    return found


def _alive(pid: int) -> bool:
    """Running and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        with contextlib.suppress(OSError):
            os.kill(pid, 0)
            return True
        return False
    return state not in ("Z", "X")


def _cpu_ticks(pid: int) -> int:
    """User + system CPU ticks a process has spent (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _wait_for(condition, seconds: float) -> None:
    """Poll ``condition`` until it holds or ``seconds`` pass (the caller asserts what follows).

    A wait for a state of other processes, not a measure of speed: the bound only keeps a
    broken run from hanging the suite.
    """
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc; POSIX signals")
def test_sigterm_cleans_up_like_ctrl_c(tmp_path):
    """SIGTERM exited 143 at once: both spawn workers and the resource tracker lived on
    (reparented to init) and the hidden staging directory stayed behind."""
    catalog = tmp_path / "c"
    assert run("catalog", "--size", "2000", "--out", str(catalog))[0] == 0
    assert run("index", "--catalog", str(catalog))[0] == 0
    out = tmp_path / "t"
    args = ["tasks", "--env", "discovery", "--d", "5", "--n", "30000", "--catalog", str(catalog)]
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:  # not a pipe: orphans holding it would hang a reader
        proc = subprocess.Popen(
            [sys.executable, "-m", "shopgen", *args, "--out", str(out), "--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    seen: set[int] = set()

    def working() -> bool:
        """Both workers exist and have started on their jobs (CPU spent, staging made)."""
        seen.update(_descendants(proc.pid))
        busy = [pid for pid in seen if _cpu_ticks(pid) >= 20]
        return len(busy) >= 2 and bool(list(tmp_path.glob(".t.partial-*")))

    try:
        _wait_for(lambda: working() or proc.poll() is not None, 120)
        assert proc.poll() is None, f"the run ended before it was interrupted: {log.read_text()}"
        assert len(seen) >= 2, "no worker processes started"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        _wait_for(lambda: not any(_alive(p) for p in seen), 10)
        survivors = [p for p in seen if _alive(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen:
            with contextlib.suppress(OSError):
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
    err = log.read_text()
    assert code == 128 + signal.SIGTERM, err
    assert "terminated" in one_error_line(err)
    assert survivors == [], f"processes outlived the run: {survivors}"
    assert not list(tmp_path.glob(".t.partial-*"))
    assert not out.exists()


# -- tiny inputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "seed", "least"), [("1", "0", 2), ("2", "9", 4)])
def test_a_catalog_without_any_variant_is_refused_up_front(tmp_path, size, seed, least):
    """Size 1 (seed 0) ended in "internal error: IndexError" while writing its orders."""
    out = tmp_path / "c"
    code, _, err = run("catalog", "--size", size, "--seed", seed, "--out", str(out))
    assert code == 1
    assert f"give a size of at least {least}" in one_error_line(err)
    assert list(tmp_path.iterdir()) == []
    code, _, err = run("catalog", "--size", str(least), "--seed", seed, "--out", str(out))
    assert code == 0, err
    assert run("validate", str(out))[0] == 0


@pytest.mark.parametrize("out", [".", "./", ".."])
def test_an_output_that_names_no_directory_is_refused(tmp_path, out):
    """``--out . --force`` ended in "internal error: ValueError: PosixPath('.') has an empty
    name" and left a staging directory behind."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    code, _, err = run("catalog", "--size", "1000", "--out", out, "--force", cwd=work)
    assert code == 1
    assert "names no directory of its own" in one_error_line(err)
    assert [p.name for p in tmp_path.rglob("*")] == ["a", "b"]


def test_an_ivfpq_index_of_too_few_products_is_refused(tmp_path):
    """faiss's "Number of training points (2) should be at least ..." was an internal error."""
    catalog = tmp_path / "c"
    assert run("catalog", "--size", "2", "--out", str(catalog))[0] == 0
    code, _, err = run("index", "--catalog", str(catalog), "--kind", "ivfpq")
    assert code == 1
    assert "'ivfpq' needs at least 16 products to train on, the catalog has 2" in (
        one_error_line(err)
    )
    assert not (catalog / "index").exists()
    assert not [p for p in catalog.iterdir() if p.name.startswith(".")]
    assert run("validate", str(catalog))[0] == 0
    assert run("index", "--catalog", str(catalog), "--kind", "ivf")[0] == 0


# -- bare shopgen ----------------------------------------------------------------------------


def test_bare_shopgen_prints_the_help_as_help_does():
    """It printed the whole help on one line as "shopgen: error: Usage: …"."""
    code, out, err = run()
    assert code == 2  # Click's code for a group called without a command
    assert "shopgen: error" not in err
    _, help_out, _ = run("--help")
    assert (out + err).strip() == help_out.strip()
    assert "\nCommands:\n" in help_out
