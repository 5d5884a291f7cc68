"""``TaskFactory(freeze_heap=True)``: the heap is frozen after 256, 512, … tasks, never otherwise."""

from __future__ import annotations

import gc

import pytest

import shopgen.taskgen as taskgen
from shopgen.env.episode import ShopEnv
from shopgen.task_shards import _factory
from shopgen.taskgen import TaskFactory


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch):
    """Freeze after 2 tasks (then 4, …); the task counts at which the heap was frozen.

    The test process's heap is unfrozen again afterwards.
    """
    monkeypatch.setattr(taskgen, "FREEZE_FIRST", 2)
    made: list[int] = []
    freeze = gc.freeze

    def counted() -> None:
        made.append(len(made))
        freeze()

    monkeypatch.setattr(gc, "freeze", counted)
    gc.unfreeze()
    yield made
    gc.unfreeze()


def test_a_freezing_factory_freezes_at_each_doubling(shop_env: ShopEnv, freezes) -> None:
    factory = TaskFactory(shop_env, seed=0, freeze_heap=True)
    at = []
    for k in range(9):
        factory.make("status", 1, k)
        at += [k + 1] * (len(freezes) - len(at))
    assert at == [2, 4, 8]
    assert gc.get_freeze_count() > 0  # the objects alive then are in the permanent generation


def test_a_plain_factory_never_freezes(shop_env: ShopEnv, freezes) -> None:
    factory = TaskFactory(shop_env, seed=0)
    for k in range(4):
        factory.make("status", 1, k)
    assert freezes == []
    assert gc.get_freeze_count() == 0


def test_freezing_changes_no_task(shop_env: ShopEnv, freezes) -> None:
    frozen = TaskFactory(shop_env, seed=0, freeze_heap=True)
    plain = TaskFactory(shop_env, seed=0)
    for k in range(3):
        assert frozen.make("policy", 2, k).row == plain.make("policy", 2, k).row


def test_generation_workers_freeze(indexed_catalog_dir) -> None:
    factory = _factory(str(indexed_catalog_dir), 0, "{}", None, True)
    assert factory._freeze_at == taskgen.FREEZE_FIRST
