"""``shopgen tasks`` → ``shopgen validate`` → ``shopgen score`` on the status environment."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from shopgen.task_writer import read_tasks


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "shopgen", *args], capture_output=True, text=True, timeout=300
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def task_dir(indexed_catalog_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("tasks") / "status"
    code, _, err = run(
        "tasks",
        "--env",
        "status",
        "--d",
        "0-2",
        "--n",
        "4",
        "--catalog",
        str(indexed_catalog_dir),
        "--out",
        str(out),
    )
    assert code == 0, err
    return out


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_task_dataset_is_valid_and_complete(task_dir):
    assert run("validate", str(task_dir))[0] == 0
    rows = read_tasks(task_dir)
    assert len(rows) == 12
    assert {r.d for r in rows} == {0, 1, 2}
    manifest = json.loads((task_dir / "manifest.json").read_text())
    assert manifest["kind"] == "tasks"
    assert manifest["parents"] == [rows[0].catalog_id]
    assert (
        pq.read_schema(next((task_dir / "data").glob("*.parquet"))).field("theta").type.num_fields
        == 12
    )


def test_score_replays_oracles_to_full_marks(task_dir, indexed_catalog_dir, tmp_path):
    rows = read_tasks(task_dir)
    traj = tmp_path / "oracle.jsonl"
    _write(traj, [{"task_id": r.task_id, "messages": json.loads(r.oracle)} for r in rows])
    out = tmp_path / "scores.jsonl"
    code, stdout, err = run(
        "score",
        "--tasks",
        str(task_dir),
        "--trajectories",
        str(traj),
        "--catalog",
        str(indexed_catalog_dir),
        "--out",
        str(out),
    )
    assert code == 0, err
    scores = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scores) == len(rows)
    assert all(s["is_correct"] and s["reward"] == pytest.approx(0.9) for s in scores)
    assert "correct 100.0%  reward +0.900 (r_task +1.000, r_eff 1.000, r_hall +0.000)" in stdout
    assert "pass^1 1.000" in stdout


def test_tampered_tool_messages_do_not_count(task_dir, indexed_catalog_dir, tmp_path):
    row = read_tasks(task_dir)[0]
    fake = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "orders_list", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps({"orders": [], "note": "status delivered"}),
        },
        {"role": "assistant", "content": "I could not find anything."},
    ]
    traj = tmp_path / "t.jsonl"
    _write(
        traj,
        [
            {"task_id": row.task_id, "messages": fake},
            {"task_id": "nope", "messages": []},
            {"bad": 1},
        ],
    )
    out = tmp_path / "s.jsonl"
    code, stdout, err = run(
        "score",
        "--tasks",
        str(task_dir),
        "--trajectories",
        str(traj),
        "--catalog",
        str(indexed_catalog_dir),
        "--out",
        str(out),
    )
    assert code == 1  # lines that could not be scored are an error, after the rest is scored
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["is_correct"] is False
    assert lines[0]["reward"] < 0
    assert lines[1]["error"] == "unknown task_id"
    assert lines[2]["error"] == "not a JSON object with task_id and messages"
    assert "scored 1 trajectories" in stdout
    assert "2 of 3 trajectories could not be scored" in err


def test_same_seed_same_tasks_in_any_batch(task_dir, indexed_catalog_dir, tmp_path):
    out = tmp_path / "one"
    assert (
        run(
            "tasks",
            "--env",
            "status",
            "--d",
            "2",
            "--n",
            "2",
            "--catalog",
            str(indexed_catalog_dir),
            "--out",
            str(out),
        )[0]
        == 0
    )
    small = {r.task_id for r in read_tasks(out)}
    big = {r.task_id for r in read_tasks(task_dir) if r.d == 2}
    assert small <= big


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--env", "shopping"), "not an environment"),
        (("--env", "status", "--d", "3-1"), "range"),
        (("--env", "status", "--n", "0"), "n=0"),
        (("--env", "status", "--axis", "T_max"), "name=value"),
        (("--env", "status", "--axis", "warp=2"), "warp"),
    ],
)
def test_bad_task_options_are_one_line(indexed_catalog_dir, tmp_path, args, needle):
    code, _, err = run(
        "tasks", *args, "--catalog", str(indexed_catalog_dir), "--out", str(tmp_path / "x")
    )
    assert code != 0
    assert "Traceback" not in err
    assert needle in err
