"""``shopgen play``: play one episode in the terminal as the agent.

Type one tool call per line as JSON (``{"name": "cart_view", "arguments": {}}``), or a Qwen3
``<tool_call>…</tool_call>`` block (it may span lines), and see the tool result and any customer
message; type plain text to send your final answer and end the episode. End of input ends it too.
The task is task ``k`` of the environment's own generator, and the episode is scored at the end
exactly as a trainer's would be.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from shopgen.commands.catalogs import checked, needs_search
from shopgen.commands.options import SEED
from shopgen.env.episode import ShopEnv
from shopgen.gen.slots import ENVS
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError
from shopgen.taskgen import TaskFactory


def _inputs(stream: Any) -> Iterator[str]:
    """Agent turns from ``stream``: single lines, or whole ``<tool_call>`` blocks."""
    block: list[str] = []
    for raw in stream:
        line = raw.rstrip("\n")
        if block:
            block.append(line)
            if "</tool_call>" in line or "</function>" in line:
                yield "\n".join(block)
                block = []
            continue
        if not line.strip():
            continue
        opens = ("<tool_call>" in line and "</tool_call>" not in line) or (
            "<function=" in line and "</function>" not in line
        )
        if opens:
            block = [line]
            continue
        yield line
    if block:
        yield "\n".join(block)


def as_message(text: str) -> dict[str, Any] | str | None:
    """A typed line as an assistant message: JSON call(s) become ``tool_calls``, else raw text.

    None for a line that starts as JSON but is no call (a typo, a bracket left open): sent
    as it is, it would be a final answer and end the episode, so the player types it again.
    """
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return None
        calls = value if isinstance(value, list) else [value]
        if not calls or not all(isinstance(c, dict) and "name" in c for c in calls):
            return None
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"play_{i}",
                    "type": "function",
                    "function": {
                        "name": c["name"],
                        "arguments": json.dumps(c.get("arguments", {})),
                    },
                }
                for i, c in enumerate(calls)
            ],
        }
    return text


def _show(message: dict[str, Any]) -> None:
    if message["role"] == "tool":
        click.echo(click.style(f"[{message['name']}] ", fg="cyan") + message["content"])
    else:
        click.echo(click.style("customer: ", fg="green") + message["content"])


@click.command()
@click.option("--env", "env_name", type=click.Choice(ENVS), default="cart", show_default=True)
@click.option("--d", "d", type=click.IntRange(min=0), default=3, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--k", type=click.IntRange(min=0), default=0, show_default=True, help="Task index.")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    default=Path("data/catalog"),
    show_default=True,
    help="Catalog dataset directory (with its world tables).",
)
def play(env_name: str, d: int, seed: int, k: int, catalog: Path) -> None:
    """Play one episode of ENV at difficulty D as the agent, from the terminal.

    Type one tool call per line as JSON, e.g. {"name": "catalog_search", "arguments":
    {"query": "desk lamp"}}, or a Qwen3 <tool_call>...</tool_call> block (it may span
    lines). Plain text is your final answer to the customer: it ends the episode, which is
    then scored.
    """
    if not catalog.exists():
        raise ConfigError(
            f"no catalog at {catalog}: make one (`shopgen catalog --out {catalog}` then "
            f"`shopgen index --catalog {catalog}`) or pass --catalog DIR"
        )
    env = ShopEnv(checked(CatalogStore(catalog), search=needs_search([env_name])))
    obs = env.reset(TaskFactory(env, seed=seed).make(env_name, d, k).row)
    names = ", ".join(t["function"]["name"] for t in obs["tools"])
    click.echo(f"env {env_name} · d={d} · seed {seed} · task {env.task.task_id}")
    click.echo(f"tools: {names}")
    click.echo(
        f"turns: at most {env.task.axis('T_max')}, "
        f"{env.task.axis('B_tool')} tool calls per turn; plain text ends the episode"
    )
    click.echo(click.style("customer: ", fg="green") + obs["messages"][-1]["content"])
    info: dict[str, Any] = {}
    for text in _inputs(sys.stdin):
        message = as_message(text)
        if message is None:
            click.echo(
                'not a tool call: type {"name": …, "arguments": {…}} (or a list of them) '
                "again; plain text ends the episode",
                err=True,
            )
            continue
        obs, done, _, info = env.step(message)
        for message in obs["messages"]:
            _show(message)
        if done:
            break
    else:
        if not env.done:
            obs, done, _reward, info = env.step({"role": "assistant", "content": ""})
    state = info.get("state", {})
    click.echo(
        f"episode over after {state.get('turns', env.state.turns)} turn(s); "
        f"errors: {len(env.state.errors)}"
    )
    if "reward" in info:
        click.echo(
            f"reward {info['reward']:+.3f} (max 0.90) · correct {info['is_correct']} · "
            f"r_task {info['r_task']:+.3f} r_eff {info['r_eff']:.3f} r_hall {info['r_hall']:+.3f}"
        )
    if env.state.cart:
        click.echo(f"cart: {json.dumps(state.get('cart', []))}")
    for key in ("returns", "exchanges", "revealed_slots"):
        if env.state.extra.get(key):
            click.echo(f"{key}: {json.dumps(env.state.extra[key])}")
