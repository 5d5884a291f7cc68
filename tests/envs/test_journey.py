"""journey: all seven sub-environments, one customer, chained oracles, the mean of sub-verifiers."""

import dataclasses
import json
from datetime import date

import pytest

from shopgen.env.state import EpisodeState
from shopgen.gen.difficulty import theta
from shopgen.gen.schedules import journey_length, journey_turns
from shopgen.gen.tasks.base import CustomerView, Draft, Redraw, episode_now, words
from shopgen.gen.tasks.bundle import _index
from shopgen.gen.tasks.cart_items import history_matches
from shopgen.gen.tasks.constraints import Constraints, preference, tables
from shopgen.gen.tasks.journey import (
    DETAILS,
    ORDER_ENVS,
    SUB_ENVS,
    _check_history,
    _check_stock_marks,
    step_categories,
    sub_task,
)
from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.errors import ConfigError
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, run_policy, scored_with_final
from shopgen.verifiers.journey import owned_lists, verify
from shopgen.verifiers.layout import texts
from shopgen.verifiers.replay import play

LEVELS = range(13)
PER_LEVEL = 3


@pytest.fixture(scope="module")
def rows(factory):
    return [factory.make("journey", d, k).row for d in LEVELS for k in range(PER_LEVEL)]


@pytest.fixture(scope="module")
def played(shop_env, rows):
    return [play(shop_env, row, json.loads(row.oracle)) for row in rows]


def _steps(row):
    return row.decoded("goal")["steps"]


def _kinds(row):
    return tuple(step["env"] for step in _steps(row))


def test_bad_level_is_rejected(factory):
    with pytest.raises(ConfigError):
        factory.make("journey", -1, 0)


def test_same_key_same_task(factory, rows):
    assert factory.make("journey", 5, 0).row == rows[5 * PER_LEVEL]
    assert factory.make("journey", 5, 1).row.task_id != rows[5 * PER_LEVEL].task_id


def test_oracle_is_correct_at_every_level(rows, played):
    for row, (score, _) in zip(rows, played, strict=True):
        assert score.is_correct, (row.d, score.details)
        assert score.reward == pytest.approx(0.9)
        assert len(score.details["steps"]) == len(_steps(row))


def test_oracle_turns_never_exceed_the_tool_budget(rows):
    full = total = 0
    for row in rows:
        sizes = [len(m["tool_calls"]) for m in json.loads(row.oracle) if m.get("tool_calls")]
        assert max(sizes) <= row.axis("B_tool"), row.d
        full += sizes.count(row.axis("B_tool"))
        total += len(sizes)
    # Packed call by call, most turns are full (70% here; 47% with whole turns first-fit).
    assert full > 0.6 * total


def test_a_journey_gets_a_turn_for_each_request_after_its_first(shop_env, factory, rows):
    # Within T_max(d) alone, draws holding the long requests (cart, discovery, substitution)
    # were redrawn far more often than the short ones: journeys held fewer of them than drawn.
    for row in rows:
        assert journey_turns(row.d) == journey_length(row.d) - 1
        assert row.axis("T_max") == theta(row.d).T_max + journey_turns(row.d)
    turns = [sum(m["role"] == "assistant" for m in json.loads(row.oracle)) for row in rows]
    assert any(n > theta(row.d).T_max for n, row in zip(turns, rows, strict=True))
    assert factory.make("policy", 5, 0).row.axis("T_max") == theta(5).T_max
    overridden = TaskFactory(shop_env, seed=0, overrides={"T_max": 5}).make("journey", 5, 0)
    assert overridden.row.axis("T_max") == 5 + journey_turns(5)


def test_bundle_steps_are_asked_for_and_never_the_whole_project(factory, rows):
    projects = dict(_index(factory.ctx).projects)
    steps = [s for row in rows if row.d >= 2 for s in _steps(row) if s["env"] == "bundle"]
    assert steps
    for step in steps:
        kinds = {c["category"] for c in step["goal"]["categories"]}
        assert kinds < set(projects[step["goal"]["project"]])


def test_the_agent_is_told_the_answer_layout_the_oracle_is_graded_by(rows):
    """Text facts are graded paragraph by paragraph: the system prompt says so, the oracle does."""
    for row in rows:
        assert "one paragraph per request" in row.messages[0].content
        final = json.loads(row.oracle)[-1]["content"]
        assert texts(final, _kinds(row)) != (final,) * len(_steps(row)) or len(_steps(row)) == 1


#: What an honest agent wraps its one-paragraph-per-request answer in: a greeting, a closing
#: offer of help, a heading above each paragraph. None of it answers a request.
_WRAPPINGS = {
    "greeting": lambda ps: ["Hi! Here is everything you asked for.", *ps],
    "closing": lambda ps: [*ps, "Let me know if there is anything else I can help with!"],
    "both": lambda ps: ["Hello!", *ps, "Hope this helps, happy shopping!"],
    "headings": lambda ps: [x for i, p in enumerate(ps) for x in (f"### Request {i + 1}", p)],
    "bold headings": lambda ps: [x for i, p in enumerate(ps) for x in (f"**Request {i + 1}:**", p)],
    # Each of these voided the layout (a journey audit: 6 of 50 journeys then failed a policy
    # step on another step's prices, 8 of 50 on "Sure" read as a yes).
    "sign-off": lambda ps: [*ps, "Best regards,\nYour Shopping Assistant"],
    "cheers": lambda ps: ["Sure! Here's where everything stands.", *ps, "Cheers!"],
    "counted": lambda ps: [f"Here are the results of your {len(ps)} requests.", *ps, "All done!"],
    # Lines that answer nothing and hold no courtesy word (a wrapping audit: each made 211 of
    # 520 oracle journeys fail once their discovery steps listed prices).
    "found": lambda ps: ["Here's what I found.", *ps],
    "take care": lambda ps: [*ps, "Take care!"],
    "long sign-off": lambda ps: [
        *ps,
        "If you have any other questions about your orders, returns or our store policies, "
        "please don't hesitate to reach out at any time, I'm always happy to help you!",
    ],
    "long headings": lambda ps: [
        x for i, p in enumerate(ps) for x in (f"**Request {i + 1}: {'what you asked ' * 8}**", p)
    ],
}


def test_courtesy_lines_and_headings_are_not_paragraphs_of_a_request():
    """A greeting, a closing line or a heading paragraph does not void the one-per-request layout.

    Each made the paragraph count differ from the steps', so every step was graded on the whole
    message, where another step's prices or dates contradicted a policy or status answer: 26% of
    a 35-journey sample failed on a closing "Let me know if…" line alone.
    """
    answers = ["Your order was delivered on 2026-01-30.", "Our policy gives 20% in your case."]
    kinds = ("status", "policy")
    for name, wrap in _WRAPPINGS.items():
        got = texts("\n\n".join(wrap(answers)), kinds)
        assert len(got) == 2, name
        assert answers[0] in got[0], name
        assert answers[1] not in got[0], name
        assert answers[1] in got[1], name
        assert answers[0] not in got[1], name
    # A paragraph that says something is no courtesy line: the count differs, whole message.
    extra = "\n\n".join([*answers, "It may also have been cancelled on 2026-02-02."])
    assert texts(extra, kinds) == (extra, extra)
    # A list a paragraph introduces with a colon is that paragraph's, across blank lines.
    listed = "Your set:\n\n- a lamp ($12.99)\n\n- a desk ($80.00)\nTotal: $92.99."
    got = texts("\n\n".join([answers[0], listed, answers[1]]), ("status", "bundle", "policy"))
    assert got[1] == listed.replace("\n\n", "\n")
    # Numbered answers are no list of one paragraph's.
    numbered = [f"{i + 1}. {a}" for i, a in enumerate(answers)]
    assert texts("\n\n".join(numbered), kinds) == tuple(numbered)
    # Only around the answers: a courtesy line between two answers is a request's paragraph.
    middle = "\n\n".join([answers[0], "Let me know if that helps.", answers[1]])
    assert texts(middle, kinds) == (middle, middle)


def test_an_honest_answer_with_courtesy_lines_is_graded_as_the_oracle(shop_env, rows):
    checked = 0
    for row in rows[6::2]:
        n = len(_steps(row))
        final = json.loads(row.oracle)[-1]["content"]
        paragraphs = list(texts(final, _kinds(row)))
        if n < 2 or paragraphs == [final] * n:
            continue
        for name, wrap in _WRAPPINGS.items():
            score, oracle = scored_with_final(shop_env, row, "\n\n".join(wrap(paragraphs)))
            assert score.is_correct, (name, row.task_id, score.details)
            assert score.reward == oracle.reward
        checked += 1
    assert checked >= 5


def test_every_sub_environment_appears_where_usable(rows):
    seen = {(s["env"], row.d) for row in rows for s in _steps(row)}
    for env, low in SUB_ENVS.items():
        assert any(e == env for e, _ in seen), env
        assert all(d >= low for e, d in seen if e == env), env
    assert set(SUB_ENVS) == set(ENV_NAMES) - {"journey"}


def test_length_and_composition_rules(rows):
    for row in rows:
        envs = [s["env"] for s in _steps(row)]
        assert len(envs) == len(set(envs)) == journey_length(row.d)
        assert sum(e in ORDER_ENVS for e in envs) <= 1
    assert len(_steps(rows[-1])) > len(_steps(rows[0]))


def test_one_customer_per_journey(factory, rows):
    ctx = factory.ctx
    for row in rows:
        episode = row.decoded("episode")
        user = episode["user_id"]
        for step in _steps(row):
            assert step["episode"].get("user_id", user) == user
            assert step["episode"]["today"] == episode["today"]
            if step["env"] in ORDER_ENVS:
                owners = {o["user_id"] for o in ctx.store.orders_of(user)}
                assert owners == {user}
                mine = {o["order_id"] for o in ctx.store.orders_of(user)}
                assert set(step["episode"]["order_ids"]) <= mine
            if step["env"] in ("discovery", "substitution"):
                # The ranking is the journey customer's own preference profile.
                cons = Constraints.from_dict(step["goal"]["constraints"])
                assert step["goal"]["preference"] == preference(ctx, user, cons).to_dict()


def test_product_steps_use_disjoint_categories(factory, rows):
    for row in rows:
        cats = [step_categories(factory.ctx, s["env"], s["goal"]) for s in _steps(row)]
        flat = [c for cs in cats for c in cs]
        assert len(flat) == len(set(flat))


def test_no_step_marks_another_steps_products_out_of_stock(factory, rows):
    category = factory.ctx.store.product_field
    for row in rows:
        cats = [step_categories(factory.ctx, s["env"], s["goal"]) for s in _steps(row)]
        for i, step in enumerate(_steps(row)):
            others = set().union(*(c for j, c in enumerate(cats) if j != i))
            marked = step["episode"].get("out_of_stock", [])
            assert not {category(p, "category_id") for p in marked} & others


def test_a_draw_whose_marks_touch_another_step_is_redrawn(factory):
    """A bundle marking a camping chair shown by its cooler search, next to a chair step."""
    store = factory.ctx.store
    chair, cooler = (store.products["product_id"][r] for r in (0, 1))
    chairs = store.product_field(chair, "category_id")
    coolers = store.product_field(cooler, "category_id")
    assert chairs != coolers
    bundle = Draft(slots=(), goal={}, episode={"out_of_stock": [chair]})
    substitution = Draft(slots=(), goal={}, episode={"out_of_stock": []})
    drafts, categories = {0: bundle, 1: substitution}, {0: {coolers}, 1: {chairs}}
    with pytest.raises(Redraw, match="another step's categories"):
        _check_stock_marks(factory.ctx, drafts, categories)
    _check_stock_marks(factory.ctx, drafts, {0: {coolers, chairs}, 1: set()})  # its own: fine


def test_every_journey_draw_checks_its_stock_marks(shop_env, monkeypatch):
    from shopgen.gen.tasks import journey

    seen = []

    def spy(ctx, drafts, categories):
        seen.append(sorted(categories))
        return _check_stock_marks(ctx, drafts, categories)

    monkeypatch.setattr(journey, "_check_stock_marks", spy)
    TaskFactory(shop_env, seed=0).make("journey", 6, 0)
    assert seen
    assert seen[-1] == list(range(journey_length(6)))  # the accepted draw's steps


def test_customer_view_binds_draws_and_shares_caches(factory):
    ctx = factory.ctx
    rich = ctx.customers_with_orders(3)[0]
    view = ctx.for_customer(rich)
    assert isinstance(view, CustomerView)
    assert view.user_ids == [rich]
    assert view.customers_with_orders(3) == [rich]
    poor = [u for u in ctx.user_ids if u not in set(ctx.customers_with_orders(1))]
    if poor:
        assert ctx.for_customer(poor[0]).customers_with_orders(1) == []
    assert tables(view) is tables(ctx)
    assert view.products is ctx.products
    later = ctx.for_customer(rich, today=ctx.today.replace(year=ctx.today.year + 1))
    assert later.now().year == ctx.now().year + 1
    assert ctx.now().date() == ctx.today


def test_recommendation_lists_are_owned_by_category():
    steps = [
        {"env": "discovery", "goal": {"constraints": {"category": "a"}}},
        {"env": "status", "goal": {}},
        {"env": "bundle", "goal": {"categories": [{"category": "b"}, {"category": "c"}]}},
    ]

    def listed(*cats):
        ids = [f"P{i}" for i in range(len(cats))]
        return {
            "product_ids": ids,
            "facts": {p: {"category_id": c} for p, c in zip(ids, cats, strict=False)},
        }

    first_a, mixed, junk, last_a = listed("a"), listed("b", "c", "a"), listed("z"), listed("a", "a")
    owned = owned_lists(steps, [first_a, mixed, junk, last_a])
    assert owned == {0: last_a, 2: mixed}
    assert owned_lists(steps, [listed("a", "b")]) == {0: listed("a", "b")}  # tie: earlier step


def _broken(row, state, i):
    """The final state with step ``i`` undone (its answer, list, cart or return removed)."""
    steps = _steps(row)
    env = steps[i]["env"]
    out = dataclasses.replace(state, extra=dict(state.extra), cart=dict(state.cart))
    paragraphs = texts(state.final_text, tuple(s["env"] for s in steps))
    if env in ("discovery", "substitution", "bundle"):
        mine = owned_lists(steps, state.extra["recommendation_lists"])[i]
        out.extra["recommendation_lists"] = [
            e for e in state.extra["recommendation_lists"] if e is not mine
        ]
    elif env == "cart":
        out.cart = {}
    elif env == "returns" and steps[i]["goal"]["eligible"]:
        out.extra.pop("returns", None)
        out.extra.pop("exchanges", None)
    else:
        out.final_text = "\n\n".join(
            p if j != i else "Sorry, I could not do that." for j, p in enumerate(paragraphs)
        )
    return out


def test_undoing_one_step_lowers_r_task(rows, played):
    for row, (full, state) in list(zip(rows, played, strict=True))[2::4]:
        for i in range(len(_steps(row))):
            partial = verify(row, _broken(row, state, i), [])
            assert partial.r_task < full.r_task, (_steps(row)[i]["env"], partial.details)
            assert not partial.is_correct


@pytest.fixture(scope="module")
def switched(shop_env):
    """Journeys with p_switch = 1 (a change of mind whenever a step can switch)."""
    f = TaskFactory(shop_env, seed=0, overrides={"p_switch": 1.0})
    return [f.make("journey", d, k).row for d in range(4, 13) for k in range(4)]


def _switch_of(row):
    """(journey switch, index of the step it concerns, that step) or None."""
    switch = row.decoded("user_script")["switch"]
    if switch is None:
        return None
    i = int(switch["changes"][0][0].split(".")[1])
    return switch, i, _steps(row)[i]


def _final_holds(store, step, name, value):
    """Whether the step's hidden goal holds ``value`` for its slot ``name`` (the final intent)."""
    goal = step["goal"]
    if step["env"] in ("discovery", "substitution"):
        c = goal["constraints"]
        return (
            c["price_max"] if name == "price_max" else c["attrs"][name[len("attrs.") :]]
        ) == value
    if step["env"] == "bundle":
        if name == "budget":
            return goal["budget"] == value
        return value in [k["noun"] for k in goal["categories"]]
    if step["env"] == "returns":
        return goal["exchange"][name.split(".", 1)[1]] == value
    j = int(name.split(".")[1])  # cart: items.<j>.…
    item = goal["items"][j]
    if name.endswith(".desc"):
        return item["desc"] == value
    axis = name.split(".")[3]
    return str(store.variant(item["variant_id"])["attributes"][axis]) == value


def test_p_switch_lands_on_steps_of_several_environments(shop_env, switched):
    store = shop_env.store
    envs = set()
    for row in switched:
        found = _switch_of(row)
        steps = _steps(row)
        if found is None:
            continue
        switch, i, step = found
        envs.add(step["env"])
        own = step["user_script"]["switch"]
        # The step's own switch, under its own names; the journey's names say which step.
        assert own["kind"] == switch["kind"]
        assert own["turn"] == switch["turn"]
        assert [v for _, v in own["changes"]] == [v for _, v in switch["changes"]]
        assert sum(s["user_script"].get("switch") is not None for s in steps) == 1
        (name, value), (jname, _) = own["changes"][0], switch["changes"][0]
        assert jname.startswith(f"steps.{i}.")
        assert _final_holds(store, step, name, value), (step["env"], name, value)
        script = {s["name"]: s for s in row.decoded("user_script")["slots"]}
        if jname in script:  # a changed slot: first said otherwise, named with its step
            assert script[jname]["value"] != value
            assert " for the " in script[jname]["label"] or "in my cart" in script[jname]["label"]
        score, _state = play(shop_env, row, json.loads(row.oracle))
        assert score.is_correct, (step["env"], score.details)
        assert score.reward == pytest.approx(0.9)
        said = [m for m in shop_env.transcript[2:] if m.get("role") == "user"]
        assert len(said) <= 1  # said once (unprompted, or in a reply)
    assert len(envs) >= 3, envs
    assert envs <= {"discovery", "substitution", "cart", "returns", "bundle"}


def _first_intent(store, row, messages):
    """The oracle's messages acting on the first-stated intent of the switched step, or None.

    Only changes whose first intent the final one excludes: another variant (cart, returns
    exchange) or one more item (cart, bundle). A raised budget still admits the first
    intent's picks, so it has no such trajectory.
    """
    switch, _i, step = _switch_of(row)
    (name, value), kind = step["user_script"]["switch"]["changes"][0], switch["kind"]
    first = {s["name"]: s["value"] for s in row.decoded("user_script")["slots"]}
    goal = step["goal"]
    out = json.loads(json.dumps(messages))

    def calls():
        for m in out:
            for c in m.get("tool_calls") or []:
                yield m, c, json.loads(c["function"]["arguments"])

    if step["env"] == "cart" and kind == "change_variant":
        item = goal["items"][int(name.split(".")[1])]
        axis, old = name.split(".")[3], first[switch["changes"][0][0]]
        want = {**store.variant(item["variant_id"])["attributes"], axis: old}
        was = next(
            v["variant_id"]
            for v in store.variants_of(item["product_id"])
            if {k: str(x) for k, x in v["attributes"].items()}
            == {k: str(x) for k, x in want.items()}
        )
        for _, c, args in calls():
            if c["function"]["name"] == "cart_add" and args.get("variant_id") == item["variant_id"]:
                c["function"]["arguments"] = json.dumps({**args, "variant_id": was})
        return out
    if step["env"] == "returns" and kind == "change_variant":
        axis, old = name.split(".", 1)[1], first[switch["changes"][0][0]]
        attrs = step["episode"]["variant_attrs"]
        new = next(v for v, a in attrs.items() if str(a.get(axis)) == str(value))
        want = {**attrs[new], axis: old}
        was = next(v for v, a in attrs.items() if a == want)
        for _, c, args in calls():
            if c["function"]["name"] == "exchange_start":
                c["function"]["arguments"] = json.dumps({**args, "new_variant_id": was})
        return out
    if kind == "add_item" and step["env"] in ("cart", "bundle"):
        added = (
            goal["cart"][-1]["product_id"]
            if step["env"] == "cart"
            else goal["categories"][-1]["category"]
        )
        for m, c, args in list(calls()):
            if step["env"] == "cart" and c["function"]["name"] == "cart_add":
                if args["product_id"] == added:
                    m["tool_calls"].remove(c)
            elif c["function"]["name"] == "recommend_products":
                ids = [p for p in args["product_ids"] if store.product(p)["category_id"] != added]
                c["function"]["arguments"] = json.dumps({**args, "product_ids": ids})
        for m in out:
            if m.get("tool_calls") == []:
                m["tool_calls"] = [
                    {
                        "id": "pad",
                        "type": "function",
                        "function": {"name": "cart_view", "arguments": "{}"},
                    }
                ]
        return out
    return None


def test_final_intent_is_graded_not_the_first(shop_env, switched):
    store = shop_env.store
    tried = 0
    for row in switched:
        if _switch_of(row) is None:
            continue
        messages = json.loads(row.oracle)
        first = _first_intent(store, row, messages)
        if first is None:
            continue
        tried += 1
        full, _ = play(shop_env, row, messages)
        score, _ = play(shop_env, row, first)
        assert not score.is_correct, _switch_of(row)[0]
        assert score.r_task < full.r_task
    assert tried >= 2


def test_p_switch_zero_gives_no_switch(shop_env):
    f = TaskFactory(shop_env, seed=0, overrides={"p_switch": 0.0})
    for d in (6, 10, 12):
        for k in range(3):
            row = f.make("journey", d, k).row
            assert row.decoded("user_script")["switch"] is None
            assert all(s["user_script"].get("switch") is None for s in _steps(row))


def test_p_missing_drops_step_details(shop_env):
    def details(p_missing):
        f = TaskFactory(shop_env, seed=0, overrides={"p_missing": p_missing})
        rows = [f.make("journey", 7, k).row for k in range(8)]
        said = dropped = 0
        for row in rows:
            script = {s["name"]: s for s in row.decoded("user_script")["slots"]}
            for i, step in enumerate(_steps(row)):
                sub = {s["name"]: s for s in sub_task(row, step, i).decoded("user_script")["slots"]}
                for name, slot in sub.items():
                    journey_name = f"steps.{i}.{name}"
                    if journey_name in script and any(
                        name == d or name.startswith(d) for d in DETAILS.get(step["env"], ())
                    ):
                        # The step's oracle and verifier see exactly what the message dropped.
                        assert slot["omitted"] == script[journey_name]["omitted"]
                        said += not slot["omitted"]
                        dropped += slot["omitted"]
            score, _ = play(shop_env, row, json.loads(row.oracle))
            assert score.is_correct
        return said, dropped

    said_none, dropped_none = details(0.0)
    said_most, dropped_most = details(0.8)
    assert dropped_none == 0
    assert said_none > 0
    assert dropped_most > 0
    assert said_most < said_none


def test_degenerate_policies_never_win(shop_env, rows):
    for label, policy in DEGENERATE.items():
        rewards = []
        for row in rows[::4]:
            score = run_policy(shop_env, row, policy)
            assert not score.is_correct, label
            assert -1 <= score.reward <= 1
            rewards.append(score.reward)
        assert sum(rewards) / len(rewards) <= 0, label


def test_steps_share_one_state_not_one_list(rows, played):
    """Two recommend-steps in one journey are each graded on their own list."""
    both = 0
    for row, (_score, state) in zip(rows, played, strict=True):
        recs = [i for i, s in enumerate(_steps(row)) if s["env"] in ("discovery", "substitution")]
        recs += [i for i, s in enumerate(_steps(row)) if s["env"] == "bundle"]
        if len(recs) >= 2:
            both += 1
            owned = owned_lists(_steps(row), state.extra["recommendation_lists"])
            assert set(recs) <= set(owned)
            assert len({id(owned[i]) for i in recs}) == len(recs)
            assert isinstance(state, EpisodeState)
    assert both > 0


def test_prompt_says_what_an_order_check_paragraph_states(factory):
    """A status step is graded on the status and the date whatever the customer asked for.

    "check on my order (tracking number)" is graded by status's verifier: the status, the
    (expected) delivery date and the tracking number. Journey 2.5's prompt said nothing of
    it, so an agent answering what was asked lost the rest (61 of 79 status steps in 150
    journeys at d = 0–12 on 5k products).
    """
    for k in range(40):
        row = factory.make("journey", 0, k).row
        steps = json.loads(row.goal)["steps"]
        status = [s["goal"] for s in steps if s["env"] == "status"]
        if status and status[0]["date"] and "status" not in status[0]["want"]:
            break
    else:
        pytest.fail("no status step that leaves its status unasked in 40 journeys")
    system = row.messages[0].content.lower()
    assert "states its status" in system
    assert "expected one" in system
    assert "not eligible says so and why" in system
    # A policy step is graded as policy's: another amount or day count reads as a hedge.
    assert "for their case alone, with no other amount or number of days" in system


def _history_items(row):
    """(noun, time said, product id, episode) of each cart step item named by the history."""
    goal, episode = row.decoded("goal"), row.decoded("episode")
    for step in goal["steps"]:
        if step["env"] != "cart":
            continue
        said = {s["name"]: s.get("value") for s in step["user_script"]["slots"]}
        for i, item in enumerate(step["goal"]["items"]):
            if item["history"]:
                yield item["desc"], said[f"items.{i}.seen"], item["product_id"], episode


def test_history_items_are_told_apart_by_the_time_said(rows):
    """Cart steps' history items: other views of their kind (any step's) only at other times."""
    items = [it for row in rows for it in _history_items(row)]
    clashing = 0
    for noun, when, product_id, episode in items:
        now = episode_now(date.fromisoformat(episode["today"]))
        assert history_matches(episode["visit_history"], noun, when, now) == [product_id]
        kind = set(words(noun))
        clashing += sum(kind <= set(words(v["title"])) for v in episode["visit_history"]) > 1
    assert len(items) >= 5
    assert clashing >= 2


def test_a_same_kind_view_at_the_time_said_is_redrawn():
    lamp = {"product_id": "P1", "title": "Acme Desk Lamp", "viewed_at": "2026-03-01T10:00"}
    other = {"product_id": "P2", "title": "Bolt Desk Lamp", "viewed_at": "2026-02-23T10:00"}
    step = {
        "env": "cart",
        "goal": {"items": [{"history": True, "desc": "desk lamp", "product_id": "P1"}]},
        "user_script": {"slots": [{"name": "items.0.seen", "value": "yesterday"}]},
    }
    episode = {"today": "2026-03-02", "visit_history": [lamp, other]}
    _check_history([step], episode)  # the other lamp was viewed last week: "yesterday" is P1
    episode["visit_history"] = [lamp, {**other, "viewed_at": "2026-03-01T16:00"}]
    with pytest.raises(Redraw, match="fits the time"):
        _check_history([step], episode)
