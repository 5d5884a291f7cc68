"""policy: determinism, engine ground truth, facts that matter, θ effects, oracle, degenerates."""

from __future__ import annotations

import json

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.gen.policy import Decision, format_value
from shopgen.schemas.errors import ShopgenError
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.verifiers.policy import answer_right
from shopgen.verifiers.replay import play

D_ALL = range(13)


@pytest.fixture(scope="module")
def env(catalog_dir) -> ShopEnv:
    return ShopEnv(catalog_dir)


@pytest.fixture(scope="module")
def factory(env) -> TaskFactory:
    return TaskFactory(env, seed=0)


@pytest.fixture(scope="module")
def tasks(factory):
    return [factory.make("policy", d, k) for d in D_ALL for k in range(4)]


def test_bad_input_rejected(factory):
    with pytest.raises(ShopgenError):
        factory.make("policy", -2, 0)


def test_same_key_same_task(env, tasks):
    again = TaskFactory(env, seed=0).make("policy", 5, 2)
    assert again.row in [g.row for g in tasks]


def test_oracle_correct_at_every_d(env, tasks):
    for g in tasks:
        score, _ = play(env, g.row, json.loads(g.row.oracle))
        assert score.is_correct, g.row.task_id
        assert score.reward == pytest.approx(0.9), g.row.task_id


def test_truth_is_the_engine_and_the_rule_decides(factory, tasks):
    engine = factory.ctx.engine
    for g in tasks:
        goal = g.row.decoded("goal")
        decision = engine.evaluate(goal["topic"], goal["facts"])
        assert isinstance(decision, Decision)
        assert decision.rule_ids == (goal["rule_id"],)
        assert decision.value == goal["value"]
        assert len(engine.rules[goal["rule_id"]].when) <= g.row.axis("B_branch")


def test_omitted_facts_change_the_answer_often(factory):
    """Without the facts the rule tests, the engine answers differently (or not at all)."""
    engine = factory.ctx.engine
    f = TaskFactory(factory.env, seed=3, overrides={"p_missing": 1.0})
    differs = total = 0
    for d in (3, 6, 9, 12):
        for k in range(5):
            goal = f.make("policy", d, k).row.decoded("goal")
            rule = engine.rules[goal["rule_id"]]
            tested = {c.fact for c in rule.when}
            if {"category", "tags", "department"} & tested:
                tested |= {"category", "tags", "department"}
            stated = {k2: v for k2, v in goal["facts"].items() if k2 not in tested}
            guess = engine.evaluate(goal["topic"], stated)
            total += 1
            differs += not isinstance(guess, Decision) or guess.value != goal["value"]
    assert differs / total >= 0.5


def test_axes_have_effects(env):
    def clauses(branch):
        f = TaskFactory(env, seed=2, overrides={"B_branch": branch})
        engine = f.ctx.engine
        return [
            len(engine.rules[f.make("policy", 5, k).row.decoded("goal")["rule_id"]].when)
            for k in range(5)
        ]

    assert set(clauses(1)) == {1}
    assert set(clauses(4)) == {4}

    def omitted(p):
        f = TaskFactory(env, seed=2, overrides={"p_missing": p})
        rows = [f.make("policy", 6, k).row for k in range(6)]
        return sum(s["omitted"] for r in rows for s in r.decoded("user_script")["slots"])

    assert omitted(1.0) > omitted(0.0) == 0


def test_answer_extraction():
    goal = {"kind": "number", "unit": "USD", "value": 5.99}
    assert answer_right("It costs $5.99.", goal)
    assert not answer_right("It costs $5.99 or $6.99.", goal)
    assert not answer_right("It costs $6.00.", goal)
    days = {"kind": "number", "unit": "days", "value": 30.0}
    assert answer_right(f"You have {format_value(30.0, 'days', 'number')}.", days)
    assert answer_right("You have 30 days; it arrived 12 days ago.", days, ignore=(12.0,))
    assert not answer_right("You have 30 days or 45 days.", days)
    yes = {"kind": "boolean", "unit": None, "value": True}
    assert answer_right("Yes, you can.", yes)
    assert not answer_right("Yes. No.", yes)


def _plausible(goal):
    if goal["kind"] == "boolean":
        return "Yes. No."
    unit = goal["unit"]
    nums = [0, 5, 10, 15, 20, 25, 30, 45, 60, 90, 99, 4.99, 5.99, 12, 24]
    return " or ".join(format_value(float(n), unit, "number") for n in nums)


def test_degenerate_policies_never_correct(env, tasks):
    rewards = []
    for g in tasks:
        goal = g.row.decoded("goal")
        search = assistant_message(0, [("policy_search", {"query": goal["topic"]})])
        policies = {
            "nothing": [assistant_message(0, "")],
            "one_turn": [assistant_message(0, "Yes. You have 30 days.")],
            "every_number": [search, assistant_message(0, _plausible(goal))],
            "ask_forever": [assistant_message(0, [("ask_user", {"question": "Anything else?"})])]
            * (g.row.axis("T_max") + 1),
        }
        for name, messages in policies.items():
            score, _ = play(env, g.row, messages)
            assert not score.is_correct, (name, g.row.task_id)
            assert -1.0 <= score.reward <= 1.0
            rewards.append(score.reward)
    assert sum(rewards) / len(rewards) <= 0


def test_answer_without_asking_is_not_correct(env, factory):
    """The true value said without asking for a left-out needed fact is not correct."""
    f = TaskFactory(factory.env, seed=4, overrides={"p_missing": 1.0})
    for k in range(6):
        row = f.make("policy", 6, k).row
        goal = row.decoded("goal")
        search = assistant_message(0, [("policy_search", {"query": goal["topic"]})])
        oracle = json.loads(row.oracle)
        score, _ = play(env, row, [search, oracle[-1]])
        assert not score.is_correct
