"""journey: all seven sub-environments, one customer, chained oracles, the mean of sub-verifiers."""

import dataclasses
import json

import pytest

from shopgen.env.state import EpisodeState
from shopgen.gen.schedules import journey_length
from shopgen.gen.tasks.base import CustomerView
from shopgen.gen.tasks.constraints import preference, tables
from shopgen.gen.tasks.journey import DETAILS, ORDER_ENVS, SUB_ENVS, step_categories, sub_task
from shopgen.schemas.errors import ConfigError
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, run_policy
from shopgen.verifiers.journey import owned_lists, texts, verify
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


def test_every_sub_environment_appears_where_usable(rows):
    seen = {(s["env"], row.d) for row in rows for s in _steps(row)}
    for env, low in SUB_ENVS.items():
        assert any(e == env for e, _ in seen), env
        assert all(d >= low for e, d in seen if e == env), env
    assert set(SUB_ENVS) == {
        "discovery",
        "substitution",
        "cart",
        "returns",
        "status",
        "policy",
        "bundle",
    }


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
                cat = step["goal"]["constraints"]["category"]
                assert step["goal"]["preference"] == preference(ctx, user, cat).to_dict()


def test_product_steps_use_disjoint_categories(factory, rows):
    for row in rows:
        cats = [step_categories(factory.ctx, s["env"], s["goal"]) for s in _steps(row)]
        flat = [c for cs in cats for c in cs]
        assert len(flat) == len(set(flat))


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
    paragraphs = texts(state.final_text, len(steps))
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


def test_p_switch_raises_a_bundle_budget(shop_env):
    f = TaskFactory(shop_env, seed=0, overrides={"p_switch": 1.0})
    hits = 0
    for k in range(6):
        row = f.make("journey", 8, k).row
        switch = row.decoded("user_script")["switch"]
        bundle = [s for s in _steps(row) if s["env"] == "bundle"]
        if bundle and bundle[0]["goal"]["budget"] is not None:
            hits += 1
            assert switch is not None
            assert bundle[0]["goal"]["budget"] == switch["changes"][0][1]
        else:
            assert switch is None
    assert hits > 0


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
