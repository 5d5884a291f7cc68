"""Exports: datasets round-trips, no hidden truth in what the model sees, verl's layout."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml

from shopgen.cli import main
from shopgen.exports import FORMATS, export_tasks
from shopgen.gen.dataset import read_manifest
from shopgen.integrations.verifiers_env import ShopgenSession
from shopgen.integrations.verl import ShopgenInteraction, ShopgenTool, compute_score, response_turns
from shopgen.schemas.errors import ConfigError
from shopgen.verifiers.reward import MAX_REWARD

datasets = pytest.importorskip("datasets")

#: Per format: the columns the model is shown (rendered into its context).
SHOWN = {
    "trl": ("prompt",),
    "verl": ("prompt",),
    "verifiers": ("prompt",),
    "jsonl": ("messages", "tools"),
    "sft": ("messages", "tools"),
}


@pytest.fixture(scope="module")
def exported(task_dir, indexed_catalog_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    out = {}
    for fmt in FORMATS:
        export_tasks(task_dir, root / fmt, fmt=fmt, catalog=indexed_catalog_dir)
        out[fmt] = root / fmt
    return out


def _load(path, table="data"):
    return datasets.load_dataset(
        "parquet", data_files=str(path / table / "*.parquet"), split="train"
    )


def _tables(path):
    """The export's Parquet tables: ``data``, or (verl, mixed tools) one per environment."""
    files = read_manifest(path).files
    return sorted({e.table for rel, e in files.items() if rel.endswith(".parquet")})


def _rows(path):
    """Every row of an export, table after table."""
    return [row for table in _tables(path) for row in _load(path, table)]


def _task_id(row):
    return row.get("task_id") or (row.get("extra_info") or row.get("info") or {}).get("task_id")


def _verl(exported, env):
    """The folder holding ``env``'s verl rows and configs (the mixed fixture splits by env)."""
    return exported["verl"] / env


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trips_through_datasets_as_a_versioned_export(exported, tasks, task_dir, fmt):
    assert len(_rows(exported[fmt])) == len(tasks)
    manifest = read_manifest(exported[fmt])
    assert manifest.kind == "export"
    assert manifest.parents == [read_manifest(task_dir).dataset_id]
    assert manifest.config["format"] == fmt
    assert (exported[fmt] / "README.md").is_file()


def _hidden_values(task):
    """Strings that only the hidden fields hold: the JSON blobs and the oracle's final answer."""
    out = {task.goal, task.episode, task.user_script, task.oracle}
    final = task.decoded("oracle")[-1].get("content")
    if final:
        out.add(final)
    for slot in task.decoded("user_script")["slots"]:
        if slot["omitted"] and len(str(slot["value"])) >= 6:
            out.add(str(slot["value"]))  # an omitted slot is what ask_user must reveal
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_hidden_ground_truth_never_reaches_the_model(exported, tasks, fmt):
    by_id = {t.task_id: t for t in tasks}
    for i, row in enumerate(_rows(exported[fmt])):
        task = by_id.get(_task_id(row), tasks[i])
        shown = (
            row
            if fmt != "sft"
            else {
                **row,
                "messages": [m for m in row["messages"] if m["role"] in ("system", "user")][:2],
            }
        )
        text = json.dumps([shown[c] for c in SHOWN[fmt]], ensure_ascii=False)
        for secret in _hidden_values(task):
            assert secret not in text, (fmt, secret[:60])
        for key in ('"goal"', '"oracle"', '"user_script"', '"never_say"'):
            assert key not in text


@pytest.mark.parametrize("fmt", ["trl", "verl", "verifiers", "jsonl"])
def test_prompt_is_exactly_the_public_opening(exported, tasks, fmt):
    column = "messages" if fmt == "jsonl" else "prompt"
    shown = {_task_id(r): r[column] for r in _rows(exported[fmt])}
    assert len(shown) == len(tasks)
    assert shown == {t.task_id: [m.model_dump() for m in t.messages] for t in tasks}


def test_jsonl_side_file_matches(exported, tasks):
    lines = (exported["jsonl"] / "train.jsonl").read_text().splitlines()
    assert [json.loads(x)["task_id"] for x in lines] == [t.task_id for t in tasks]
    assert json.loads(lines[0])["tools"] == json.loads(tasks[0].tools)
    assert "train.jsonl" in read_manifest(exported["jsonl"]).files


def test_sft_transcripts_are_the_oracle_with_runtime_results(exported, tasks):
    for row, task in zip(_load(exported["sft"]), tasks, strict=True):
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"]
        assert roles[-1] == "assistant"
        assert "tool" in roles
        calls = [c for m in row["messages"] if m["tool_calls"] for c in m["tool_calls"]]
        oracle_calls = [c for m in task.decoded("oracle") for c in m.get("tool_calls") or []]
        assert [c["function"]["name"] for c in calls] == [
            c["function"]["name"] for c in oracle_calls
        ]
        assert row["reward"] == pytest.approx(MAX_REWARD)


#: verl's RLHFDataset / multi-turn docs: the fields a row must carry.
VERL_FIELDS = {"data_source", "prompt", "ability", "agent_name", "reward_model", "extra_info"}


def test_verl_row_layout_matches_its_documented_fields(exported, tasks):
    ds = _load(_verl(exported, tasks[0].env), "")
    assert set(ds.column_names) >= VERL_FIELDS
    row = ds[0]
    assert row["agent_name"] == "tool_agent"  # verl's default loop is single-turn, toolless
    assert row["extra_info"]["task_id"] == tasks[0].task_id
    assert set(row["reward_model"]) == {"style", "ground_truth"}
    assert {"split", "index", "tools_kwargs", "interaction_kwargs"} <= set(row["extra_info"])
    offered = {s["function"]["name"] for s in json.loads(tasks[0].tools)}
    kwargs = {k: v for k, v in row["extra_info"]["tools_kwargs"].items() if v is not None}
    assert set(kwargs) == offered
    assert all(
        json.loads(v["create_kwargs"]["task"])["task_id"] == tasks[0].task_id
        for v in kwargs.values()
    )
    assert [r["extra_info"]["index"] for r in ds] == list(range(len(ds)))


def test_verl_configs_name_loadable_classes(exported, tasks):
    tools = yaml.safe_load((_verl(exported, tasks[0].env) / "tool_config.yaml").read_text())
    for entry in tools["tools"]:
        module, cls = entry["class_name"].rsplit(".", 1)
        assert getattr(__import__(module, fromlist=[cls]), cls) is ShopgenTool
        assert entry["config"]["catalog"]
    inter = yaml.safe_load((_verl(exported, tasks[0].env) / "interaction_config.yaml").read_text())
    assert inter["interaction"][0]["class_name"].endswith("ShopgenInteraction")


def _qwen_text(task, results):
    """A decoded verl response in Qwen3's format: turns, tool calls and tool responses."""
    parts = []
    for message, outs in zip(task.decoded("oracle"), results, strict=True):
        calls = "".join(
            f'<tool_call>{{"name": "{c["function"]["name"]}", "arguments": {c["function"]["arguments"]}}}</tool_call>'
            for c in message.get("tool_calls") or []
        )
        parts.append(f"<|im_start|>assistant\n{message.get('content') or ''}{calls}<|im_end|>")
        parts.extend(
            f"<|im_start|>user\n<tool_response>{o}</tool_response><|im_end|>" for o in outs
        )
    return "\n".join(parts)


def test_verl_tools_interaction_and_compute_score_play_the_oracle(
    exported, tasks, indexed_catalog_dir
):
    task = tasks[0]
    row = _load(_verl(exported, task.env), "")[0]
    assert row["extra_info"]["task_id"] == task.task_id
    tool_cfg = yaml.safe_load((_verl(exported, task.env) / "tool_config.yaml").read_text())["tools"]
    tools = {
        t["tool_schema"]["function"]["name"]: ShopgenTool(t["config"], t["tool_schema"])
        for t in tool_cfg
    }

    class AgentData:
        request_id = "req-1"

    async def run():
        results = []
        for message in task.decoded("oracle"):
            outs = []
            for call in message.get("tool_calls") or []:
                name = call["function"]["name"]
                kw = row["extra_info"]["tools_kwargs"][name]
                iid, _ = await tools[name].create(create_kwargs=kw["create_kwargs"])
                resp, _reward, _ = await tools[name].execute(
                    iid, json.loads(call["function"]["arguments"]), agent_data=AgentData()
                )
                await tools[name].release(iid)
                outs.append(resp["text"])
            results.append(outs)
        inter = ShopgenInteraction({"catalog": str(indexed_catalog_dir)})
        iid = await inter.start_interaction(
            None,
            **{k: v for k, v in row["extra_info"]["interaction_kwargs"].items() if k != "name"},
        )
        done, _, score, _ = await inter.generate_response(iid, task.decoded("oracle"))
        return results, done, score

    results, done, score = asyncio.run(run())
    assert done
    assert score == pytest.approx(MAX_REWARD)
    text = _qwen_text(task, results)
    assert len(response_turns(text)) == len(task.decoded("oracle"))
    scored = compute_score(
        row["data_source"],
        text,
        row["reward_model"]["ground_truth"],
        row["extra_info"],
        catalog=str(indexed_catalog_dir),
    )
    assert scored["score"] == pytest.approx(MAX_REWARD)
    assert scored["is_correct"] == 1.0
    assert (
        compute_score(
            row["data_source"],
            "no idea",
            row["reward_model"]["ground_truth"],
            catalog=str(indexed_catalog_dir),
        )["is_correct"]
        == 0.0
    )


def _offered(group):
    return {s["function"]["name"] for t in group for s in json.loads(t.tools)}


def test_verl_mixed_export_has_per_environment_tool_lists(exported, tasks):
    """verl renders one tool list into every prompt: each environment gets its own."""
    envs = sorted({t.env for t in tasks})
    assert len(envs) > 1
    assert len({frozenset(_offered([t])) for t in tasks}) > 1
    out = exported["verl"]
    assert _tables(out) == envs
    assert read_manifest(out).config["per_environment"] == envs
    assert not (out / "tool_config.yaml").exists()  # no union list anywhere
    for env in envs:
        group = [t for t in tasks if t.env == env]
        cfg = yaml.safe_load((out / env / "tool_config.yaml").read_text())["tools"]
        assert [c["tool_schema"]["function"]["name"] for c in cfg] == sorted(_offered(group))
        assert (out / env / "interaction_config.yaml").is_file()
        ds = _load(out, env)
        assert sorted(r["extra_info"]["task_id"] for r in ds) == sorted(t.task_id for t in group)
        for row in ds:
            kwargs = row["extra_info"]["tools_kwargs"]
            assert set(kwargs) == _offered(group)  # no null entry for a tool not offered
            assert all(v is not None for v in kwargs.values())
    assert {f"{env}/tool_config.yaml" for env in envs} <= set(read_manifest(out).files)


def test_verl_single_environment_export_is_unchanged(
    task_dir, tasks, indexed_catalog_dir, tmp_path
):
    from shopgen.exports import verl

    group = [t for t in tasks if t.env == tasks[0].env]
    out = tmp_path / "verl-one"
    verl.export(group, out, source=read_manifest(task_dir), catalog=indexed_catalog_dir)
    assert _tables(out) == ["data"]
    ds = _load(out)
    assert [r["extra_info"]["task_id"] for r in ds] == [t.task_id for t in group]
    cfg = yaml.safe_load((out / "tool_config.yaml").read_text())["tools"]
    assert [c["tool_schema"]["function"]["name"] for c in cfg] == sorted(_offered(group))
    assert (out / "interaction_config.yaml").is_file()
    assert "per_environment" not in read_manifest(out).config


def test_verl_refuses_one_environment_offering_two_tool_lists(task_dir, tasks, tmp_path):
    from shopgen.exports import verl

    first = tasks[0]
    fewer = json.dumps(json.loads(first.tools)[1:])
    odd = first.model_copy(update={"tools": fewer, "task_id": first.task_id + "-odd"})
    with pytest.raises(ConfigError, match=f"{first.env} tasks offer different tools"):
        verl.export([first, odd], tmp_path / "x", source=read_manifest(task_dir))
    assert not (tmp_path / "x").exists()


def test_verifiers_session_plays_a_row_to_correct(exported, shop, tasks):
    row = _load(exported["verifiers"])[0]
    session = ShopgenSession(shop, row["info"])
    assert session.observation["messages"] == row["prompt"]
    for message in tasks[0].decoded("oracle"):
        session.respond(message)
        if session.done:
            break
    assert session.score["is_correct"]


def test_unknown_format_and_missing_catalog_are_clear_errors(task_dir, tmp_path):
    with pytest.raises(ConfigError, match="format"):
        export_tasks(task_dir, tmp_path / "x", fmt="csv")
    assert (
        main(["export", "--tasks", str(task_dir), "--format", "sft", "--out", str(tmp_path / "s")])
        == 1
    )
    assert (
        main(
            [
                "export",
                "--tasks",
                str(tmp_path / "nope"),
                "--format",
                "trl",
                "--out",
                str(tmp_path / "t"),
            ]
        )
        == 1
    )


def test_cli_export_writes_a_dataset(task_dir, tmp_path, capsys):
    assert (
        main(
            ["export", "--tasks", str(task_dir), "--format", "trl", "--out", str(tmp_path / "trl")]
        )
        == 0
    )
    assert "trl rows" in capsys.readouterr().out
    assert read_manifest(tmp_path / "trl").kind == "export"
