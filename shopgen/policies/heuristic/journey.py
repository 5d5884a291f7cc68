"""Heuristic agent for ``journey``: split the requests, play each one's own agent, side by side.

The first message lists the requests as ``<action> <goal>`` (:mod:`.steps` finds them). Each
request is handed to its environment's heuristic as a one-request conversation: a
:class:`~shopgen.policies.base.PublicTask` whose first message says that request the way the
environment's own customers word it (:func:`sentence`). :func:`.compose.interleave` plays them
together within the per-turn call budget, prefixing each question with the request's goal
words so the customer answers about that request, and the final answer is one paragraph per
request, in the order the customer listed them.

The customer may change their mind about one request ("the budget for the desk lamps should
be $150", "the Acme kettle in my cart should be …"). :func:`route_change` hands that message
to the request it names (by the request's goal words, or a word only one kind of request
uses: cart, must-have, exchange, replacement; a bare "make it $150" goes to a request that
had a budget), with the request's name taken out, so its agent reads it as a change of mind
of its own conversation. Agents that act on such a message: bundle (a lowered budget, one
more kind), discovery and substitution (a budget or attribute value); the cart and returns
agents ignore it.
"""

from __future__ import annotations

import dataclasses
import re
from difflib import SequenceMatcher

from shopgen.gen.tasks.base import Oracle
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import MONEY_RE, words
from shopgen.policies.heuristic.compose import Player, Route, change_body, interleave
from shopgen.policies.heuristic.steps import Step, split_steps

#: Tool turns a journey of L requests may take, in halves of a turn (the final answer is one
#: more): a journey has T_max(d) + L − 1 turns (``journey_turns``), at least 2.5·L at every d.
HALF_TURNS_PER_STEP = 5
#: Requests that can change mid-conversation, and words only a change of that kind uses.
CHANGE_CUES: dict[str, tuple[str, ...]] = {
    "discovery": (),
    "substitution": ("replacement",),
    "cart": ("cart",),
    "returns": ("exchange",),
    "bundle": ("must-have",),
}
#: Requests a bare new budget may belong to.
BUDGETED = ("bundle", "discovery", "substitution")
#: "the <label> for <request> should be <value>": the label and the request's words (the
#: customer's "4" for "for" and a typo in the verb allowed).
_SUBJECT = re.compile(
    r"(\bthe\s+[\w' -]+?)\s*(?<![a-z])(?:for|4|fr|forr|fro|fo)(?:\s+|(?=the))(.+?)"
    r"(?=\s+(?:should\s+be|is\s+now|is|si|iis|i\s+s)\b|\s+→)",
    re.I,
)
_GLUE = frozenset({"the", "my", "for", "a", "an", "of", "in", "and", "it", "i"})
#: How alike two words must be to count as one (the customer's typos).
WORD_MATCH = 0.8


def _like(a: str, b: str) -> bool:
    return a == b or (
        min(len(a), len(b)) >= 4 and SequenceMatcher(None, a, b).ratio() >= WORD_MATCH
    )


def _shared(said: set[str], goal: set[str]) -> int:
    """How many of the goal's words the message says (typos allowed)."""
    return sum(any(_like(w, g) for w in said) for g in goal)


def sentence(step: Step) -> str:
    """The request as its own environment's first message would word it."""
    text = step.text
    if step.env == "discovery":
        return f"Looking for {text}."
    if step.env == "substitution":
        rest = text[len(step.goal) :].strip() if text.startswith(step.goal) else ""
        return f"I need a replacement for {step.goal}" + (f", {rest}." if rest else ".")
    if step.env == "status":
        return f"Can you check on {text}?"
    if step.env == "policy":
        return f"Quick question about {text}."
    if step.env == "returns":
        return f"I want to send back {text}."
    if step.env == "cart":
        return f"Please add to my cart {text}."
    project = re.split(r"\s+under\s+(?=\$)", text, maxsplit=1)
    budget = f" with a budget of {project[1]}" if len(project) > 1 else ""
    return f"Everything for {project[0]}{budget}."


def step_view(task: PublicTask, step: Step) -> PublicTask:
    """The public view one request's agent plays: the same task, that request's sentence."""
    return dataclasses.replace(task, env=step.env, user=sentence(step))


def change_target(steps: list[Step], text: str) -> int | None:
    """The index of the request a change of mind concerns (None when no request can change)."""
    able = [i for i, s in enumerate(steps) if s.env in CHANGE_CUES]
    if not able:
        return None
    named = _SUBJECT.search(text)
    said = words(named.group(2) if named else text) - _GLUE
    tokens = re.findall(r"[a-z-]+", text.lower())

    def score(i: int) -> int:
        cues = CHANGE_CUES[steps[i].env]
        cue = any(_like(t, c) for t in tokens for c in cues)
        return _shared(said, words(steps[i].goal) - _GLUE) + cue

    scores = {i: score(i) for i in able}
    best = max(able, key=lambda i: (scores[i], -i))
    if scores[best] > 0:
        return best
    if MONEY_RE.search(text):
        budgeted = [i for i in able if steps[i].env in BUDGETED]
        priced = [i for i in budgeted if "$" in steps[i].text]
        return (priced or budgeted or able)[0]
    return able[0]


def route_change(steps: list[Step], players: list[Player]) -> Route:
    """Route a change of mind to its request's player: what changes, its request's name out."""

    def route(text: str) -> tuple[Player, str] | None:
        i = change_target(steps, text)
        if i is None:
            return None
        return players[i], _SUBJECT.sub(r"\1", change_body(text), count=1)

    return route


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
        )
        for s in steps
    ]
    route = route_change(steps, players)
    finals = yield from interleave(players, HALF_TURNS_PER_STEP * len(steps) // 2 - 1, route)
    yield "\n\n".join(finals)
