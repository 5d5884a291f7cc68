"""The ``verl`` layout: RL Parquet rows plus the tool and interaction configs verl loads.

Rows follow verl's RLHF dataset fields: ``data_source``, ``prompt`` (chat messages),
``ability``, ``reward_model {style, ground_truth}`` and ``extra_info {split, index,
tools_kwargs, interaction_kwargs}``. ``ground_truth`` and the ``create_kwargs`` hold the task row
as JSON: verl hands them to the reward function and the tools, never to the model.

Side files: ``tool_config.yaml`` (``tools: - class_name, config, tool_schema``, one entry per
tool the tasks offer, served by :class:`shopgen.integrations.verl.ShopgenTool`) and
``interaction_config.yaml`` (``interaction: - name, class_name, config``). The reward function
is :func:`shopgen.integrations.verl.compute_score`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from shopgen.exports._common import CHAT, public_messages, public_tools, task_json, write_export
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow

TOOL_CLASS = "shopgen.integrations.verl.ShopgenTool"
INTERACTION_CLASS = "shopgen.integrations.verl.ShopgenInteraction"
INTERACTION_NAME = "shopgen"
TOOL_CONFIG = "tool_config.yaml"
INTERACTION_CONFIG = "interaction_config.yaml"


def schema(tool_names: list[str]) -> pa.Schema:
    """The Parquet schema; ``tools_kwargs`` has one field per tool offered by any task."""
    create = pa.struct([("create_kwargs", pa.struct([("task", pa.string())]))])
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", CHAT),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            (
                "extra_info",
                pa.struct(
                    [
                        ("split", pa.string()),
                        ("index", pa.int64()),
                        ("task_id", pa.string()),
                        ("env", pa.string()),
                        ("d", pa.int64()),
                        ("need_tools_kwargs", pa.bool_()),
                        ("tools_kwargs", pa.struct([(n, create) for n in tool_names])),
                        (
                            "interaction_kwargs",
                            pa.struct([("name", pa.string()), ("task", pa.string())]),
                        ),
                    ]
                ),
            ),
        ]
    )


def rows(tasks: list[TaskRow], *, split: str = "train") -> Iterator[dict[str, Any]]:
    """One verl row per task."""
    for index, t in enumerate(tasks):
        text = task_json(t)
        yield {
            "data_source": f"shopgen/{t.env}",
            "prompt": public_messages(t),
            "ability": "tool_use",
            "reward_model": {"style": "rule", "ground_truth": text},
            "extra_info": {
                "split": split,
                "index": index,
                "task_id": t.task_id,
                "env": t.env,
                "d": t.d,
                "need_tools_kwargs": True,
                "tools_kwargs": {
                    s["function"]["name"]: {"create_kwargs": {"task": text}}
                    for s in public_tools(t)
                },
                "interaction_kwargs": {"name": INTERACTION_NAME, "task": text},
            },
        }


def tool_config(tasks: list[TaskRow], catalog: str | None) -> dict[str, Any]:
    """Verl's tool config: every tool any task offers, with its OpenAI schema."""
    seen: dict[str, dict[str, Any]] = {}
    for t in tasks:
        for s in public_tools(t):
            seen.setdefault(s["function"]["name"], s)
    return {
        "tools": [
            {
                "class_name": TOOL_CLASS,
                "config": {"type": "native", "catalog": catalog},
                "tool_schema": seen[name],
            }
            for name in sorted(seen)
        ]
    }


def interaction_config(catalog: str | None) -> dict[str, Any]:
    """Verl's interaction config: the simulated customer ends the episode and scores it."""
    return {
        "interaction": [
            {
                "name": INTERACTION_NAME,
                "class_name": INTERACTION_CLASS,
                "config": {"catalog": catalog},
            }
        ]
    }


def export(
    tasks: list[TaskRow],
    out: Path,
    *,
    source: Manifest,
    catalog: Path | None = None,
    force: bool = False,
    **_: Any,
) -> Manifest:
    """Write the verl export of ``tasks`` (rows + YAML configs) to ``out``."""
    where = str(Path(catalog).resolve()) if catalog is not None else None
    tools = tool_config(tasks, where)
    names = [t["tool_schema"]["function"]["name"] for t in tools["tools"]]
    dump = lambda v: yaml.safe_dump(json.loads(json.dumps(v)), sort_keys=False)  # noqa: E731
    return write_export(
        rows(tasks),
        out,
        schema=schema(names),
        fmt="verl",
        source=source,
        config={"catalog": where},
        side_files={TOOL_CONFIG: dump(tools), INTERACTION_CONFIG: dump(interaction_config(where))},
        force=force,
    )
