"""A draw whose oracle fails: skipped and reported by ``shopgen tasks``, fatal with ``--strict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopgen.cli import main
from shopgen.env.episode import ShopEnv
from shopgen.gen.backends import open_executor
from shopgen.task_shards import _factory, generate_sharded, task_shards
from shopgen.task_writer import read_tasks
from shopgen.taskgen import OracleFailure, SkippedDraw, TaskFactory

ENV, D = "status", 2


@pytest.fixture
def fail_second_proof(monkeypatch: pytest.MonkeyPatch):
    """Call to make the second proof run from then on raise OracleFailure, as a bug would.

    The proofs are counted across factories; with one factory, its second proof is task
    k = 1's first proven draw.
    """
    prove = TaskFactory._prove
    calls: list[int] = []

    def failing(self: TaskFactory, row, messages) -> None:
        if calls:
            calls.append(1)
            if len(calls) == 3:
                raise OracleFailure(f"{row.env} task {row.task_id}: oracle not correct (injected)")
        prove(self, row, messages)

    monkeypatch.setattr(TaskFactory, "_prove", failing)
    _factory.cache_clear()  # sharded runs build their factories afresh
    yield lambda: calls.append(0)
    _factory.cache_clear()


def test_a_strict_factory_raises(shop_env: ShopEnv, fail_second_proof) -> None:
    fail_second_proof()
    factory = TaskFactory(shop_env, seed=0)
    factory.make(ENV, D, 0)
    with pytest.raises(OracleFailure, match="injected"):
        factory.make(ENV, D, 1)


def test_a_skipping_factory_draws_again_and_records_the_draw(
    shop_env: ShopEnv, fail_second_proof
) -> None:
    plain = [TaskFactory(shop_env, seed=0).make(ENV, D, k) for k in range(3)]
    fail_second_proof()
    factory = TaskFactory(shop_env, seed=0, skip_failed_oracles=True)
    made = [factory.make(ENV, D, k) for k in range(3)]
    failed = plain[1].attempt
    assert [(s.env, s.d, s.k, s.attempt) for s in factory.skipped] == [(ENV, D, 1, failed)]
    assert factory.skipped[0].error.endswith("(injected)")
    assert made[1].attempt > failed  # task 1 is a later draw, itself proven
    assert made[1].row != plain[1].row
    assert [made[0].row, made[2].row] == [plain[0].row, plain[2].row]  # the others unchanged


def test_sharded_runs_collect_every_shards_skipped_draws(
    indexed_catalog_dir: Path, fail_second_proof
) -> None:
    fail_second_proof()
    shards = task_shards(
        indexed_catalog_dir,
        envs=[ENV],
        ds=[D],
        n=4,
        seed=0,
        skip_failed_oracles=True,
        shard_tasks=2,
    )
    skipped: list[SkippedDraw] = []
    with open_executor("local", workers=1, jobs=len(shards)) as executor:
        rows = list(generate_sharded(executor, shards, skipped))
    assert len(rows) == 4
    assert [(s.env, s.d, s.k) for s in skipped] == [(ENV, D, 1)]


def _tasks(catalog: Path, out: Path, *extra: str) -> int:
    args = ["tasks", "--env", ENV, "--d", str(D), "--n", "3", "--catalog", str(catalog)]
    return main([*args, "--out", str(out), *extra])


def test_shopgen_tasks_skips_the_draw_and_reports_it(
    indexed_catalog_dir: Path, tmp_path: Path, fail_second_proof, capsys
) -> None:
    out = tmp_path / "tasks"
    fail_second_proof()
    assert _tasks(indexed_catalog_dir, out) == 0
    err = capsys.readouterr().err
    assert "warning: skipped 1 draw(s) whose oracle failed" in err
    assert f"{ENV} d={D} k=1" in err
    assert len(read_tasks(out)) == 3
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert config["skip_failed_oracles"] is True
    assert [(s["k"], s["error"][-10:]) for s in config["skipped_draws"]] == [(1, "(injected)")]


def test_shopgen_tasks_strict_stops_in_one_line_and_leaves_nothing(
    indexed_catalog_dir: Path, tmp_path: Path, fail_second_proof, capsys
) -> None:
    out = tmp_path / "tasks"
    fail_second_proof()
    assert _tasks(indexed_catalog_dir, out, "--strict") != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "injected" in err
    assert not out.exists()


def test_a_run_without_failures_lists_none(indexed_catalog_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    assert _tasks(indexed_catalog_dir, out) == 0
    assert json.loads((out / "manifest.json").read_text())["config"]["skipped_draws"] == []
