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


def _load(path):
    return datasets.load_dataset("parquet", data_files=str(path / "data/*.parquet"), split="train")


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trips_through_datasets_as_a_versioned_export(exported, tasks, task_dir, fmt):
    ds = _load(exported[fmt])
    assert len(ds) == len(tasks)
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
    ds = _load(exported[fmt])
    for i, row in enumerate(ds):
        task = tasks[i]
        tid = row.get("task_id") or (row.get("extra_info") or row.get("info") or {}).get("task_id")
        task = by_id.get(tid, task)
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
    ds = _load(exported[fmt])
    column = "messages" if fmt == "jsonl" else "prompt"
    assert [r[column] for r in ds] == [[m.model_dump() for m in t.messages] for t in tasks]


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
VERL_FIELDS = {"data_source", "prompt", "ability", "reward_model", "extra_info"}


def test_verl_row_layout_matches_its_documented_fields(exported, tasks):
    ds = _load(exported["verl"])
    assert set(ds.column_names) >= VERL_FIELDS
    row = ds[0]
    assert set(row["reward_model"]) == {"style", "ground_truth"}
    assert {"split", "index", "tools_kwargs", "interaction_kwargs"} <= set(row["extra_info"])
    offered = {s["function"]["name"] for s in json.loads(tasks[0].tools)}
    kwargs = {k: v for k, v in row["extra_info"]["tools_kwargs"].items() if v is not None}
    assert set(kwargs) == offered
    assert all(
        json.loads(v["create_kwargs"]["task"])["task_id"] == tasks[0].task_id
        for v in kwargs.values()
    )
    assert [r["extra_info"]["index"] for r in ds] == list(range(len(tasks)))


def test_verl_configs_name_loadable_classes(exported, tasks):
    tools = yaml.safe_load((exported["verl"] / "tool_config.yaml").read_text())
    names = {t["tool_schema"]["function"]["name"] for t in tools["tools"]}
    assert names == {s["function"]["name"] for t in tasks for s in json.loads(t.tools)}
    for entry in tools["tools"]:
        module, cls = entry["class_name"].rsplit(".", 1)
        assert getattr(__import__(module, fromlist=[cls]), cls) is ShopgenTool
        assert entry["config"]["catalog"]
    inter = yaml.safe_load((exported["verl"] / "interaction_config.yaml").read_text())
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
    row = _load(exported["verl"])[0]
    task = tasks[0]
    tool_cfg = yaml.safe_load((exported["verl"] / "tool_config.yaml").read_text())["tools"]
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
