"""TRL adapter: tool schemas as TRL derives them, episodes played through tool methods."""

from __future__ import annotations

import inspect
import json

import pytest

from shopgen.env.tools import ENV_TOOLS, REGISTRY, env_tool_schemas
from shopgen.env.tools.registry import LIMIT_KEYWORDS
from shopgen.exports import export_tasks
from shopgen.integrations.trl import (
    environment_class,
    environment_factory,
    is_correct_reward,
    shopgen_reward,
)
from shopgen.verifiers.reward import MAX_REWARD

get_json_schema = pytest.importorskip("transformers.utils").get_json_schema


def _canonical(schema: dict) -> dict:
    """Drop what the two generators spell differently but mean the same: get_json_schema never
    writes ``additionalProperties`` and omits an empty ``required``. Nor can it write a
    limit's keywords (``maxLength``, ``maximum``, ``maxItems``…): the limit stays said in the
    description, which both carry (:func:`test_every_limit_reaches_trl_in_the_description`)."""
    s = json.loads(json.dumps(schema))
    params = s["function"]["parameters"]
    params.pop("additionalProperties", None)
    for prop in params.get("properties", {}).values():
        for keyword in LIMIT_KEYWORDS:
            prop.pop(keyword, None)
    if not params.get("required"):
        params.pop("required", None)
    return s


def test_a_length_limit_reaches_trl_in_the_description(shop):
    from shopgen.env.tools.dialogue import MAX_QUESTION_CHARS

    methods = {m.__name__: m for m in _tool_methods(environment_factory(shop, env="cart")())}
    question = get_json_schema(methods["ask_user"])["function"]["parameters"]["properties"]
    assert f"At most {MAX_QUESTION_CHARS} characters" in question["question"]["description"]


def test_every_limit_reaches_trl_in_the_description(shop):
    """Every declared limit's sentence is in the description TRL derives, so dropping the
    keywords it cannot write (:func:`_canonical`) loses no limit."""
    methods = {m.__name__: m for m in _tool_methods(environment_factory(shop)())}
    seen = 0
    for name, spec in REGISTRY.items():
        props = get_json_schema(methods[name])["function"]["parameters"]["properties"]
        for p in spec.params:
            for limit in p.limits:
                assert limit.sentence() in props[p.name]["description"], (name, p.name)
                seen += 1
    assert seen >= 4  # ask_user, cart_add, cart_update_quantity, recommend_products


def _tool_methods(instance) -> list:
    # TRL's own rule: public functions of the class other than reset / get_reward.
    return [
        getattr(instance, n)
        for n, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if n not in ("reset", "get_reward") and not n.startswith("_")
    ]


@pytest.mark.parametrize("env", sorted(ENV_TOOLS))
def test_get_json_schema_equals_the_seed_schemas(env, shop):
    methods = _tool_methods(environment_factory(shop, env=env)())
    got = {m.__name__: _canonical(get_json_schema(m)) for m in methods}
    want = {s["function"]["name"]: _canonical(s) for s in env_tool_schemas(env)}
    assert got == want


def test_canonical_form_keeps_every_difference_that_matters():
    a = env_tool_schemas("status")[1]
    b = json.loads(json.dumps(a))
    b["function"]["parameters"]["properties"]["order_id"]["description"] = "x"
    assert _canonical(a) != _canonical(b)


def test_oracle_played_through_tool_methods_is_correct(tasks, shop):
    for task in tasks:
        env = environment_factory(shop, env=task.env)()
        assert env.reset(task=json.dumps(task.to_row()), prompt=[], environment=task.env) is None
        completion = []
        for message in task.decoded("oracle"):
            completion.append(message)
            for call in message.get("tool_calls") or []:
                out = getattr(env, call["function"]["name"])(
                    **json.loads(call["function"]["arguments"])
                )
                assert isinstance(out, str)
                assert '"error"' not in out[:10], out
                completion.append(
                    {"role": "tool", "name": call["function"]["name"], "content": out}
                )
        assert is_correct_reward([completion], [env]) == [1.0], (task.task_id, env.info)
        assert shopgen_reward([completion], [env]) == [pytest.approx(env.info["reward"])]
        assert env.info["reward"] == pytest.approx(MAX_REWARD)


def test_turns_over_t_max_are_not_correct(tasks, shop):
    """The reward replays the completion's own turns, so one call per turn past T_max fails."""
    task = tasks[0]
    calls = [c for m in task.decoded("oracle") for c in m.get("tool_calls") or []]
    final = task.decoded("oracle")[-1]
    stretched = [
        {"role": "assistant", "content": "", "tool_calls": [calls[0]]}
        for _ in range(task.axis("T_max"))
    ] + [final]
    env = environment_factory(shop, env=task.env)()
    env.reset(task=task.to_row())
    assert is_correct_reward([stretched], [env]) == [0.0]


def test_content_parts_are_read_as_shopgen_score_reads_them(tasks, shop):
    """The final answer in content parts: the same reward as the runtime's replay gives it.

    Parts were joined with a space here and without one by the runtime: "Status: in tra" +
    "nsit" read "in tra nsit" (25 of 52 status tasks graded differently), and a part whose
    text was not a string raised out of the reward function.
    """
    from shopgen.verifiers.replay import play

    for task in tasks:
        oracle = task.decoded("oracle")
        text = oracle[-1]["content"]
        cut = len(text) // 2
        parts = [{"type": "text", "text": text[:cut]}, {"type": "text", "text": text[cut:]}]
        completion = [*oracle[:-1], {"role": "assistant", "content": parts}]
        env = environment_factory(shop, env=task.env)()
        env.reset(task=task.to_row())
        expected, _ = play(shop.spawn(), task, completion)
        assert shopgen_reward([completion], [env]) == [pytest.approx(expected.reward)]
        assert expected.reward == pytest.approx(MAX_REWARD)
    odd = [{"role": "assistant", "content": [{"type": "text", "text": None}, 7]}]
    env = environment_factory(shop, env=tasks[0].env)()
    env.reset(task=tasks[0].to_row())
    assert shopgen_reward([odd], [env])[0] <= 0.0


def test_a_silent_rollout_is_not_correct(tasks, shop):
    env = environment_factory(shop, env=tasks[0].env)()
    env.reset(task=tasks[0].to_row())
    assert is_correct_reward([[{"role": "assistant", "content": "ok"}]], [env]) == [0.0]


def test_export_rows_reset_the_environment(task_dir, tmp_path, shop):
    datasets = pytest.importorskip("datasets")
    export_tasks(task_dir, tmp_path / "trl", fmt="trl")
    ds = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "trl/data/*.parquet"), split="train"
    )
    row = ds[0]
    env = environment_class(row["environment"])(shop)
    env.reset(**row)
    assert not env.done
    assert row["prompt"][-1]["role"] == "user"
