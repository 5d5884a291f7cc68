"""policy: what a task's first message gives away of its answer (distributional shortcuts).

An RL policy learns any regularity that predicts the graded answer without reading the policy
or asking the customer. The first message names the topic and d sets B_branch; these tests
measure what a blind agent gains from them at high d, where few rules have that many clauses.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from shopgen.gen.policy import PolicyEngine
from shopgen.gen.tasks.policy import _reachable, _rules
from shopgen.verifiers.reward import W_EFF, W_TASK

#: Comparisons of a number with a threshold.
_NUMERIC = ("ge", "gt", "le", "lt")


@pytest.fixture(scope="module")
def high_d(factory):
    """(d, goal) of 100 tasks at each of d = 8 and 12.

    An in-sample best guess gains more the fewer tasks each topic has: 30 tasks were enough
    while two to four topics had rules of B_branch clauses, not with eight (rule file 2).
    """
    return [
        (d, factory.make("policy", d, k).row.decoded("goal")) for d in (8, 12) for k in range(100)
    ]


def test_numbers_a_rule_tests_sit_on_and_off_its_threshold(factory, high_d):
    """The witness put every number on its threshold ("$15.00" for "orders of $15 or more"):
    30 of 30 at d = 12 on 5k products, so "the fact sits on the edge" told which side it was
    on without asking. Now a share sits on it, the rest on either side at a drawn distance."""
    engine = factory.ctx.engine
    sides: Counter[int] = Counter()
    for _, goal in high_d:
        rule = engine.rules[goal["missed_rule"] or goal["rule_id"]]
        for c in rule.when:
            if c.op in _NUMERIC and c.fact in goal["facts"]:
                value, bound = float(goal["facts"][c.fact]), float(engine.literal(c.value))
                sides[(value > bound) - (value < bound)] += 1
    total = sum(sides.values())
    assert total >= 20, sides
    assert sides[0] / total <= 0.7, sides
    assert sides[1], sides  # above
    assert sides[-1], sides  # below


def _blind_reward(goals: list[tuple[int, dict]]) -> float:
    """Mean reward of searching, asking everything and answering the commonest answer of the
    topic at that d (in-sample: the best such guess), with the verifier's weights."""
    by_topic: dict[tuple[int, str], Counter] = defaultdict(Counter)
    for d, goal in goals:
        by_topic[d, goal["topic"]][goal["value"]] += 1
    total = 0.0
    for (_, topic), counts in by_topic.items():
        right = max(counts.values())
        wrong = sum(counts.values()) - right
        kind = next(g["kind"] for _, g in goals if g["topic"] == topic)
        total += right * (W_TASK + W_EFF) + wrong * W_TASK * (-1.0 if kind == "boolean" else -0.5)
    return total / len(goals)


def test_the_topic_named_does_not_give_the_answer(high_d):
    """A question was always answered by the value of the rule drawn for it, and at d = 12
    only two rules have B_branch clauses: the commonest answer of the topic named was right
    200 times in 200 on 5k products (blind reward +0.90, the oracle's), +0.56 at d = 8. Now
    the answer is drawn uniformly among those the rule and its one-clause misses give."""
    for d in (8, 12):
        goals = [(dd, g) for dd, g in high_d if dd == d]
        assert _blind_reward(goals) <= 0.3, d  # 100 tasks: an in-sample guess gains ~0.1
    missed = sum(g["missed_rule"] is not None for _, g in high_d)
    assert 0.3 <= missed / len(high_d) <= 0.9


def test_high_d_questions_draw_from_many_rules_and_topics(high_d):
    """At d = 12 (B_branch 5) rule file 1 had two rules in two topics: 30 tasks on 5k products
    held 10 distinct cases (rule drawn, rule deciding, answer), so a policy trained there could
    memorise them. Rule file 2 has 3-, 4- and 5-clause rules in eight topics: 23 cases."""
    for d in (8, 12):
        goals = [g for dd, g in high_d if dd == d][:30]
        cases = {(g["topic"], g["rule_id"], g["missed_rule"], g["value"]) for g in goals}
        topics = {g["topic"] for g in goals}
        assert len(topics) >= 6, (d, sorted(topics))
        assert len(cases) >= 16, (d, len(cases))


@pytest.mark.parametrize("seed", [0, 7])
def test_every_number_topic_has_two_answers_at_every_clause_count(seed):
    """A number question's answer is drawn among those its topic's B_branch-clause rules and
    their one-clause misses reach; one answer alone is learnt without reading or asking. The
    restocking fee at B_branch 1 (d = 0–2) had only faulty items' 0%, whose miss falls back on
    the 0% default: 134 of 134 such tasks on 5k products said "0%". Rule file 2 now has the
    fee on opened items. (Two rules' drawn numbers can still coincide in a store: the price
    adjustment window at B_branch 1 in 5 of 40 stores, not in these two.)"""
    engine = PolicyEngine.for_store(seed)
    one = []
    for branch in range(1, 6):
        usable = _rules(engine, branch)
        for topic in sorted({engine.rules[r].topic for r in usable}):
            ids = [r for r in usable if engine.rules[r].topic == topic]
            if engine.rules[ids[0]].answer.kind != "number":
                continue
            answers = _reachable(engine, ids, np.random.default_rng(seed))
            if len(answers) < 2:
                one.append((branch, topic, sorted(answers)))
    assert one == []


def test_the_restocking_fee_at_low_d_depends_on_the_item_s_condition(factory):
    """At d = 0–2 the restocking fee was 0% in every task; now opened items carry the store's
    fee and neither answer is the rule."""
    goals = [
        factory.make("policy", d, k).row.decoded("goal") for d in (0, 1, 2) for k in range(150)
    ]
    fees = Counter(g["value"] for g in goals if g["topic"] == "restocking_fee")
    assert len(fees) >= 2, fees
    assert max(fees.values()) <= 0.7 * sum(fees.values()), fees
    opened = [g for g in goals if g["rule_id"] == "restocking_fee_opened"]
    assert opened
    assert all(g["facts"]["item_condition"] == "opened" for g in opened)
