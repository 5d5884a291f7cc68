"""Commands find and check their datasets before working: one line naming the fix, exit ≠ 0.

Each test names a behaviour a first-time user hit: a command on a task set that built a fresh
(wrong) catalog, ``--force`` deleting a file named by ``--out``, a damaged file reported as an
internal error, an unscorable trajectories file that exited 0.
"""

import json
import shutil
import socket
import subprocess
import sys

import pytest

from shopgen.cli import main
from shopgen.task_writer import read_tasks


def run(*args: str, cwd=None) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "shopgen", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    return proc.returncode, proc.stdout, proc.stderr


def one_error(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("shopgen: error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def work(indexed_catalog_dir, tmp_path_factory):
    """A working directory holding ``cat`` (the indexed fixture catalog) and ``tasks`` from it.

    The tasks are made with the relative ``--catalog cat``, as a user in that directory would.
    """
    root = tmp_path_factory.mktemp("work")
    shutil.copytree(indexed_catalog_dir, root / "cat")
    code, _, err = run(
        "tasks", "--env", "policy", "--d", "0", "--n", "3", "--catalog", "cat", "--out", "tasks",
        cwd=root,
    )  # fmt: skip
    assert code == 0, err
    return root


@pytest.fixture(scope="module")
def other_catalog(tmp_path_factory):
    out = tmp_path_factory.mktemp("other") / "cat"
    assert run("catalog", "--size", "300", "--seed", "1", "--out", str(out))[0] == 0
    return out


def oracle_lines(tasks_dir) -> list[str]:
    return [
        json.dumps({"task_id": r.task_id, "messages": json.loads(r.oracle)}) + "\n"
        for r in read_tasks(tasks_dir)
    ]


def test_score_without_catalog_uses_the_tasks_catalog_and_builds_none(work):
    (work / "runs.jsonl").write_text("".join(oracle_lines(work / "tasks")))
    code, out, err = run("score", "--tasks", "tasks", "--trajectories", "runs.jsonl", cwd=work)
    assert code == 0, err
    assert "scored 3 trajectories" in out
    assert not (work / "data").exists()  # no default catalog was built


def test_a_task_set_copied_elsewhere_still_finds_its_catalog(work, tmp_path):
    """Made with the relative ``--catalog cat``, the set recorded ``cat``, which another
    directory does not hold: its absolute path is recorded now."""
    shutil.copytree(work / "tasks", tmp_path / "tasks")
    (tmp_path / "runs.jsonl").write_text("".join(oracle_lines(work / "tasks")))
    code, _, err = run("score", "--tasks", "tasks", "--trajectories", "runs.jsonl", cwd=tmp_path)
    assert code == 0, err
    assert not (tmp_path / "data").exists()


def test_a_task_set_whose_catalog_is_gone_is_one_line(work, tmp_path):
    shutil.copytree(work / "tasks", tmp_path / "tasks")
    manifest = json.loads((tmp_path / "tasks" / "manifest.json").read_text())
    manifest["config"]["catalog"] = str(tmp_path / "moved-away")
    (tmp_path / "tasks" / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "runs.jsonl").write_text("".join(oracle_lines(work / "tasks")))
    for args in (
        ("score", "--tasks", "tasks", "--trajectories", "runs.jsonl"),
        ("eval", "--tasks", "tasks"),
        ("export", "--tasks", "tasks", "--format", "sft", "--out", "sft"),
    ):
        code, _, err = run(*args, cwd=tmp_path)
        assert code == 1, args
        assert "pass --catalog DIR" in one_error(err)
    assert not (tmp_path / "data").exists()


def test_the_wrong_catalog_is_refused_before_any_work(work, other_catalog):
    for args in (
        ("eval", "--tasks", "tasks", "--catalog", str(other_catalog)),
        ("report", "--tasks", "tasks", "--catalog", str(other_catalog), "--out", "r.html"),
        ("serve", "--tasks", "tasks", "--catalog", str(other_catalog), "--port", "0"),
        ("export", "--tasks", "tasks", "--format", "verl", "--catalog", str(other_catalog),
         "--out", "v"),
    ):  # fmt: skip
        code, _, err = run(*args, cwd=work)
        assert code == 1, args
        assert "pass the --catalog the tasks were made from" in one_error(err)


def test_unscorable_trajectories_exit_non_zero_after_scoring_the_rest(work):
    good = oracle_lines(work / "tasks")
    path = work / "mixed.jsonl"
    path.write_text(good[0] + json.dumps({"task_id": "nope", "messages": []}) + "\n" + good[1][:40])
    out = work / "mixed_scores.jsonl"
    code, stdout, err = run(
        "score", "--tasks", "tasks", "--trajectories", "mixed.jsonl", "--out", str(out), cwd=work
    )
    assert code == 1
    line = one_error(err)
    assert "2 of 3 trajectories could not be scored" in line
    assert "unknown task_id" in line
    assert "scored 1 trajectories" in stdout
    results = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r.get("error") is None for r in results] == [True, False, False]


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"", "holds no trajectories"), (b"\n\n", "holds no trajectories"),
     (b'{"task_id": "x"}\n\xff\xfe\n', "line 2 is not UTF-8")],
)  # fmt: skip
def test_empty_or_binary_trajectories_are_one_line(work, content, needle):
    (work / "bad.jsonl").write_bytes(content)
    code, _, err = run("score", "--tasks", "tasks", "--trajectories", "bad.jsonl", cwd=work)
    assert code == 1
    assert needle in one_error(err)


@pytest.mark.parametrize(
    "args",
    [
        ("catalog", "--size", "200"),
        ("tasks", "--env", "policy", "--n", "1", "--catalog", "cat"),
        ("export", "--tasks", "tasks", "--format", "trl"),
    ],
)
def test_force_never_deletes_a_file_named_by_out(work, args):
    victim = work / "notes.txt"
    victim.write_text("mine")
    code, _, err = run(*args, "--out", "notes.txt", "--force", cwd=work)
    assert code == 1
    assert "is a file" in one_error(err)
    assert victim.read_text() == "mine"


def test_missing_or_truncated_files_are_named_before_work(work, tmp_path):
    broken = tmp_path / "cat"
    shutil.copytree(work / "cat", broken)
    shutil.rmtree(broken / "orders")
    code, _, err = run("tasks", "--env", "returns", "--n", "1", "--catalog", str(broken),
                       "--out", str(tmp_path / "t"))  # fmt: skip
    assert code == 1
    assert "orders/train-00000-of-00001.parquet: missing" in one_error(err)

    tasks = tmp_path / "tasks"
    shutil.copytree(work / "tasks", tasks)
    shard = next((tasks / "data").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:500])
    code, _, err = run("eval", "--tasks", str(tasks), "--catalog", str(work / "cat"))
    assert code == 1
    assert "500 bytes, manifest says" in one_error(err)


def test_a_same_size_damaged_parquet_file_is_a_data_error_not_a_bug(work, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    shutil.copytree(work / "tasks", tasks)
    shard = next((tasks / "data").glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[-8:] = b"\0" * 8  # footer length and magic gone, size unchanged
    shard.write_bytes(bytes(data))
    code = main(["eval", "--tasks", str(tasks), "--catalog", str(work / "cat")])
    assert code == 1
    line = one_error(capsys.readouterr().err)
    assert "unreadable data file" in line
    assert "internal error" not in line


def test_search_environments_need_an_index_up_front(catalog_dir, tmp_path):
    code, _, err = run("tasks", "--env", "discovery", "--n", "1", "--catalog", str(catalog_dir),
                       "--out", str(tmp_path / "t"))  # fmt: skip
    assert code == 1
    assert "has no search index: run `shopgen index" in one_error(err)


def test_an_empty_system_prompt_is_refused(work):
    (work / "empty.txt").write_text("  \n")
    code, _, err = run("tasks", "--env", "policy", "--n", "1", "--catalog", "cat",
                       "--system-prompt", "empty.txt", "--out", "t_empty", cwd=work)  # fmt: skip
    assert code == 1
    assert "--system-prompt empty.txt is empty" in one_error(err)


def test_serve_on_a_port_in_use_is_one_line(work):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, out, err = run("serve", "--catalog", "cat", "--port", str(port), cwd=work)
    assert code == 1
    assert "Address already in use" in one_error(err)
    assert "serving" not in out


def test_report_out_must_be_a_file(work):
    (work / "adir").mkdir()
    code, _, err = run("report", "--tasks", "tasks", "--out", "adir", cwd=work)
    assert code == 1
    assert "is a directory" in one_error(err)


def test_index_help_states_the_flat_limit_the_code_uses():
    from click.testing import CliRunner

    from shopgen.commands.index import index
    from shopgen.gen.index import FLAT_LIMIT

    text = " ".join(CliRunner().invoke(index, ["--help"]).output.split())
    assert f"auto = exact flat below {FLAT_LIMIT:,} products" in text


def test_difficulty_keeps_the_twelve_axes_apart_from_the_schedules():
    from shopgen.gen.difficulty import AXES
    from shopgen.gen.schedules import SCHEDULES

    code, out, err = run("difficulty", "--d", "0-2")
    assert code == 0, err
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["axis", *AXES, "schedule", *SCHEDULES]
    assert len(AXES) == 12  # the README and DESIGN §5 promise twelve


@pytest.mark.parametrize("command", ["tasks", "eval", "report", "play", "catalog", "search"])
def test_a_seed_beyond_64_bits_is_a_usage_error(command):
    import click

    from shopgen.cli import cli

    seed = {p.name: p for p in cli.get_command(None, command).params}["seed"].type
    assert seed.convert(2**63 - 1, None, None) == 2**63 - 1  # what the 64-bit streams accept
    with pytest.raises(click.BadParameter):
        seed.convert(2**63, None, None)


def test_tasks_with_a_too_large_seed_is_one_line(work):
    code, _, err = run("tasks", "--env", "policy", "--n", "1", "--catalog", "cat",
                       "--seed", str(2**63), "--out", "t_seed", cwd=work)  # fmt: skip
    assert code == 2
    assert "--seed" in one_error(err)


def test_play_without_a_catalog_says_how_to_make_one(tmp_path):
    code, _, err = run("play", "--env", "policy", cwd=tmp_path)
    assert code == 1
    assert "no catalog at data/catalog: make one (`shopgen catalog" in one_error(err)
