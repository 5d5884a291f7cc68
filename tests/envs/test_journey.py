"""journey: composed sub-tasks, one customer, chained oracles, the mean of sub-verifiers."""

import json

import pytest

from shopgen.env.state import EpisodeState
from shopgen.gen.schedules import journey_length
from shopgen.gen.tasks.journey import SUB_ENVS
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, run_policy
from shopgen.verifiers.journey import texts, verify
from shopgen.verifiers.replay import play


@pytest.fixture(scope="module")
def rows(factory):
    return [factory.make("journey", d, k).row for d in range(13) for k in range(1)]


def test_same_key_same_task(factory, rows):
    assert factory.make("journey", 5, 0).row == rows[5]
    assert factory.make("journey", 5, 1).row.task_id != rows[5].task_id


def test_oracle_is_correct_at_every_level(shop_env, rows):
    for row in rows:
        score, _ = play(shop_env, row, json.loads(row.oracle))
        assert score.is_correct
        assert score.reward == pytest.approx(0.9)
        assert len(score.details["steps"]) == len(row.decoded("goal")["steps"])


def test_steps_compose_one_customer(rows):
    for row in rows:
        steps = row.decoded("goal")["steps"]
        envs = [s["env"] for s in steps]
        assert (
            len(envs)
            == len(set(envs))
            == min(journey_length(row.d), sum(row.d >= v for v in SUB_ENVS.values()))
        )
        users = {s["episode"].get("user_id") for s in steps} - {None}
        assert users == ({row.decoded("episode")["user_id"]} if users else set())


def test_journey_length_grows_with_d(rows):
    assert len(rows[12].decoded("goal")["steps"]) > len(rows[0].decoded("goal")["steps"])


def test_p_switch_raises_a_bundle_budget(shop_env):
    f = TaskFactory(shop_env, seed=0, overrides={"p_switch": 1.0})
    for k in range(3):
        row = f.make("journey", 6, k).row
        switch = row.decoded("user_script")["switch"]
        bundle = [s for s in row.decoded("goal")["steps"] if s["env"] == "bundle"]
        if bundle and bundle[0]["goal"]["budget"] is not None:
            assert switch is not None
            assert bundle[0]["goal"]["budget"] == switch["changes"][0][1]


def test_losing_one_step_lowers_r_task(shop_env, rows):
    for row in rows[4::3]:
        _, state = play(shop_env, row, json.loads(row.oracle))
        full = verify(row, state, [])
        paragraphs = texts(state.final_text, len(row.decoded("goal")["steps"]))
        for i in range(len(paragraphs)):
            broken = EpisodeState(**{f: getattr(state, f) for f in state.__slots__})
            broken.final_text = "\n\n".join(
                p if j != i else "Sorry, I could not do that." for j, p in enumerate(paragraphs)
            )
            partial = verify(row, broken, [])
            steps = row.decoded("goal")["steps"]
            if steps[i]["env"] != "bundle":  # bundle is graded on the recommendation
                assert partial.r_task < full.r_task
                assert not partial.is_correct


def test_degenerate_policies_never_win(shop_env, rows):
    for label, policy in DEGENERATE.items():
        rewards = []
        for row in rows[::3]:
            score = run_policy(shop_env, row, policy)
            assert not score.is_correct, label
            assert -1 <= score.reward <= 1
            rewards.append(score.reward)
        assert sum(rewards) / len(rewards) <= 0, label
