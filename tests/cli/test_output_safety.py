"""Where a command writes: never over its own inputs, ``--force`` only over a shopgen dataset.

Each test names something the audit did: ``catalog --out /tmp/x --force`` deleted a
directory of notes, ``export --tasks T --out T --force`` destroyed the task set it was
reading, ``score --out`` overwrote the trajectories, and datasets came out 0700 / 0600 so
other users of a shared filesystem could not read them.
"""

import contextlib
import json
import os
import shutil
import stat

import pytest

from shopgen.cli import main
from shopgen.task_writer import read_tasks


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def one_error(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("shopgen: error:")]
    assert len(lines) == 1, err
    return lines[0]


def snapshot(root) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and mtime: what "changed nothing" compares."""
    return {
        p.relative_to(root).as_posix(): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture(scope="module")
def work(indexed_catalog_dir, tmp_path_factory):
    """A directory holding ``cat`` (the indexed fixture catalog), ``tasks`` from it and
    ``runs.jsonl`` (their oracle trajectories)."""
    root = tmp_path_factory.mktemp("safety")
    shutil.copytree(indexed_catalog_dir, root / "cat")
    code = main(["tasks", "--env", "policy", "--d", "0", "--n", "2",
                 "--catalog", str(root / "cat"), "--out", str(root / "tasks")])  # fmt: skip
    assert code == 0
    lines = [
        json.dumps({"task_id": r.task_id, "messages": json.loads(r.oracle)}) + "\n"
        for r in read_tasks(root / "tasks")
    ]
    (root / "runs.jsonl").write_text("".join(lines))
    (root / "tasks-link").symlink_to(root / "tasks", target_is_directory=True)
    return root


#: A command writing a dataset, with everything but ``--out`` (relative to ``work``).
WRITERS = {
    "catalog": ["catalog", "--size", "200"],
    "tasks": ["tasks", "--env", "policy", "--d", "0", "--n", "1", "--catalog", "cat"],
    "export": ["export", "--tasks", "tasks", "--format", "trl"],
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_force_never_replaces_a_directory_that_is_not_a_dataset(
    work, tmp_path, monkeypatch, capsys, command
):
    """``catalog --size 1000 --out /tmp/x --force`` deleted /tmp/x/src/notes.txt."""
    monkeypatch.chdir(work)
    precious = tmp_path / "x"
    (precious / "src").mkdir(parents=True)
    (precious / "src" / "notes.txt").write_text("precious")
    before = snapshot(tmp_path)
    code = main([*WRITERS[command], "--out", str(precious), "--force"])
    assert code == 1
    line = one_error(capsys.readouterr().err)
    assert "not a shopgen dataset" in line
    assert "--force only replaces a shopgen dataset or an empty directory" in line
    assert snapshot(tmp_path) == before  # not even a staging directory left beside it
    assert (precious / "src" / "notes.txt").read_text() == "precious"


def test_force_refuses_a_directory_whose_manifest_is_not_shopgens(work, tmp_path, capsys):
    out = tmp_path / "x"
    out.mkdir()
    (out / "manifest.json").write_text('{"name": "some other tool"}')
    code = main(["export", "--tasks", str(work / "tasks"), "--format", "trl",
                 "--out", str(out), "--force"])  # fmt: skip
    assert code == 1
    assert "not a shopgen dataset" in one_error(capsys.readouterr().err)
    assert (out / "manifest.json").read_text() == '{"name": "some other tool"}'


def test_force_still_replaces_a_shopgen_dataset_and_fills_an_empty_directory(work, tmp_path):
    out = tmp_path / "trl"
    out.mkdir()  # empty: no --force needed
    args = ["export", "--tasks", str(work / "tasks"), "--format", "trl", "--out", str(out)]
    assert main(args) == 0
    first = (out / "manifest.json").stat().st_mtime_ns
    assert main(args) == 1  # a dataset is there now: it takes --force
    assert main([*args, "--force"]) == 0
    assert (out / "manifest.json").stat().st_mtime_ns != first
    assert (out / "data").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["trl"]  # no staging or trash left


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["export", "--tasks", "tasks", "--format", "trl", "--out", "tasks", "--force"],
         "--out tasks is the --tasks input tasks"),
        (["export", "--tasks", "tasks", "--format", "trl", "--out", "tasks/trl", "--force"],
         "--out tasks/trl is inside the --tasks input tasks"),
        (["export", "--tasks", "tasks", "--format", "trl", "--out", ".", "--force"],
         "--out . contains the --tasks input tasks"),
        (["export", "--tasks", "tasks", "--format", "trl", "--out", "tasks-link", "--force"],
         "--out tasks-link is the --tasks input tasks"),
        (["export", "--tasks", "tasks", "--format", "sft", "--out", "cat", "--force"],
         "is the --catalog input"),  # the catalog found through the task manifest
        (["tasks", "--env", "policy", "--n", "1", "--catalog", "cat", "--out", "cat", "--force"],
         "--out cat is the --catalog input cat"),
        (["score", "--tasks", "tasks", "--trajectories", "runs.jsonl", "--out", "runs.jsonl"],
         "--out runs.jsonl is the --trajectories input runs.jsonl"),
        (["score", "--tasks", "tasks", "--trajectories", "runs.jsonl",
          "--out", "tasks/scores.jsonl"],
         "--out tasks/scores.jsonl is inside the --tasks input tasks"),
        (["score", "--tasks", "tasks", "--trajectories", "runs.jsonl", "--out", "cat/s.jsonl"],
         "is inside the --catalog input"),
    ],
)  # fmt: skip
def test_an_output_never_overlaps_the_commands_inputs(work, monkeypatch, capsys, args, needle):
    monkeypatch.chdir(work)
    before = snapshot(work)
    code = main(args)
    assert code != 0
    line = one_error(capsys.readouterr().err)
    assert needle in line
    assert "choose another --out" in line
    assert snapshot(work) == before


def test_score_out_through_a_hard_link_to_the_trajectories_is_refused(work, tmp_path, capsys):
    link = tmp_path / "scores.jsonl"
    os.link(work / "runs.jsonl", link)
    before = (work / "runs.jsonl").read_text()
    code = main(["score", "--tasks", str(work / "tasks"),
                 "--trajectories", str(work / "runs.jsonl"), "--out", str(link)])  # fmt: skip
    assert code == 1
    assert "is the --trajectories input" in one_error(capsys.readouterr().err)
    assert (work / "runs.jsonl").read_text() == before


def test_score_still_writes_an_out_beside_its_inputs(work, tmp_path):
    out = tmp_path / "scores.jsonl"
    code = main(["score", "--tasks", str(work / "tasks"),
                 "--trajectories", str(work / "runs.jsonl"), "--out", str(out)])  # fmt: skip
    assert code == 0
    assert len(out.read_text().splitlines()) == 2


def modes(root) -> set[tuple[str, int]]:
    """("d" or "f", permission bits) of ``root`` and everything under it."""
    paths = [root, *root.rglob("*")]
    return {("d" if p.is_dir() else "f", stat.S_IMODE(p.stat().st_mode)) for p in paths}


def test_datasets_get_the_umask_modes_not_tempfiles_private_ones(work, tmp_path):
    """Catalogs came out 0700 with a 0600 manifest after indexing, whatever the umask."""
    catalog, export = tmp_path / "cat", tmp_path / "verl"
    with umask(0o027):
        assert main(["catalog", "--size", "200", "--out", str(catalog)]) == 0
        assert modes(catalog) == {("d", 0o750), ("f", 0o640)}
        assert main(["index", "--catalog", str(catalog)]) == 0
        assert modes(catalog) == {("d", 0o750), ("f", 0o640)}
        assert main(["catalog", "--size", "200", "--out", str(catalog), "--force"]) == 0
        assert modes(catalog) == {("d", 0o750), ("f", 0o640)}
        args = ["export", "--tasks", str(work / "tasks"), "--format", "verl", "--out", str(export)]
        assert main([*args, "--catalog", str(work / "cat")]) == 0
        assert modes(export) == {("d", 0o750), ("f", 0o640)}
    with umask(0o022):
        assert main(["catalog", "--size", "200", "--out", str(catalog), "--force"]) == 0
        assert main(["index", "--catalog", str(catalog)]) == 0
        assert modes(catalog) == {("d", 0o755), ("f", 0o644)}
