"""Every registered environment keeps every promise (one parametrised suite, STYLE §7)."""

import importlib.util
import json

import pytest

from shopgen.gen.schedules import SCHEDULES
from shopgen.schemas.envs import ENVS
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, check_env, run_policy
from shopgen.verifiers.replay import play


def _built(spec) -> bool:
    return all(
        importlib.util.find_spec(ref.partition(":")[0]) is not None
        for ref in (spec.generator, spec.verifier)
    )


@pytest.mark.parametrize("spec", ENVS, ids=[s.name for s in ENVS])
def test_environment_conforms(spec, shop_env):
    if not _built(spec):
        pytest.fail(f"{spec.name} is registered but has no generator or verifier module")
    report = check_env(spec.name, shop_env, ds=(0, 6, 12), n=2)
    assert report.tasks == 6
    assert all(v <= 0 for v in report.degenerate_mean_reward.values())


@pytest.mark.parametrize("spec", ENVS, ids=[s.name for s in ENVS])
def test_extra_turns_name_a_schedule(spec):
    assert spec.extra_turns == "" or spec.extra_turns in SCHEDULES


def test_degenerate_policies_see_what_the_tools_showed(shop_env):
    """run_policy sends each turn's results: a cheat that dumps every hit really dumps them.

    It sent ``[]`` before, so ``recommend_every_hit`` and ``add_everything_seen`` never
    recommended or added anything and tested nothing.
    """
    row = TaskFactory(shop_env, seed=0).make("discovery", 4, 0).row
    run_policy(shop_env, row, DEGENERATE["recommend_every_hit"])
    assert len(shop_env.state.recommendations) > row.axis("k_rec")
    cart_row = TaskFactory(shop_env, seed=0).make("cart", 4, 0).row
    run_policy(shop_env, cart_row, DEGENERATE["add_everything_seen"])
    adds = [args for _, name, args in shop_env.state.tool_calls if name == "cart_add"]
    assert len(adds) > 1
    assert {a["product_id"] for a in adds} <= shop_env.state.shown_ids


@pytest.mark.parametrize("env", ["status", "journey"])
def test_the_hedge_over_every_status_date_and_carrier_earns_nothing(env, shop_env):
    factory = TaskFactory(shop_env, seed=0)
    for d in (2, 8):
        row = factory.make(env, d, 0).row
        score = run_policy(shop_env, row, DEGENERATE["hedge_everything"])
        assert not score.is_correct
        assert score.reward <= 0


def _recommending(messages: list[dict], copy) -> list[dict]:
    """``messages`` with each recommend_products call's ids replaced by ``copy(ids)``."""
    out = json.loads(json.dumps(messages))
    for message in out:
        for tool_call in message.get("tool_calls") or []:
            function = tool_call["function"]
            if function["name"] == "recommend_products":
                ids = json.loads(function["arguments"])["product_ids"]
                function["arguments"] = json.dumps({"product_ids": copy(ids)})
    return out


@pytest.mark.parametrize("env", ["discovery", "substitution", "bundle"])
def test_nul_padded_copies_of_the_best_product_are_unknown_ids(env, shop_env):
    # The oracle's own first pick, padded with 0, 1, 2 … NULs: before ids had to match the
    # catalog exactly, each copy counted as a distinct real product (r_task 1.0 for one
    # product recommended k times) and as one the stock check did not know was out.
    def padded(ids: list[str]) -> list[str]:
        return [ids[0] + "\0" * pad for pad in range(len(ids))]

    factory = TaskFactory(shop_env, seed=0)
    for d in (3, 8):
        row = factory.make(env, d, 0).row
        oracle, _ = play(shop_env, row, json.loads(row.oracle))
        score, _ = play(shop_env, row, _recommending(json.loads(row.oracle), padded))
        assert not score.is_correct
        assert score.r_hall < 0  # the padded copies are ids no tool showed
        assert score.r_task < oracle.r_task  # and no product the task can grade as k picks
