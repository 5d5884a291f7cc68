import json

import polars as pl
import pyarrow as pa
import pytest
from runtime_helpers import call, make_row

from shopgen.env.episode import EpisodeError, TaskError
from shopgen.env.verifier import Score, set_verifier
from shopgen.schemas.task import TaskRow, Trajectory


def test_reset_returns_opening_and_tools(env, store):
    obs = env.reset(make_row(store))
    assert [m["role"] for m in obs["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in obs["tools"]} >= {
        "cart_add",
        "cart_view",
        "user_get_visit_history",
    }
    assert env.transcript == obs["messages"]


def test_task_row_round_trips_through_parquet(env, store):
    row = make_row(store)
    back = pa.Table.from_pylist([row]).to_pylist()[0]
    assert TaskRow.from_row(back) == TaskRow.from_row(row)
    assert TaskRow.from_row(back).to_row() == TaskRow.from_row(row).to_row()
    env.reset(back)
    decoded = dict(row, theta=json.dumps(row["theta"]), episode={}, goal={"x": 1})
    assert TaskRow.from_row(decoded).decoded("goal") == {"x": 1}


def test_invalid_rows_and_other_catalogs_raise_task_error(env, store):
    with pytest.raises(TaskError, match="serves catalog"):
        env.reset(make_row(store, catalog_id="someone-else"))
    with pytest.raises(TaskError, match="invalid task row: extra"):
        env.reset(make_row(store) | {"extra": 1})
    with pytest.raises(TaskError, match="does not have"):
        env.reset(
            make_row(store)
            | {"tools": json.dumps([{"type": "function", "function": {"name": "hack"}}])}
        )
    with pytest.raises(TaskError, match="episode"):
        env.reset(make_row(store) | {"episode": "[1]"})


def test_step_before_reset_and_after_done(unscored_env, store):
    env = unscored_env
    with pytest.raises(EpisodeError, match="reset"):
        env.step("hello")
    env.reset(make_row(store))
    obs, done, reward, info = env.step("Your cart is ready.")
    assert done
    assert reward is None
    assert obs == {"messages": []}
    assert info["state"]["final_text"] == "Your cart is ready."
    assert info["reward"] is None
    with pytest.raises(EpisodeError, match="over"):
        env.step("again")
    assert isinstance(EpisodeError("x"), RuntimeError)


def test_b_tool_extra_calls_get_an_error_each(env, store, picks):
    env.reset(make_row(store, B_tool=2, T_max=5))
    text = "".join(
        '<tool_call>{"name": "cart_view", "arguments": {}}</tool_call>' for _ in range(4)
    )
    obs, done, _, info = env.step(text)
    contents = [json.loads(m["content"]) for m in obs["messages"]]
    assert "lines" in contents[0]
    assert "lines" in contents[1]
    assert [c.get("error") for c in contents[2:]] == ["over_budget", "over_budget"]
    assert [m["tool_call_id"] for m in obs["messages"]] == [f"call_1_{i}" for i in range(4)]
    assert env.state.calls_per_turn == [4]
    assert [e["kind"] for e in info["errors"]] == ["over_budget", "over_budget"]
    assert not done


def test_t_max_ends_the_episode_with_tool_results(unscored_env, store):
    env = unscored_env
    env.reset(make_row(store, T_max=3))
    for turn in (1, 2, 3):
        obs, done, _reward, info = env.step(call("cart_view"))
        assert len(obs["messages"]) == 1
        assert done == (turn == 3)
    assert env.state.turns == 3
    assert "state" in info


def test_parse_issue_is_an_error_result_and_the_episode_goes_on(env, store):
    env.reset(make_row(store))
    obs, done, reward, info = env.step("<tool_call>{not json}</tool_call>")
    assert not done
    assert reward == 0.0
    assert json.loads(obs["messages"][0]["content"])["error"] == "parse"
    assert info["errors"][0]["protocol"] is True


def test_registered_verifier_scores_the_final_step(env, store, picks):
    seen = {}

    def verify(task, state, transcript):
        seen["args"] = (task.task_id, dict(state.cart), len(transcript))
        return Score(
            reward=0.5, r_task=1.0, r_eff=0.0, r_hall=0.0, is_correct=False, details={"k": 1}
        )

    set_verifier("bundle", verify)
    try:
        env.reset(make_row(store, env="bundle"))
        env.step(call("cart_add", product_id=picks["plain"]))
        _, done, reward, info = env.step("done")
    finally:
        set_verifier("bundle", None)
    assert done
    assert reward == 0.5
    assert info["is_correct"] is False
    assert info["score"]["details"] == {"k": 1}
    assert seen["args"] == ("t0", {(picks["plain"], picks["plain_variant"]): 1}, 5)


def test_entry_point_verifier_is_resolved(env, store):
    set_verifier("journey", "json:dumps")  # resolvable module:function; called wrongly → TypeError
    try:
        env.reset(make_row(store, env="journey"))
        with pytest.raises(TaskError, match="journey verifier cannot grade") as raised:
            env.step("bye")
        assert isinstance(raised.value.__cause__, TypeError)
    finally:
        set_verifier("journey", None)


def test_many_independent_episodes_in_one_process(env, store, picks):
    envs = [env.spawn() for _ in range(50)]
    for i, e in enumerate(envs):
        e.reset(make_row(store, task_id=f"t{i}", T_max=9))
    for i, e in enumerate(envs):
        if i % 2:
            e.step(call("cart_add", product_id=picks["plain"], quantity=1 + i % 3))
    for i, e in enumerate(envs):
        expected = {(picks["plain"], picks["plain_variant"]): 1 + i % 3} if i % 2 else {}
        assert e.state.cart == expected
        assert e.state.turns == i % 2
        assert e.task.task_id == f"t{i}"
    assert len({id(e.state) for e in envs}) == len(envs)


def test_reset_holds_no_catalog_sized_data(env, store):
    store.products  # noqa: B018  (load the shared frame first)
    env.reset(make_row(store, episode={"visit_history": []}))

    def walk(obj, depth=0):
        assert not isinstance(obj, pl.DataFrame | pl.Series | pa.Table), type(obj)
        if depth > 4:
            return
        if isinstance(obj, dict):
            for v in obj.values():
                walk(v, depth + 1)
        elif isinstance(obj, list | tuple | set):
            for v in obj:
                walk(v, depth + 1)
        elif hasattr(obj, "__slots__") and not isinstance(obj, type):
            for name in obj.__slots__:
                if name not in ("store", "task") and hasattr(obj, name):
                    walk(getattr(obj, name), depth + 1)

    ctx = env._ctx
    walk(ctx)
    assert ctx.store is store  # shared, not copied


def test_transcript_is_a_valid_trajectory(unscored_env, store, picks):
    env = unscored_env
    env.reset(make_row(store))
    env.step(call("catalog_get_product", product_id=picks["plain"]))
    env.step("Here it is.")
    traj = Trajectory(task_id="t0", messages=env.transcript)
    assert [m["role"] for m in traj.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
