"""Every registered environment keeps every promise (one parametrised suite, STYLE §7)."""

import importlib.util

import pytest

from shopgen.gen.schedules import SCHEDULES
from shopgen.schemas.envs import ENVS
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, check_env, run_policy


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
