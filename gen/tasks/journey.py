"""journey — several requests in one conversation.

Customer wants:
    L(d) = ``journey_length(d)`` things done in one conversation, drawn from the other
    environments: where an order is (status), a store-policy answer (policy), a set of
    products for a project (bundle, from d = 4 where its searches fit the turns). The first
    message names each request (what to do, about what, the order number or budget when there
    is one); every other fact a request needs the customer gives when asked.
Tools offered:
    the union of the sub-environments' tools (``ENV_TOOLS["journey"]``).
Hidden goal:
    ``{steps: [{env, goal, episode, user_script}]}``: each step holds the sub-environment's own
    hidden goal and the views of its episode and user script that its oracle and verifier read
    (slot names as the sub-environment knows them; a slot the journey message does not say is
    ``omitted``).
Composition (why only these sub-environments):
    the sub-generators draw their own customer and take no user id, so a journey holds at most
    one customer-bound request (status) and any customer-free ones (policy, bundle); each
    environment appears at most once, because ``recommend_products`` keeps only the latest
    list and a policy or status answer is graded from its own paragraph. So L(d) is capped at
    the number of usable sub-environments (3). discovery, substitution, cart and returns are
    not composed yet: they are customer-bound (a second customer) or share the cart/list.
Reward and is_correct:
    ``verifiers.journey`` runs each sub-verifier's logic on the shared final state (for text
    answers, on the final message's paragraph of that step when the message has one paragraph
    per step, else on the whole message); r_task is the mean of the sub r_tasks; correct iff
    every step is.
Difficulty axes used:
    L(d) via journey_length, p_switch (the customer raises a bundle budget), H_orders and
    p_missing through the status and policy steps, p_noise, T_max, B_tool.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import journey_length
from shopgen.gen.seeding import stream
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.switches import plan_switch
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw
from shopgen.schemas.envs import env_spec, load_entry_point
from shopgen.schemas.task import TaskRow

#: Sub-environments a journey composes, and the least d at which each fits the turns.
SUB_ENVS: dict[str, int] = {"status": 0, "policy": 0, "bundle": 4}
#: What each step asks for, as the journey template's ``action`` word.
ACTIONS = {"status": "check on", "policy": "ask about", "bundle": "get everything for"}


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw L(d) sub-tasks of distinct environments and merge them into one conversation."""
    usable = [e for e, low in SUB_ENVS.items() if d >= low]
    n = min(journey_length(d), len(usable))
    envs = [usable[i] for i in rng.choice(len(usable), size=n, replace=False)]
    seed = int(rng.integers(2**62))
    slots: list[Slot] = []
    facts: dict[str, dict[str, Any]] = {}
    steps = []
    episode: dict[str, Any] = {"today": ctx.today.isoformat(), "out_of_stock": []}
    for i, env in enumerate(envs):
        sub = load_entry_point(env_spec(env).generator)(
            ctx, d, axes, stream(seed, "journey", i, env)
        )
        said, step_slots = _said(env, i, sub.goal, sub.slots)
        slots += step_slots
        script = []
        for s in sub.slots:
            script.append(_script_slot(s.name, s.value, s.kind, s.label, s.name not in said))
        for name, fact in sub.facts.items():
            script.append({"name": name, "omitted": True, **fact})
        for entry in script:
            if entry["name"] not in said:
                fact = {k: v for k, v in entry.items() if k not in ("name", "omitted")}
                facts[f"steps.{i}.{entry['name']}"] = fact
        goal = dict(sub.goal)
        if env == "bundle":
            goal["listed"] = False  # the journey message names only the project
        steps.append(
            {"env": env, "goal": goal, "episode": sub.episode, "user_script": {"slots": script}}
        )
        _merge(episode, sub.episode)
    switch = _switch(slots, steps, axes, rng)
    return Draft(
        slots=tuple(slots), goal={"steps": steps}, episode=episode, switch=switch, facts=facts
    )


def _script_slot(name: str, value: Any, kind: str, label: str, omitted: bool) -> dict[str, Any]:
    return {"name": name, "value": value, "kind": kind, "label": label, "omitted": omitted}


def _said(
    env: str, i: int, goal: dict[str, Any], sub_slots: tuple[Slot, ...]
) -> tuple[set[str], list[Slot]]:
    """The sub-slots the journey message says, and the journey slots that say them."""
    values = {s.name: s.value for s in sub_slots}
    out = [make_slot("journey", f"steps.{i}.action", ACTIONS[env], required=True)]
    said: set[str] = set()
    if env == "status":
        # The item (when the order is named by it) is said, as in status's own message;
        # status's oracle relies on it and asks only for a missing day.
        item = f"my {values['item']} order" if "item" in values else "my order"
        out.append(
            make_slot("journey", f"steps.{i}.goal", f"{item} ({values['want']})", required=True)
        )
        said |= {"want", "item"}
        if "order_ref" in values:
            out.append(make_slot("journey", f"steps.{i}.ref", values["order_ref"], required=True))
            said.add("order_ref")
    elif env == "policy":
        out.append(make_slot("journey", f"steps.{i}.goal", values["topic"], required=True))
        said.add("topic")
    else:
        out.append(make_slot("journey", f"steps.{i}.goal", values["project"], required=True))
        said.add("project")
        if goal.get("budget") is not None:
            out.append(make_slot("journey", f"steps.{i}.price_max", goal["budget"], required=True))
            said.add("budget")
    return said, out


def _merge(into: dict[str, Any], sub: dict[str, Any]) -> None:
    """One customer's episode: a second customer or a clash of values is redrawn."""
    for key, value in sub.items():
        if key == "out_of_stock":
            into[key] = sorted(set(into[key]) | set(value))
        elif key in into and into[key] != value:
            raise Redraw(f"sub-episodes disagree on {key}")
        else:
            into[key] = value


def _switch(slots: list[Slot], steps: list[dict[str, Any]], axes: Theta, rng: np.random.Generator):
    """A raised bundle budget (the one change of mind that composes with every step)."""
    options: dict[str, dict[str, list[Any]]] = {}
    for i, step in enumerate(steps):
        budget = step["goal"].get("budget") if step["env"] == "bundle" else None
        if budget is not None:
            options["raise_budget"] = {f"steps.{i}.price_max": [math.ceil(budget * 1.25)]}
    switch = plan_switch(
        "journey",
        slots,
        p_switch=float(axes.p_switch),
        T_max=int(axes.T_max),
        rng=rng,
        options=options,
    )
    if switch is not None:
        name, value = switch.changes[0]
        step = steps[int(name.split(".")[1])]
        step["goal"]["budget"] = value  # the hidden goal is the final intent
    return switch


def sub_task(task: TaskRow, step: dict[str, Any]) -> TaskRow:
    """The task as one step's oracle and verifier see it: its own goal, episode and script."""
    script = {**task.decoded("user_script"), "slots": step["user_script"]["slots"], "switch": None}
    goal = {**step["goal"], "min_turns": 1}
    return task.model_copy(
        update={
            "env": step["env"],
            "goal": json.dumps(goal),
            "episode": json.dumps(step["episode"]),
            "user_script": json.dumps(script),
        }
    )


def oracle(task: TaskRow) -> Oracle:
    """Play every step's own oracle, packing their turns together while B_tool allows.

    Each step's final message becomes one paragraph of the journey's final message, in step
    order (the verifier grades text answers paragraph by paragraph).
    """
    steps = task.decoded("goal")["steps"]
    budget = task.axis("B_tool")
    players = [load_entry_point(env_spec(s["env"]).oracle)(sub_task(task, s)) for s in steps]
    pending: list[Any] = [next(p) for p in players]
    finals: list[str | None] = [None] * len(players)
    while True:
        for i, turn in enumerate(pending):
            if isinstance(turn, str) and finals[i] is None:
                finals[i] = turn
        active = [i for i, t in enumerate(pending) if not isinstance(t, str)]
        if not active:
            break
        batch, calls = [], []
        for i in active:
            if calls and len(calls) + len(pending[i]) > budget:
                break
            batch.append((i, len(calls), len(pending[i])))
            calls += pending[i]
        results = yield calls
        tools = [r for r in results if "customer" not in r]
        for i, start, size in batch:
            pending[i] = players[i].send(tools[start : start + size])
    yield "\n\n".join(f or "" for f in finals)
