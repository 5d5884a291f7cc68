"""policy: determinism, engine ground truth, facts that matter, θ effects, oracle, degenerates."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from shopgen.gen.policy import Decision, format_value
from shopgen.schemas.errors import ShopgenError
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.testing import scored_with_final
from shopgen.verifiers.policy import answer_right
from shopgen.verifiers.replay import play

D_ALL = range(13)


@pytest.fixture(scope="module")
def tasks(factory):
    return [factory.make("policy", d, k) for d in D_ALL for k in range(4)]


def test_bad_input_rejected(factory):
    with pytest.raises(ShopgenError):
        factory.make("policy", -2, 0)


def test_same_key_same_task(shop_env, tasks):
    again = TaskFactory(shop_env, seed=0).make("policy", 5, 2)
    assert again.row in [g.row for g in tasks]


def test_oracle_correct_at_every_d(shop_env, tasks):
    for g in tasks:
        score, _ = play(shop_env, g.row, json.loads(g.row.oracle))
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
        if goal["missed_rule"] is not None:  # the rule asked about: one clause of it fails
            missed = engine.rules[goal["missed_rule"]]
            assert missed.topic == goal["topic"]
            assert len(missed.when) <= g.row.axis("B_branch")
            assert engine.value(missed.id) != goal["value"]


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


def test_axes_have_effects(shop_env):
    def clauses(branch):
        f = TaskFactory(shop_env, seed=2, overrides={"B_branch": branch})
        engine = f.ctx.engine
        # A yes decided by the topic's default has no clause of its own (2.0): its reasoning
        # is ruling out every exception (test_a_default_yes_needs_every_exception_ruled_out).
        # A number's situation may miss the rule asked about by one clause (2.2): B_branch
        # counts the clauses of that rule, ``missed_rule``, which the agent must test.
        goals = [f.make("policy", 5, k).row.decoded("goal") for k in range(5)]
        found = [len(engine.rules[g["missed_rule"] or g["rule_id"]].when) for g in goals]
        return [n for n in found if n]

    assert set(clauses(1)) == {1}
    assert set(clauses(4)) == {4}

    def omitted(p):
        f = TaskFactory(shop_env, seed=2, overrides={"p_missing": p})
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


def test_degenerate_policies_never_correct(shop_env, tasks):
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
            score, _ = play(shop_env, g.row, messages)
            assert not score.is_correct, (name, g.row.task_id)
            assert -1.0 <= score.reward <= 1.0
            rewards.append(score.reward)
    assert sum(rewards) / len(rewards) <= 0


def test_answer_without_asking_is_not_correct(shop_env, factory):
    """The true value said without asking for a left-out needed fact is not correct."""
    f = TaskFactory(factory.env, seed=4, overrides={"p_missing": 1.0})
    for k in range(6):
        row = f.make("policy", 6, k).row
        goal = row.decoded("goal")
        search = assistant_message(0, [("policy_search", {"query": goal["topic"]})])
        oracle = json.loads(row.oracle)
        score, _ = play(shop_env, row, [search, oracle[-1]])
        assert not score.is_correct


# -- 1.1: honest answers as assistants write them are right (false negatives) ----------------------


def _goal(value, unit, topic, kind="number"):
    return {"kind": kind, "value": value, "unit": unit, "topic": topic}


@pytest.mark.parametrize(
    ("text", "value", "unit", "topic"),
    [
        ("It's USD 12.50.", 12.5, "USD", "shipping_cost"),
        ("There's a fifteen percent restocking fee.", 15.0, "percent", "restocking_fee"),
        ("You have thirty days.", 30.0, "days", "return_window"),
        ("You have forty-five days to return it.", 45.0, "days", "return_window"),
        ("You have two weeks to ask.", 14.0, "days", "price_match_window"),
        ("It comes with a one-year warranty.", 12.0, "months", "warranty"),
        ("You get a year of coverage.", 12.0, "months", "warranty"),
        ("It's twelve months.", 12.0, "months", "warranty"),
        ("There's no restocking fee in your case.", 0.0, "percent", "restocking_fee"),
        ("Return shipping is free for you.", 0.0, "USD", "return_shipping_fee"),
        ("You won't be charged for shipping.", 0.0, "USD", "shipping_cost"),
        ("Returns are free on any order; there's no minimum.", 0.0, "USD", "free_return_threshold"),
        ("There's no bulk discount for that quantity.", 0.0, "percent", "bulk_discount"),
        ("That item has no store warranty.", 0.0, "months", "warranty"),
        # A fee said with the share paid back too, or as that share alone.
        ("A 10% restocking fee applies, so you get 90% back.", 10.0, "percent", "restocking_fee"),
        ("You'll be refunded 85% of the price (a 15% fee).", 15.0, "percent", "restocking_fee"),
        ("You get ninety percent of your money back.", 10.0, "percent", "restocking_fee"),
        ("There's no fee: you get 100% back.", 0.0, "percent", "restocking_fee"),
        ("You get 10% back on that quantity.", 10.0, "percent", "bulk_discount"),
        ("There is a 15-percent restocking fee.", 15.0, "percent", "restocking_fee"),
        ("A 15% fee, so you'd receive 85% of the price.", 15.0, "percent", "restocking_fee"),
        ("The restocking fee is 15 pct.", 15.0, "percent", "restocking_fee"),
    ],
)
def test_honest_number_phrasings(text, value, unit, topic):
    assert answer_right(text, _goal(value, unit, topic))


@pytest.mark.parametrize(
    ("text", "value", "unit", "topic"),
    [
        ("You have a month.", 30.0, "days", "return_window"),  # a month is not 30 days
        ("It's free. Feel free to ask.", 5.99, "USD", "shipping_cost"),
        ("Feel free to reach out with questions!", 0.0, "USD", "shipping_cost"),
        ("It's $5.99, or free.", 0.0, "USD", "shipping_cost"),
        ("It's free on orders over $35.", 0.0, "USD", "free_shipping_threshold"),
        ("Two weeks.", 10.0, "business days", "shipping_days"),
        ("Fifteen percent, or twenty percent.", 15.0, "percent", "restocking_fee"),
        ("A 10% restocking fee, so you get 85% back.", 10.0, "percent", "restocking_fee"),
        ("You get 90% back.", 15.0, "percent", "restocking_fee"),
        ("There's a 10% refund fee.", 90.0, "percent", "restocking_fee"),
    ],
)
def test_the_new_readings_let_no_wrong_number_through(text, value, unit, topic):
    assert not answer_right(text, _goal(value, unit, topic))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Unfortunately, no — you can't use that return method.", False),
        ("I'm sorry, but no.", False),
        ("I'm afraid not. Our policy doesn't allow that in your case.", False),
        ("You can't return it because it is a final-sale item.", False),
        ("Sorry, that isn’t available for your order.", False),
        ("We do not offer price matching on that item.", False),
        ("Good news — yes, you can return it!", True),
        ("Absolutely, you can use that return method.", True),
        ("You can get next-day shipping to your state.", True),
        ("No problem! You can return it.", True),
        # As a numbered list's item (a journey's answers): "3)" and "(2)" opened no sentence.
        ("3) Yes.", True),
        ("The fee is 10%.\n(2) No.", False),
        ("b) No, sorry.", False),
        ("2 - Yes, I checked.", True),
        # A sentence opening "No <noun>" is about the noun, not a second answer.
        ("Yes. No receipt is needed.", True),
        ("Nope, sorry.", False),
    ],
)
def test_honest_yes_no_phrasings(text, value):
    assert answer_right(text, _goal(value, None, "returnable", kind="boolean"))


@pytest.mark.parametrize(
    "text",
    [
        "Yes, or no, depending on the case.",
        "You can return it or you can't.",
        "You can return it. You can't return it.",
        "The answer depends: you may or may not.",
        "1) Yes. 2) No.",
        "Yes. No way.",
    ],
)
def test_a_hedge_over_yes_and_no_is_no_answer(text):
    for value in (True, False):
        assert not answer_right(text, _goal(value, None, "returnable", kind="boolean"))


def test_honest_answers_replayed_keep_the_oracles_reward(factory):
    """Replayed with the oracle's tool calls, an assistant-style answer scores as the oracle."""

    seen = 0
    for d in range(0, 13, 2):
        for k in range(4):
            row = factory.make("policy", d, k).row
            goal = row.decoded("goal")
            if goal["kind"] == "boolean":
                said = "Good news — yes, you can." if goal["value"] else "Unfortunately, no."
            elif goal["value"] == 0 and goal["topic"] in ("restocking_fee", "return_shipping_fee"):
                said = "There's **no fee** at all in your case."
            elif goal["unit"] == "USD":
                said = f"It comes to USD {goal['value']:.2f}."
            else:
                said = f"It's **{goal['text']}**."
            text = f"Great question!\n\n{said}\n\nAnything else I can help with?"
            score, oracle_score = scored_with_final(factory.env, row, text)
            assert score.is_correct, (text, score.details)
            assert score.reward == oracle_score.reward
            seen += 1
    assert seen


# -- 1.2: a threshold the policy tests may be cited next to the answer ---------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Shipping is free because your order is over $35.", 0.0),
        ("Standard shipping costs $0 since your total exceeds the $35 threshold.", 0.0),
        ("It's $5.99: orders of $35 or more ship free, and yours doesn't reach that.", 5.99),
    ],
)
def test_a_cited_threshold_is_no_second_answer(text, value):
    goal = _goal(value, "USD", "shipping_cost")
    assert answer_right(text, goal, ignore=(35.0,))
    assert not answer_right(text, goal)  # the threshold is skipped only when it is one


def test_conditions_are_thresholds_and_never_an_answer(shop_env):
    """A skipped number can never be a rule's answer: a hedge between answers stays wrong."""
    from shopgen.gen.tasks.policy import _THRESHOLD_FACTS, _conditions

    engine = shop_env.store.policy_engine
    cited = 0
    for topic in engine.order:
        answers = {engine.value(r.id) for r in engine.rules_of(topic)}
        for unit in _THRESHOLD_FACTS:
            conditions = _conditions(engine, topic, unit)
            assert not set(conditions) & answers
            assert set(conditions) <= set(engine.thresholds(topic, _THRESHOLD_FACTS[unit]))
            cited += len(conditions)
    assert cited  # the packaged policies have thresholds to cite


def test_an_answer_citing_the_topics_thresholds_scores_as_the_oracle(factory):
    seen = 0
    for d in range(0, 13):
        for k in range(12):
            row = factory.make("policy", d, k).row
            goal = row.decoded("goal")
            if not goal["conditions"] or goal["unit"] != "USD":
                continue
            value = float(goal["value"])
            cited = " and ".join(f"${c:.2f}" for c in goal["conditions"])
            text = (
                f"Orders of {cited} or more are treated differently; yours comes to ${value:.2f}."
            )
            score, oracle_score = scored_with_final(factory.env, row, text)
            assert score.is_correct, (text, score.details)
            assert score.reward == oracle_score.reward
            said = {*goal["conditions"], *goal["fact_values"].values()}
            wrong = next(a for a in (value + 1.37, value + 2.41) if a not in said)
            score, _ = scored_with_final(factory.env, row, f"{text[:-1]}, or ${wrong:.2f}.")
            assert not score.is_correct
            seen += 1
    assert seen


# -- 2.0: yes/no answers the customer's situation decides, not the draw (red-team audit) -----------

_ASK_ALL = (
    "Could you tell me your membership tier, the product category, the days since delivery, "
    "the return method, the shipping method, your order total, the item condition, the reason "
    "for the return and the state you ship to?"
)


@pytest.fixture(scope="module")
def yes_no_rows(factory):
    """The yes/no questions among policy tasks at the levels that ask them (B_branch ≤ 2)."""
    rows = [factory.make("policy", d, k).row for d in range(6) for k in range(60)]
    return [r for r in rows if r.decoded("goal")["kind"] == "boolean"]


def test_yes_no_answers_are_balanced_in_every_topic(yes_no_rows):
    """Before 2.0, 90 % of the yes/no answers were no: the store's exceptions say no, its
    defaults (no clause) say yes, and questions were drawn from rules with B_branch clauses.
    """
    by_topic: dict[str, list[bool]] = {}
    for row in yes_no_rows:
        goal = row.decoded("goal")
        by_topic.setdefault(goal["topic"], []).append(bool(goal["value"]))
    values = [v for vs in by_topic.values() for v in vs]
    assert len(values) >= 40
    assert 0.35 <= sum(values) / len(values) <= 0.65
    for topic, vs in by_topic.items():
        if len(vs) >= 8:
            assert 0 < sum(vs) < len(vs), topic


@pytest.mark.parametrize("answer", ["Yes.", "No."])
def test_a_blind_yes_or_no_after_a_search_earns_about_nothing(shop_env, yes_no_rows, answer):
    """Search, ask for every fact, ignore it all and say the same word: no better than a coin.

    A coin is right half the time, so a wrong yes/no costs r_task −1 (what a right one earns);
    what is left is the efficiency term of the lucky half (≈ +0.075). Blind "No." averaged
    +0.8 before 2.0.
    """
    rewards = []
    for row in yes_no_rows:
        goal = row.decoded("goal")
        lookups = [
            ("policy_search", {"query": goal["topic"].replace("_", " ")}),
            ("ask_user", {"question": _ASK_ALL}),
        ]
        score, _ = play(
            shop_env, row, [assistant_message(1, lookups), assistant_message(2, answer)]
        )
        rewards.append(score.reward)
        if score.r_task < 0:
            assert score.r_task == -1.0, row.task_id
    assert sum(rewards) / len(rewards) <= 0.3


def test_a_default_yes_needs_every_exception_ruled_out(factory, yes_no_rows):
    """A yes decided by the topic's default (a rule without clauses) needs every fact the
    topic's exceptions test: the agent must rule each of them out before saying yes."""
    engine = factory.ctx.engine
    seen = 0
    for row in yes_no_rows:
        goal = row.decoded("goal")
        if engine.rules[goal["rule_id"]].when:
            continue
        tested = {c.fact for r in engine.rules_of(goal["topic"]) for c in r.when}
        assert goal["value"] is True
        assert "category" in goal["needed"] or not tested & {"tags", "category", "department"}
        assert len(goal["needed"]) >= len(tested - {"tags", "category", "department"})
        seen += 1
    assert seen > 0


def test_a_wrong_answer_costs_what_a_right_one_earns(shop_env, factory):
    """Numbers too: at −0.5, a topic's commonest number guessed blind paid (see below)."""
    for d in range(4):
        for k in range(12):
            row = factory.make("policy", d, k).row
            goal = row.decoded("goal")
            oracle = json.loads(row.oracle)
            if goal["kind"] == "boolean":
                wrong = "Yes." if not goal["value"] else "No."
            else:
                wrong = f"It is {format_value(float(goal['value']) + 7, goal['unit'], 'number')}."
            score, _ = play(shop_env, row, [*oracle[:-1], assistant_message(0, wrong)])
            assert score.r_task == -1.0, (row.task_id, wrong)


@pytest.fixture(scope="module")
def number_rows(factory):
    """The policy tasks answered by a number, 20 per level at d = 0–12."""
    rows = [factory.make("policy", d, k).row for d in D_ALL for k in range(20)]
    return [r for r in rows if r.decoded("goal")["kind"] == "number"]


def test_guessing_a_topics_commonest_number_earns_nothing(shop_env, number_rows):
    """Search, ask for every fact, ignore it all and say the topic's commonest number.

    The commonest is counted on these very rows, the best a blind guesser can know. A topic
    has a handful of answers and its commonest is right in up to ~46% of its tasks (restocking
    fees here): with a wrong number at r_task −0.5 this averaged reward −0.12, and +0.01 on
    shipping days; at −1 it averages −0.38 and loses on every topic.
    """
    counts: dict[str, Counter] = {}
    for row in number_rows:
        goal = row.decoded("goal")
        counts.setdefault(goal["topic"], Counter())[float(goal["value"])] += 1
    rewards: dict[str, list[float]] = {}
    for row in number_rows:
        goal = row.decoded("goal")
        guess = counts[goal["topic"]].most_common(1)[0][0]
        lookups = [
            ("policy_search", {"query": goal["topic"].replace("_", " ")}),
            ("ask_user", {"question": _ASK_ALL}),
        ]
        answer = f"It is {format_value(guess, goal['unit'], 'number')}."
        score, _ = play(
            shop_env, row, [assistant_message(1, lookups), assistant_message(2, answer)]
        )
        rewards.setdefault(goal["topic"], []).append(score.reward)
    every = [r for rs in rewards.values() for r in rs]
    assert len(every) >= 150
    assert sum(every) / len(every) < -0.25
    for topic, rs in rewards.items():
        if len(rs) >= 20:  # fewer tasks make their own commonest answer look commoner
            assert sum(rs) / len(rs) < 0, topic


def test_asked_how_the_item_goes_back_the_customer_names_the_return_method(shop_env):
    """The vocabulary called it the "refund method"; a natural question got "I'm not sure"."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    rows = [factory.make("policy", d, k).row for d in (0, 3, 6, 9) for k in range(25)]
    rows = [r for r in rows if "method" in r.decoded("goal")["needed"]]
    assert rows, "no task of the fixture needs the return method"
    question = "How will you send the item back: by mail or at a drop-off point?"
    for row in rows:
        said = next(s for s in row.decoded("user_script")["slots"] if s["name"] == "method")
        shop_env.reset(row)
        obs, *_ = shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
        assert said["value"] in json.loads(obs["messages"][-1]["content"])["reply"]


def test_asked_whether_the_item_is_large_the_customer_knows(shop_env):
    """Many rules test the ``large_item`` tag; the documents give only examples of it.

    "Orders with a large item ship standard for $19.99" decides a television's shipping,
    but the policy names only "furniture and appliances" as large items, and "Is it a large
    item?" was answered "I don't know" (10 of 40 tasks at d = 3 on 5k products hinged on it).
    """
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    rows = [factory.make("policy", d, k).row for d in (0, 3, 6) for k in range(25)]
    rows = [r for r in rows if "tags" in r.decoded("goal")["facts"]]
    assert rows, "no task of the fixture depends on the item's category"
    _assert_tag_told(shop_env, rows, "large_item", "Is it a large or bulky item?", "a large item")


@pytest.mark.parametrize(
    "question",
    [
        "Are you sending it back from Alaska or Hawaii, or from elsewhere in the US?",
        "Is the order being shipped to Alaska or Hawaii?",
        "Do you live in the contiguous US?",
        "What is your delivery address?",
        "Where are you located?",
    ],
)
def test_asked_where_they_ship_in_the_policy_s_words_the_customer_names_the_state(
    shop_env, question
):
    """The documents test "Alaska and Hawaii" and "the contiguous US", not a "state".

    Asked in those words ("Are you sending it back from Alaska or Hawaii?"), the customer
    answered "I'm not sure, it doesn't matter to me" in every one of the 16 of 60 tasks that
    need the state, and a mail return from Alaska ($12.99) read as the usual $6.99.
    """
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    rows = [factory.make("policy", d, k).row for d in (1, 4, 7, 10) for k in range(12)]
    rows = [r for r in rows if "state" in r.decoded("goal")["needed"]]
    assert rows, "no task of the fixture needs the state"
    for row in rows:
        state = row.decoded("goal")["facts"]["state"]
        shop_env.reset(row)
        obs, *_ = shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
        assert state in json.loads(obs["messages"][-1]["content"])["reply"], row.task_id


def test_asking_whether_the_item_is_large_covers_a_rule_that_tests_only_that(shop_env):
    """A rule whose only test of the item is the ``large_item`` tag ("… on orders of $15.00
    or more without large items") needed the product category asked: "Is it a large item?",
    what the rule tests, left "asked" false and the right answer scored r_task 0 (11 of 104
    tasks at d = 0–12 on 5k products; honest-agent audit). Either question counts now."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_missing": 1.0, "p_noise": 0.0})
    tried = {"large": 0, "category": 0}
    for d in (0, 3, 6, 9, 12):
        for k in range(20):
            row = factory.make("policy", d, k).row
            goal = row.decoded("goal")
            if "large_item" not in goal["needed"]:
                continue
            facts = [
                s["label"]
                for s in row.decoded("user_script")["slots"]
                if s["name"] in goal["needed"] and s["name"] != "large_item"
            ]
            for key, item_question in (
                ("large", "Is it a large item, like furniture?"),
                ("category", "What kind of product is it?"),
            ):
                calls = [("policy_search", {"query": goal["topic"].replace("_", " ")})]
                calls += [("ask_user", {"question": f"What is your {label}?"}) for label in facts]
                calls.append(("ask_user", {"question": item_question}))
                if goal["kind"] == "boolean":
                    text = "Yes." if goal["value"] else "No."
                else:
                    text = f"It is {goal['text']}."
                final = {"role": "assistant", "content": text}
                turns = [assistant_message(i, [c]) for i, c in enumerate(calls)]  # B_tool ≥ 1
                score, _ = play(shop_env, row, [*turns, final])
                assert score.is_correct, (row.task_id, key, score.details)
                tried[key] += 1
    assert tried["large"] > 0


def test_the_state_code_reaches_the_agent_unchanged(shop_env):
    """A two-letter state code took typos: "A." for CA, "sK" for AK, "AAK" (11 of 57 replies
    at d = 0–12 on 5k products), and one substitution turns AK into AL, Alabama, on the
    other side of the rule. Short capital codes are protected as numbers are."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.5})
    seen = 0
    for d in (0, 4, 8, 12):
        for k in range(25):
            row = factory.make("policy", d, k).row
            state = row.decoded("goal")["facts"].get("state")
            if not state:
                continue
            shop_env.reset(row)
            obs, *_ = shop_env.step(
                assistant_message(1, [("ask_user", {"question": "Which state are you in?"})])
            )
            reply = json.loads(obs["messages"][-1]["content"])["reply"]
            assert state in reply, reply  # a typo may still eat the blank before it
            seen += 1
    assert seen


def test_asked_whether_the_item_is_electronic_the_customer_knows(shop_env):
    """Rules test the ``electronics`` tag ("Members buying 50 or more units of an electronic
    item …"), which the item's name and department do not settle: a TV mount sits in the
    Electronics department without it, a stand mixer or an electric kettle carries it. "Is it
    an electronic item?" got "I don't know" in 48 of 48 policy tasks at d = 3–12 (5k products);
    8 of 260 tasks at d = 0–12 hinged on such a leaf (honest-agent audit). The customer knows
    it of their own item, as whether it is large, where the question's rules test it.
    """
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    rows = [factory.make("policy", d, k).row for d in (0, 3, 6, 9, 12) for k in range(12)]
    engine = factory.ctx.engine

    def tests_electronics(topic):
        rules = engine.rules_of(topic)
        return any(c.fact == "tags" and c.value == "electronics" for r in rules for c in r.when)

    rows = [
        r
        for r in rows
        if "tags" in r.decoded("goal")["facts"] and tests_electronics(r.decoded("goal")["topic"])
    ]
    assert rows, "no task of the fixture tests whether the item is electronic"
    _assert_tag_told(
        shop_env, rows, "electronics", "Is it an electronic item?", "an electronic item"
    )


def _assert_tag_told(shop_env, rows, tag, question, phrase):
    """Asked ``question``, each row's customer says ``phrase`` or "not <phrase>", as it holds."""
    seen = set()
    for row in rows:
        held = tag in row.decoded("goal")["facts"]["tags"]
        seen.add(held)
        shop_env.reset(row)
        obs, *_ = shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
        reply = json.loads(obs["messages"][-1]["content"])["reply"]
        assert (f"not {phrase}" in reply) is not held, reply
        assert phrase in reply, reply
    assert seen == {True, False}, f"the fixture must hold items with and without {tag}"


def test_a_quantity_the_customer_has_is_a_whole_number_of_at_least_one(factory):
    """A quantity filled in for the situation was drawn around the rules' bounds in steps of
    -7.5 / +3.25 / +12, so the customer said "the quantity is 0" of a price adjustment (9 of 54
    tasks with a quantity at d = 0–12 on 5k products) while the engine read 0.0, and 5.25 was
    said as 5 (13 of 54). Whole units are whole numbers, and nobody asks about none."""
    seen = 0
    for d in range(13):
        for k in range(20):
            goal = factory.make("policy", d, k).row.decoded("goal")
            if "quantity" not in goal["facts"]:
                continue
            seen += 1
            quantity = goal["facts"]["quantity"]
            assert quantity == int(quantity) >= 1, (d, k, quantity)
            assert goal["fact_values"]["quantity"] == quantity
    assert seen >= 20, "too few tasks of the fixture have a quantity"


def test_no_single_fact_tells_a_returnable_answer(yes_no_rows):
    """Every returnable yes was "items that arrive faulty can always be returned" (one clause)
    over the default "most items can be returned" (none): 150 of 150 yes answers at d = 0–5 on
    5k products, and every no a change of mind, so the reason alone gave the answer. The
    topic's default now answers a yes too, and a change of mind is a yes or a no by the item."""
    by_reason: dict[str, set[bool]] = {}
    deciding = set()
    for row in yes_no_rows:
        goal = row.decoded("goal")
        if goal["topic"] == "returnable":
            by_reason.setdefault(goal["facts"].get("reason"), set()).add(goal["value"])
            deciding.add(goal["rule_id"])
    assert by_reason["changed_mind"] == {True, False}, by_reason
    assert {"returnable_default", "returnable_faulty"} <= deciding


def test_the_prompt_says_a_second_value_reads_as_a_second_answer(tasks):
    """Every other number in the answer's unit is graded as a hedge: the agent is told so.

    An explanation ("the standard window is 30 days, but as a Premium member you get 45") is
    graded like "30 or 45 days"; before the prompt said so, an honest agent could not know.
    """
    goal = {"kind": "number", "value": 45, "unit": "days", "topic": "return window"}
    assert answer_right("As a Premium member you get 45 days.", goal)
    assert not answer_right("The standard is 30 days, but as a Premium member you get 45.", goal)
    numeric = [g.row for g in tasks if g.row.decoded("goal")["kind"] == "number"]
    assert numeric
    for row in numeric:
        assert "any other amount or number of days" in row.messages[0].content


def test_a_restated_fact_is_skipped_only_in_its_own_unit(tasks):
    """A price or order total is skipped in money answers, days in day answers, never in
    another unit: the item's $10 price hid a "10%" beside a true 15% (a cheat audit)."""
    from shopgen.verifiers.policy import _task_terms

    checked = 0
    for g in tasks:
        goal = g.row.decoded("goal")
        (_, _, unit, ignore, _), _ = _task_terms(g.row)
        facts = {k: v for k, v in goal["fact_values"].items() if isinstance(v, int | float)}
        money = [float(facts[k]) for k in ("order_total", "price") if k in facts]
        if unit == "percent" and money:
            checked += 1
            assert not set(money) & set(ignore) - set(goal.get("conditions", ()))
        if unit == "USD" and money:
            assert set(money) <= set(ignore)
    assert checked
