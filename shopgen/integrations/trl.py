"""TRL adapter: an environment class for ``GRPOTrainer(environment_factory=…)`` and rewards.

TRL's contract (trl ≥ 1.0, transformers ≥ 5.2): the factory makes one instance per rollout;
``reset(**row)`` receives every dataset column; each public method with a Google ``Args:``
docstring becomes a tool whose schema ``transformers.utils.get_json_schema`` derives. The
methods here are generated from shopgen's tool registry — docstrings written from the same
schema the task rows carry — so the model sees the tools a task row offers, and
``tests/integrations/test_trl.py`` checks ``get_json_schema`` against ``env_tool_schemas``.

Turns: TRL calls tool methods one at a time and does not tell the environment where one
generation ends, so the live episode that answers the calls cannot count assistant turns. It
plays each call as its own turn with ``T_max`` lifted (it only serves results). The reward is
then computed the way ``shopgen score`` does it (DESIGN §8): :func:`shopgen_reward` replays the
completion's assistant messages — which do carry the turn structure — through a fresh episode
of the real task, so ``T_max``, ``B_tool``, switches and the verifier apply exactly.

>>> # factory = environment_factory("data/catalog", env="cart")
>>> # GRPOTrainer(model, reward_funcs=[shopgen_reward], train_dataset=ds,
>>> #             environment_factory=factory, ...)
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import ENV_TOOLS, REGISTRY
from shopgen.verifiers.replay import play

#: The live episode's turn limit: it only answers calls; the replay in the reward applies T_max.
_LIVE_T_MAX = 10_000

#: What a tool returns once the episode has ended (T_max reached): the agent should answer.
_OVER = json.dumps({"error": "episode_over", "message": "no more tool calls; answer the customer"})


class ShopgenEnvironment:
    """One shopgen episode per rollout; tool methods come from :func:`environment_class`.

    Non-tool members are private or properties, because TRL turns every public function of
    the class into a tool.
    """

    _shop: ShopEnv
    _tool_names: tuple[str, ...] = ()

    def __init__(self, shop: ShopEnv) -> None:
        self._shop = shop.spawn()
        self._info: dict[str, Any] | None = None
        self._row: dict[str, Any] | None = None
        self._calls = 0

    def reset(self, task: str | dict[str, Any] | None = None, **_: Any) -> str | None:
        """Start the episode of ``task`` (the export's ``task`` column); other columns ignored.

        Returns None: the prompt column already holds the opening messages.
        """
        if task is None:
            raise ValueError(
                "a shopgen TRL row needs its 'task' column (shopgen export --format trl)"
            )
        row = json.loads(task) if isinstance(task, str) else dict(task)
        self._row = row
        theta = row["theta"] if isinstance(row["theta"], dict) else json.loads(row["theta"])
        self._shop.reset({**row, "theta": {**theta, "T_max": _LIVE_T_MAX}})
        self._info = None
        self._calls = 0
        return None

    @property
    def done(self) -> bool:
        """Whether the rollout has been scored."""
        return self._info is not None

    @property
    def info(self) -> dict[str, Any] | None:
        """The verifier's result (Score as a dict) once the rollout has been scored."""
        return self._info

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """Play one tool call as one assistant turn; the tool result (and any customer line)."""
        if self._shop.done:
            return _OVER
        self._calls += 1
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{self._calls}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        }
        obs, _, _, _ = self._shop.step(message)
        parts = [m["content"] for m in obs["messages"] if m["role"] == "tool"]
        said = [m["content"] for m in obs["messages"] if m["role"] == "user"]
        text = "\n".join(parts)
        if said:
            text += "\n\nCustomer: " + "\n".join(said)
        return text

    def _finish(self, completion: Any) -> dict[str, Any]:
        """Score the rollout: replay its assistant turns on the real task (once per reset)."""
        if self._info is None:
            if self._row is None:
                raise ValueError("reset(task=…) was never called on this environment")
            turns = _assistant_turns(completion)
            score, _ = play(self._shop.spawn(), self._row, turns)
            self._info = score.to_dict() if score is not None else {"reward": None}
        return self._info


def _method(name: str) -> Callable[..., str]:
    """A method whose signature and docstring reproduce tool ``name``'s schema."""
    spec = REGISTRY[name]
    fn = spec.schema["function"]
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [fn["description"], ""]
    if spec.params:
        lines.append("Args:")
    for p in spec.params:
        # ``X | None`` would add ``nullable``; a None default keeps the schema shopgen's.
        annotation = _strip_none(p.annotation)
        default = inspect.Parameter.empty if p.required else None
        params.append(
            inspect.Parameter(
                p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
        annotations[p.name] = annotation
        lines.append(f"    {p.name}: {p.schema['description']}")

    def call(self: ShopgenEnvironment, **arguments: Any) -> str:
        return self._call(name, {k: v for k, v in arguments.items() if v is not None})

    call.__name__ = call.__qualname__ = name
    call.__doc__ = "\n".join(lines).rstrip() + "\n"
    call.__annotations__ = annotations
    call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return call


def _strip_none(annotation: Any) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if args and type(None) in typing.get_args(annotation) else annotation


_CLASSES: dict[tuple[str, ...], type[ShopgenEnvironment]] = {}


def environment_class(env: str | None = None) -> type[ShopgenEnvironment]:
    """The environment class exposing ``env``'s tools (every tool when None)."""
    names = ENV_TOOLS[env] if env is not None else tuple(sorted(REGISTRY))
    cls = _CLASSES.get(names)
    if cls is None:
        label = "".join(p.title() for p in (env or "all").split("_"))
        members = {n: _method(n) for n in names}
        cls = type(f"Shopgen{label}Environment", (ShopgenEnvironment,), members)
        cls._tool_names = names
        _CLASSES[names] = cls
    return cls


def environment_factory(
    catalog: str | Path | ShopEnv, *, env: str | None = None
) -> Callable[[], ShopgenEnvironment]:
    """A zero-argument factory for ``GRPOTrainer(environment_factory=…)``.

    Every instance shares one catalog (and search index) and holds only its own episode.

    Args:
        catalog: the tasks' catalog directory, or a ShopEnv on it.
        env: the shop environment whose tools to expose; None exposes every tool.
    """
    shop = catalog if isinstance(catalog, ShopEnv) else ShopEnv(catalog)
    cls = environment_class(env)
    return lambda: cls(shop)


def environment_factories(
    catalog: str | Path | ShopEnv, envs: list[str]
) -> dict[str, Callable[[], ShopgenEnvironment]]:
    """TRL's multi-environment form: the export's ``environment`` column picks the factory."""
    shop = catalog if isinstance(catalog, ShopEnv) else ShopEnv(catalog)
    return {e: environment_factory(shop, env=e) for e in envs}


def _assistant_turns(completion: Any) -> list[dict[str, Any]]:
    """The completion's assistant messages (raw text is one closing turn).

    Messages go to the runtime as they are, content parts included: it reads them as it reads
    every other client's (parts joined as written), so a reward here equals ``shopgen score``'s.
    """
    if isinstance(completion, str):
        return [{"role": "assistant", "content": completion}]
    return [m for m in completion or [] if isinstance(m, dict) and m.get("role") == "assistant"]


def _scores(completions: list[Any], environments: list[ShopgenEnvironment]) -> list[dict]:
    return [e._finish(c) for c, e in zip(completions, environments, strict=True)]


def shopgen_reward(
    completions: list[Any], environments: list[ShopgenEnvironment], **_: Any
) -> list[float]:
    """TRL reward function: the verifier's reward of each rollout's episode (DESIGN §9)."""
    return [float(i.get("reward") or 0.0) for i in _scores(completions, environments)]


def is_correct_reward(
    completions: list[Any], environments: list[ShopgenEnvironment], **_: Any
) -> list[float]:
    """TRL reward function (e.g. for logging with weight 0): 1.0 when the episode is correct."""
    return [1.0 if i.get("is_correct") else 0.0 for i in _scores(completions, environments)]


__all__ = [
    "ShopgenEnvironment",
    "environment_class",
    "environment_factories",
    "environment_factory",
    "is_correct_reward",
    "shopgen_reward",
]
