"""Heuristic agent for ``journey``: split the requests, play each one's own agent, side by side.

The first message lists the requests as ``<action> <goal>`` (:mod:`.steps` finds them). Each
request is handed to its environment's heuristic as a one-request conversation: a
:class:`~shopgen.policies.base.PublicTask` whose first message says that request the way the
environment's own customers word it (:func:`sentence`). :func:`.compose.interleave` plays them
together within the per-turn call budget, prefixing each question with the request's goal
words so the customer answers about that request, and the final answer is one paragraph per
request, in the order the customer listed them.
"""

from __future__ import annotations

import dataclasses
import re

from shopgen.gen.tasks.base import Oracle
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.compose import Player, interleave
from shopgen.policies.heuristic.steps import Step, split_steps

#: Tool turns a journey of L requests may take (the final answer is one more): T_max ≥ 2·L.
TURNS_PER_STEP = 2
#: A constraint right after a product name (so the name ends before it).
_CONSTRAINT = re.compile(r"\s+(?=from\s+[A-Z]|under\s+\$|rated\s+\d|delivered\s+within\b|\(\d)")


def sentence(step: Step) -> str:
    """The request as its own environment's first message would word it."""
    text = step.text
    if step.env == "discovery":
        return f"Looking for {text}."
    if step.env == "substitution":
        return "I need a replacement for " + _CONSTRAINT.sub(", ", text, count=1) + "."
    if step.env == "status":
        return f"Can you check on {text}?"
    if step.env == "policy":
        return f"Quick question about {text}."
    if step.env == "returns":
        return f"I want to return {text}."
    if step.env == "cart":
        return f"Please add to my cart {text}."
    project = re.split(r"\s+under\s+(?=\$)", text, maxsplit=1)
    budget = f" with a budget of {project[1]}" if len(project) > 1 else ""
    return f"Everything for {project[0]}{budget}."


def step_view(task: PublicTask, step: Step) -> PublicTask:
    """The public view one request's agent plays: the same task, that request's sentence."""
    return dataclasses.replace(task, env=step.env, user=sentence(step))


def heuristic(task: PublicTask) -> Oracle:
    """Play a journey task from the public view only."""
    from shopgen.policies.heuristic import heuristic_for  # the package imports this module

    steps = split_steps(task.user)
    if not steps:
        yield "Sorry, I could not tell what you need."
        return
    players = [
        Player(
            agent=heuristic_for(s.env)(step_view(task, s)),
            about=s.goal,
            hears=s.env == "bundle",  # the one change of mind a journey has: a bundle budget
        )
        for s in steps
    ]
    finals = yield from interleave(players, max_turns=TURNS_PER_STEP * len(steps) - 1)
    yield "\n\n".join(finals)
