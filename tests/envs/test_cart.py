"""The cart environment: generation, independent answers, θ effects, oracle, verifier, cheats."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date, datetime, time, timedelta
from fractions import Fraction
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopgen.env.episode import ShopEnv
from shopgen.env.state import EpisodeState
from shopgen.env.tools import ENV_TOOLS
from shopgen.gen.difficulty import theta
from shopgen.gen.schedules import p_history_clash
from shopgen.gen.seeding import stream
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks import cart
from shopgen.gen.tasks.base import Redraw, call
from shopgen.schemas.errors import ShopgenError
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.verifiers.cart import details_to_ask, unit_f1, verify
from shopgen.verifiers.replay import play
from shopgen.verifiers.reward import MAX_REWARD

SEED_SIX = (
    "catalog_search",
    "catalog_get_variants",
    "cart_add",
    "cart_view",
    "user_get_visit_history",
    "ask_user",
)


@pytest.fixture(scope="module")
def tasks(factory: TaskFactory) -> dict[int, list]:
    """Two proven tasks per d in 0..12 (the oracle is replayed by ``make`` itself)."""
    return {d: [factory.make("cart", d, k) for k in range(2)] for d in range(13)}


def _drafts(factory: TaskFactory, d: int, n: int, **overrides: float) -> list:
    out = []
    for k in range(n):
        try:
            out.append(
                cart.generate(factory.ctx, d, theta(d, **overrides), stream(0, "test", d, k))
            )
        except Redraw:
            continue
    return out


# -- configuration and determinism -------------------------------------------------------------


def test_bad_difficulty_is_rejected(factory: TaskFactory) -> None:
    with pytest.raises(ShopgenError, match="d=-1"):
        factory.make("cart", -1, 0)
    with pytest.raises(ShopgenError, match="p_oos"):
        theta(3, p_oos=2.0)


def test_tools_are_the_seed_six_then_fixes() -> None:
    assert ENV_TOOLS["cart"][:6] == SEED_SIX
    assert set(ENV_TOOLS["cart"][6:]) <= {
        "cart_remove",
        "cart_update_quantity",
        "catalog_get_product",
    }


def test_same_key_same_task(factory: TaskFactory, indexed_catalog_dir: Path) -> None:
    other = TaskFactory(ShopEnv(CatalogStore(indexed_catalog_dir)), seed=0)
    a = factory.make("cart", 7, 3).row
    other.make("cart", 7, 0)  # a different history of calls must not matter
    b = other.make("cart", 7, 3).row
    assert a == b
    assert factory.make("cart", 7, 4).row.task_id != a.task_id


# -- the answer, recomputed independently ------------------------------------------------------


def _title_matches(store_dir: Path, desc: str) -> list[str]:
    """Product ids whose title holds every word of ``desc`` (DuckDB, word boundaries)."""
    ws = re.findall(r"[a-z0-9]+", desc.lower())
    where = " AND ".join(
        f"regexp_matches(lower(title), '(^|[^a-z0-9]){w}([^a-z0-9]|$)')" for w in ws
    )
    path = next((store_dir / "products").glob("*.parquet"))
    sql = f"SELECT product_id FROM read_parquet('{path}') WHERE {where}"
    return [r[0] for r in duckdb.sql(sql).fetchall()]


#: Calendar days back each exact time reference names ("last week": :func:`_viewed_then`).
_DAYS_BACK = {"this morning": 0, "yesterday": 1, "two days ago": 2, "three days ago": 3}


def _viewed_then(episode: dict, noun: str, when: str) -> list[str]:
    """Ids of the views whose title holds ``noun`` and whose day fits ``when`` (from noon today).

    "last week" fits about a week back (4–13 days) or the previous calendar week, the two
    ways a customer may mean it.
    """
    now = datetime.combine(date.fromisoformat(episode["today"]), time(12))
    kind = set(re.findall(r"[a-z0-9]+", noun.lower()))
    out = []
    for v in episode["visit_history"]:
        if not kind <= set(re.findall(r"[a-z0-9]+", v["title"].lower())):
            continue
        seen = datetime.fromisoformat(v["viewed_at"])
        back = (now.date() - seen.date()).days
        monday = now.date() - timedelta(days=now.weekday())
        if when == "last week":
            fits = 4 <= back <= 13 or monday - timedelta(days=7) <= seen.date() < monday
        else:
            fits = back == _DAYS_BACK[when]
        if fits:
            out.append(v["product_id"])
    return out


def _same_kind_views(episode: dict, noun: str) -> int:
    kind = set(re.findall(r"[a-z0-9]+", noun.lower()))
    titles = [set(re.findall(r"[a-z0-9]+", v["title"].lower())) for v in episode["visit_history"]]
    return sum(kind <= t for t in titles)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(d=st.integers(9, 14), k=st.integers(0, 10_000))
def test_history_views_of_one_kind_are_told_apart_by_the_time_said(
    factory: TaskFactory, d: int, k: int
) -> None:
    """At high d a history item's kind is viewed at other times too; its time picks one view."""
    try:
        draft = cart.generate(factory.ctx, d, theta(d), stream(0, "clash", d, k))
    except Redraw:
        return
    said = {s.name: s.value for s in draft.slots}
    for i, item in enumerate(draft.goal["items"]):
        when = said.get(f"items.{i}.seen")
        if when is not None:
            assert _viewed_then(draft.episode, item["desc"], when) == [item["product_id"]]


def test_p_history_clash_adds_same_kind_views_at_other_times(factory: TaskFactory) -> None:
    """The old history held one view per history item's kind: the noun alone found it."""

    def shares(d: int) -> tuple[int, int]:
        refs = clashing = 0
        for draft in _drafts(factory, d, 40):
            for item in draft.goal["items"]:
                if item["history"]:
                    refs += 1
                    clashing += _same_kind_views(draft.episode, item["desc"]) > 1
        return refs, clashing

    low, high = shares(3), shares(12)
    assert p_history_clash(12) > 0.8 > 0.15 > p_history_clash(2)
    assert high[0] > 20
    assert high[1] / high[0] > 0.6
    assert low[1] / max(1, low[0]) < high[1] / high[0]


def test_the_visit_history_shows_the_time_now(factory: TaskFactory, shop_env: ShopEnv) -> None:
    """Yesterday counts from now: the tool shows it, as the generator dated the views."""
    made = (factory.make("cart", 10, k) for k in range(40))
    g = next(g for g in made if any(it["history"] for it in g.row.decoded("goal")["items"]))
    shop_env.reset(g.row)
    obs, _, _, _ = shop_env.step(assistant_message(0, [call("user_get_visit_history")]))
    result = json.loads(obs["messages"][0]["content"])
    episode = g.row.decoded("episode")
    assert result["now"] == f"{episode['today']}T12:00"
    assert [v["viewed_at"] for v in result["visits"]] == [
        v["viewed_at"] for v in episode["visit_history"]
    ]


def test_descriptions_single_out_the_target(tasks, indexed_catalog_dir: Path) -> None:
    checked = 0
    for gens in tasks.values():
        for g in gens:
            goal, episode = g.row.decoded("goal"), g.row.decoded("episode")
            script = {s["name"]: s for s in g.row.decoded("user_script")["slots"]}
            for i, item in enumerate(goal["items"]):
                desc = script.get(f"items.{i}.desc", {}).get("value", item["desc"])
                if item["history"]:
                    when = script[f"items.{i}.seen"]["value"]
                    assert _viewed_then(episode, desc, when) == [item["product_id"]]
                elif desc == item["desc"]:
                    assert _title_matches(indexed_catalog_dir, desc) == [item["product_id"]]
                checked += 1
                assert item["product_id"] not in episode["out_of_stock"]
                assert item["variant_id"] not in episode["out_of_stock"]
    assert checked > 30


def test_variant_slots_name_the_goal_variant(tasks, factory: TaskFactory) -> None:
    store = factory.env.store
    for gens in tasks.values():
        for g in gens:
            goal = g.row.decoded("goal")
            script = g.row.decoded("user_script")
            values = {s["name"]: s["value"] for s in script["slots"]}
            values.update(dict((script.get("switch") or {}).get("changes", [])))
            for i, item in enumerate(goal["items"]):
                said = {
                    n.rsplit(".", 1)[1]: v
                    for n, v in values.items()
                    if n.startswith(f"items.{i}.variant.")
                }
                if item["n_variants"] >= 2:
                    attrs = store.variant(item["variant_id"])["attributes"]
                    assert said == {k: str(v) for k, v in attrs.items()}
                qty = values.get(f"items.{i}.qty", 1)
                assert item["quantity"] == qty


def test_user_messages_never_hold_hidden_ids(tasks) -> None:
    for gens in tasks.values():
        for g in gens:
            ids = json.loads(g.row.user_script)["never_say"]
            text = " ".join(m.content for m in g.row.messages)
            assert ids
            assert not any(i in text for i in ids)


# -- θ axes have an effect ---------------------------------------------------------------------


def test_p_oos_marks_out_of_stock(factory: TaskFactory) -> None:
    none = _drafts(factory, 8, 20, p_oos=0.0)
    lots = _drafts(factory, 8, 20, p_oos=0.5)
    assert sum(len(d.episode["out_of_stock"]) for d in none) == 0
    assert sum(len(d.episode["out_of_stock"]) for d in lots) > 10


def test_p_switch_schedules_switches(factory: TaskFactory) -> None:
    assert all(d.switch is None for d in _drafts(factory, 8, 20, p_switch=0.0))
    switched = [d.switch for d in _drafts(factory, 8, 30, p_switch=1.0) if d.switch]
    assert len(switched) > 20
    assert {s.kind for s in switched} >= {"add_item", "change_variant"}
    assert all(s.turn == 1 for s in switched)


def test_p_missing_omits_details(factory: TaskFactory) -> None:
    from shopgen.gen.render import render_first_message

    def omitted(p: float) -> int:
        total = 0
        for k, draft in enumerate(_drafts(factory, 8, 20)):
            axes = theta(8, p_missing=p)
            r = render_first_message("cart", draft.slots, d=8, rng=stream(1, k), axes=axes)
            total += len(r.dropped)
        return total

    assert omitted(0.0) == 0
    assert omitted(0.8) > 10


def test_items_grow_with_d(factory: TaskFactory) -> None:
    small = np.mean([len(d.goal["cart"]) for d in _drafts(factory, 0, 10)])
    large = np.mean([len(d.goal["cart"]) for d in _drafts(factory, 12, 10)])
    assert large > small


def test_b_tool_and_t_max_bound_the_oracle(tasks) -> None:
    for d, gens in tasks.items():
        for g in gens:
            oracle = json.loads(g.row.oracle)
            assert len(oracle) <= g.row.axis("T_max")
            assert all(len(m.get("tool_calls", [])) <= g.row.axis("B_tool") for m in oracle)
            assert g.row.decoded("goal")["min_turns"] == len(oracle), d


def test_top_k_and_eps_rank_change_search(factory: TaskFactory, tasks) -> None:
    g = tasks[6][0]
    desc = g.row.decoded("goal")["items"][0]["desc"]
    shown = []
    for overrides in ({"top_k": 200, "eps_rank": 0.0}, {"top_k": 50, "eps_rank": 0.4}):
        row = g.row.model_copy(update={"theta": {**g.row.theta, **overrides}})
        factory.env.reset(row)
        obs, *_ = factory.env.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {
                            "name": "catalog_search",
                            "arguments": json.dumps({"query": desc}),
                        },
                    }
                ],
            }
        )
        shown.append(
            [c["product_id"] for c in json.loads(obs["messages"][0]["content"])["results"]]
        )
    assert shown[0] != shown[1]


# -- the oracle and the verifier ---------------------------------------------------------------


def test_oracle_reaches_max_reward_at_every_d(tasks, factory: TaskFactory) -> None:
    for d, gens in tasks.items():
        for g in gens:
            score, _ = play(factory.env, g.row, json.loads(g.row.oracle))
            assert score.is_correct, (d, score)
            assert score.reward == pytest.approx(MAX_REWARD)


def _state(cart_lines: dict) -> EpisodeState:
    state = EpisodeState()
    state.cart.update(cart_lines)
    state.turns = 1
    return state


def _row(goal_cart: list[dict]) -> TaskRow:
    return TaskRow(
        task_id="t",
        env="cart",
        d=0,
        theta=theta(0).to_dict(),
        seed=0,
        messages=[{"role": "user", "content": "x"}],
        tools="[]",
        goal=json.dumps({"cart": goal_cart, "min_turns": 1}),
        episode="{}",
        user_script=json.dumps({"slots": []}),
        oracle="[]",
        shopgen_version="0",
        catalog_id="c",
        verifier_version="1.0",
    )


units = st.dictionaries(
    st.tuples(st.sampled_from(["P1", "P2", "P3"]), st.sampled_from([None, "V1", "V2"])),
    st.integers(1, 4),
    max_size=4,
)


@given(units, units)
def test_verifier_is_exact_and_bounded(goal: dict, got: dict) -> None:
    goal = goal or {("P1", None): 1}
    row = _row([{"product_id": p, "variant_id": v, "quantity": q} for (p, v), q in goal.items()])
    score = verify(row, _state(got), [])
    assert -1.0 <= score.r_task <= 1.0
    assert -1.0 <= score.reward <= 1.0
    assert score.is_correct == (got == goal)
    if got == goal:
        assert score.r_task == 1.0
    hits = sum((Counter(goal) & Counter(got)).values())
    assert Fraction(score.details["f1"]) == Fraction(
        2 * hits, sum(goal.values()) + sum(got.values())
    )


@given(st.integers(1, 2), st.integers(1, 2))
def test_small_perfect_carts_are_correct(n_lines: int, qty: int) -> None:
    goal = {(f"P{i}", None): qty for i in range(n_lines)}
    row = _row([{"product_id": p, "variant_id": v, "quantity": q} for (p, v), q in goal.items()])
    score = verify(row, _state(dict(goal)), [])
    assert score.is_correct
    assert score.r_task == 1.0
    for key in goal:  # removing one unit strictly lowers r_task
        fewer = {**goal, key: goal[key] - 1}
        assert verify(row, _state({k: q for k, q in fewer.items() if q}), []).r_task < 1.0


def test_unit_f1_of_empty_cart_is_zero() -> None:
    assert unit_f1(Counter({("P", None): 1}), Counter()) == (0, 0, 0)


# -- degenerate policies -----------------------------------------------------------------------


def _calls(turn: int, *calls: tuple[str, dict]) -> dict:
    return assistant_message(turn, list(calls))


def _add_everything(row: TaskRow, env: ShopEnv) -> list[dict]:
    """Search the first description, then add every shown product, B_tool per turn."""
    goal = row.decoded("goal")
    msgs = [_calls(1, ("catalog_search", {"query": goal["items"][0]["desc"]}))]
    env.reset(row)
    obs, *_ = env.step(msgs[0])
    ids = [c["product_id"] for c in json.loads(obs["messages"][0]["content"])["results"]]
    budget = row.axis("B_tool")
    for start in range(0, len(ids), budget):
        if len(msgs) + 1 >= row.axis("T_max"):
            break
        adds = [("cart_add", {"product_id": pid}) for pid in ids[start : start + budget]]
        msgs.append(_calls(len(msgs) + 1, *adds))
    return [*msgs, {"role": "assistant", "content": "done"}]


def test_degenerate_policies_never_win(tasks, factory: TaskFactory) -> None:
    env = factory.env
    policies = {
        "nothing": lambda row: [{"role": "assistant", "content": "All set!"}],
        "made_up_id": lambda row: [
            _calls(1, ("cart_add", {"product_id": "B0FAKE0001", "quantity": 1})),
            {"role": "assistant", "content": "done"},
        ],
        "ask_forever": lambda row: [
            _calls(t, ("ask_user", {"question": "What else would you like?"}))
            for t in range(1, row.axis("T_max") + 1)
        ],
        "add_everything": lambda row: _add_everything(row, env),
    }
    for name, policy in policies.items():
        rewards = []
        for gens in tasks.values():
            for g in gens:
                score, _ = play(env, g.row, policy(g.row))
                assert not score.is_correct, name
                rewards.append(score.reward)
        assert np.mean(rewards) <= 0.0, name


def test_the_stock_list_never_singles_out_the_wanted_variant(factory, indexed_catalog_dir):
    # Were the wanted variant the only one with stock for its quantity (by the catalog or
    # this episode's out_of_stock), catalog_get_variants would say which it is and a left-out
    # variant would need no question: 11.7% of variant lines at d = 4–12 before cart 1.5.
    store = CatalogStore(indexed_catalog_dir)
    lines = 0
    for d in range(2, 13):
        for k in range(6):
            row = factory.make("cart", d, k).row
            gone = set(row.decoded("episode")["out_of_stock"])
            for line in row.decoded("goal")["cart"]:
                variants = store.variants_of(line["product_id"])
                if len(variants) < 2:
                    continue
                lines += 1
                stocked = [
                    v["variant_id"]
                    for v in variants
                    if v["stock_qty"] >= line["quantity"] and v["variant_id"] not in gone
                ]
                assert len(stocked) >= 2, (row.task_id, line)
    assert lines > 20


def test_left_out_details_must_be_asked(tasks) -> None:
    """The goal's exact cart built without asking a left-out detail is a guess: at most 0."""
    rows = [g.row for made in tasks.values() for g in made]
    asking = [row for row in rows if details_to_ask(row)]
    assert len(asking) >= 5
    for row in asking:
        goal = row.decoded("goal")
        exact = {
            (line["product_id"], line["variant_id"]): line["quantity"] for line in goal["cart"]
        }
        needed = sorted(details_to_ask(row))
        assert verify(row, _asked(_state(exact), needed), []).is_correct
        for heard in ([], needed[1:]):
            guessed = verify(row, _asked(_state(exact), heard), [])
            assert not guessed.is_correct
            assert guessed.r_task == 0
    told = next(row for row in rows if not details_to_ask(row))
    goal = told.decoded("goal")
    exact = {(line["product_id"], line["variant_id"]): line["quantity"] for line in goal["cart"]}
    assert verify(told, _state(exact), []).is_correct


def _asked(state: EpisodeState, slots: list[str]) -> EpisodeState:
    state.extra["questions"] = [{"turn": 1, "answered": slots}]
    return state
