"""The ``verl`` layout: RL Parquet rows plus the tool and interaction configs verl loads.

Rows follow verl's RLHF dataset fields: ``data_source``, ``prompt`` (chat messages),
``ability``, ``agent_name`` (``tool_agent``: verl's multi-turn tool loop), ``reward_model
{style, ground_truth}`` and ``extra_info {split, index, tools_kwargs, interaction_kwargs}``. ``ground_truth`` and the ``create_kwargs`` hold the task row
as JSON: verl hands them to the reward function and the tools, never to the model.

Side files: ``tool_config.yaml`` (``tools: - class_name, config, tool_schema``, one entry per
tool the tasks offer, served by :class:`shopgen.integrations.verl.ShopgenTool`) and
``interaction_config.yaml`` (``interaction: - name, class_name, config``). The reward function
is :func:`shopgen.integrations.verl.compute_score`.

One tool list per dataset. verl's ``ToolAgentLoop`` renders the whole tool config
(``multi_turn.tool_config_path``, read once per trainer) into every prompt; a row's
``tools_kwargs`` only feeds each tool's ``create``, and its ``agent_name`` picks an agent loop
whose stock tool agent reads that same global path. So verl has no per-row tool list, and
a dataset mixing environments would show a status task ``cart_add`` and friends; the call
fails (its ``tools_kwargs`` is null), and the replay scores it ``not_offered``: −1 (DESIGN §8
has each environment expose only its own tools). Hence:

- tasks that all offer the same tools (one environment) export as before: ``data/`` plus
  ``tool_config.yaml`` and ``interaction_config.yaml`` at the top;
- tasks of several environments export as one dataset with one table per environment:
  ``<env>/train-*.parquet`` beside ``<env>/tool_config.yaml`` (exactly that environment's
  tools) and ``<env>/interaction_config.yaml``. Each folder is one verl run
  (``data.train_files=OUT/<env>/*.parquet``, ``multi_turn.tool_config_path=OUT/<env>/…``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from shopgen.exports._common import DATA, public_messages, public_tools, task_json, write_export
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.exports import verl as verl_schema
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow

TOOL_CLASS = "shopgen.integrations.verl.ShopgenTool"
INTERACTION_CLASS = "shopgen.integrations.verl.ShopgenInteraction"
INTERACTION_NAME = "shopgen"
#: verl's multi-turn tool agent loop (``ToolAgentLoop``, registered as ``tool_agent``).
AGENT_LOOP = "tool_agent"
TOOL_CONFIG = "tool_config.yaml"
INTERACTION_CONFIG = "interaction_config.yaml"


class Group(NamedTuple):
    """The tasks of one environment and the one tool list they all offer."""

    #: The offered tool names, sorted: the key verl's tool config and row schema follow.
    tools: tuple[str, ...]
    tasks: list[TaskRow]


def rows(tasks: list[TaskRow], *, split: str = "train") -> Iterator[dict[str, Any]]:
    """One verl row per task."""
    for index, t in enumerate(tasks):
        text = task_json(t)
        yield {
            "data_source": f"shopgen/{t.env}",
            "prompt": public_messages(t),
            "ability": "tool_use",
            # Without it verl plays the row with its default agent loop, single-turn: no tools.
            "agent_name": AGENT_LOOP,
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


def tool_config(group: Group, catalog: str | None) -> dict[str, Any]:
    """Verl's tool config: each tool the group offers, in name order, with its OpenAI schema.

    Every task of a group offers the same tools (:func:`by_environment` checks), so the
    first task's schemas are the group's (an empty group offers none).
    """
    schemas = (
        {s["function"]["name"]: s for s in public_tools(group.tasks[0])} if group.tasks else {}
    )
    return {
        "tools": [
            {
                "class_name": TOOL_CLASS,
                "config": {"type": "native", "catalog": catalog},
                "tool_schema": schemas[name],
            }
            for name in group.tools
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


def by_environment(tasks: list[TaskRow]) -> dict[str, Group]:
    """The tasks per environment (sorted by name), each environment offering one tool set.

    Raises:
        ConfigError: tasks of one environment offer different tools, which no split of a
            verl export can serve (verl shows one tool list per dataset).
    """
    groups: dict[str, Group] = {}
    for t in tasks:
        names = tuple(sorted(s["function"]["name"] for s in public_tools(t)))
        group = groups.setdefault(t.env, Group(names, []))
        if group.tools != names:
            raise ConfigError(
                f"verl shows one tool list per dataset, but {t.env} tasks offer different "
                f"tools ({', '.join(group.tools)} vs {', '.join(names)}, task {t.task_id}): "
                "export them with --format trl or verifiers, which carry each row's own tools"
            )
        group.tasks.append(t)
    return dict(sorted(groups.items()))


def _dump(value: Any) -> str:
    return yaml.safe_dump(json.loads(json.dumps(value)), sort_keys=False)


def export(
    tasks: list[TaskRow],
    out: Path,
    *,
    source: Manifest,
    catalog: Path | None = None,
    force: bool = False,
    **_: Any,
) -> Manifest:
    """Write the verl export of ``tasks`` to ``out``: one tool list, or one per environment.

    See the module docstring: tasks offering different tools are split into one table and
    one pair of configs per environment, since verl renders a single tool list into every
    prompt of a run.
    """
    where = str(Path(catalog).resolve()) if catalog is not None else None
    groups = by_environment(tasks)
    interaction = _dump(interaction_config(where))
    tool_lists = {g.tools for g in groups.values()}
    if len(tool_lists) <= 1:  # one tool list for all: the tasks, in their order, in one table
        one = Group(next(iter(tool_lists), ()), tasks)
        return write_export(
            {DATA: (rows(tasks), verl_schema(one.tools))},
            out,
            fmt="verl",
            source=source,
            config={"catalog": where},
            side_files={
                TOOL_CONFIG: _dump(tool_config(one, where)),
                INTERACTION_CONFIG: interaction,
            },
            force=force,
        )
    side: dict[str, str] = {}
    for env, group in groups.items():
        side[f"{env}/{TOOL_CONFIG}"] = _dump(tool_config(group, where))
        side[f"{env}/{INTERACTION_CONFIG}"] = interaction
    return write_export(
        {env: (rows(g.tasks), verl_schema(g.tools)) for env, g in groups.items()},
        out,
        fmt="verl",
        source=source,
        config={"catalog": where, "per_environment": list(groups)},
        side_files=side,
        layout=", one table per environment, each with its own tool_config.yaml (verl shows "
        "one tool list per run)",
        force=force,
    )
