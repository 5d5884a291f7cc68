"""Playing several rule-based agents in one conversation, packing their turns together.

Each agent is a generator of the oracle protocol (``shopgen.gen.tasks.base.Oracle``) that
believes it has the conversation to itself. :func:`interleave` sends the pending calls of as
many agents as the per-turn call budget allows in one turn, hands each agent exactly the
results of its own calls once all of them ran, and keeps what the runtime does behind their
backs: calls refused as ``over_budget`` are sent again (the budget is learned from the error,
as :class:`~shopgen.policies.heuristic.turns.Turns` does), so an agent never sees a refusal
it did not cause. Questions are prefixed with the words of the request they belong to, so the
customer answers about that request only.

The agent does not know how many turns it has. A journey of L requests has at least 2·L turns
(the store's traffic: longer journeys come with longer conversations), so :func:`interleave`
answers, with whatever each agent has, before that guess runs out.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from shopgen.gen.tasks.base import Call, Oracle

_LIMIT = re.compile(r"at most (\d+) tool calls? per turn")
_BLANK = re.compile(r"\n\s*\n")


@dataclass
class Player:
    """One agent inside a shared conversation.

    Attributes:
        agent: the agent's generator.
        about: the words that name its request (prefixed to its questions), or "".
        hears: whether it is shown the customer's unprompted messages.
        calls: its current turn's calls; ``results`` holds the ones that ran (None = not yet).
        final: its final text once it gave one.
    """

    agent: Oracle
    about: str = ""
    hears: bool = False
    calls: list[Call] = field(default_factory=list)
    results: list[dict[str, Any] | None] = field(default_factory=list)
    heard: list[dict[str, Any]] = field(default_factory=list)
    final: str | None = None

    def take(self, turn: Any) -> None:
        """Record the agent's next move (a turn of calls, or its final text)."""
        if isinstance(turn, str):
            self.final, self.calls, self.results = turn, [], []
        else:
            self.calls, self.results = list(turn), [None] * len(turn)

    def waiting(self) -> list[int]:
        """Indexes of this turn's calls that have not run yet."""
        return [i for i, r in enumerate(self.results) if r is None]


def routed(call: Call, about: str) -> Call:
    """A call with its question (if it asks the customer) prefixed by the request's words."""
    name, args = call
    if name == "ask_user" and about:
        return (name, {**args, "question": f"About {about}: {args.get('question', '')}"})
    return call


def one_paragraph(text: str | None) -> str:
    """A final text as one paragraph (a blank line would split the step's answer in two)."""
    return _BLANK.sub("\n", (text or "").strip()) or "Sorry, I could not finish this request."


def interleave(players: list[Player], max_turns: int) -> Generator[list[Call], Any, list[str]]:
    """Play every player to its final text within ``max_turns`` tool turns; their finals.

    A player still busy when the turns run out is stopped; its final is its last words (none).
    """
    budget: int | None = None
    for p in players:
        _advance(p, None)
    used = 0
    while used < max_turns:
        busy = [p for p in players if p.final is None]
        if not busy:
            break
        batch = _pack(busy, budget)
        results = yield [routed(p.calls[i], p.about) for p, i in batch]
        used += 1
        tool = [r for r in results if "customer" not in r]
        said = [r for r in results if "customer" in r]
        for (p, i), result in zip(batch, tool, strict=False):
            limit = _LIMIT.search(str(result.get("message", "")))
            if result.get("error") == "over_budget" and limit:
                budget = int(limit.group(1))
                continue
            p.results[i] = result
        for p in players:
            if p.hears:
                p.heard += said
        for p in {id(p): p for p, _ in batch}.values():
            if p.final is None and not p.waiting():
                _advance(p, [*p.results, *p.heard])
                p.heard = []
    return [one_paragraph(p.final) for p in players]


def _pack(busy: list[Player], budget: int | None) -> list[tuple[Player, int]]:
    """This turn's calls: every waiting one while the budget is unknown, else first fit.

    The first player may send part of its turn (the rest follows); a later player's turn is
    sent whole or waits, so its calls stay together whenever they can.
    """
    batch: list[tuple[Player, int]] = []
    for p in busy:
        waiting = p.waiting()
        room = len(waiting) if budget is None else budget - len(batch)
        if not batch:
            batch += [(p, i) for i in waiting[: max(room, 1)]]
        elif 0 < len(waiting) <= room:
            batch += [(p, i) for i in waiting]
    return batch


def _advance(player: Player, results: list[dict[str, Any]] | None) -> None:
    try:
        turn = next(player.agent) if results is None else player.agent.send(results)
    except StopIteration:
        turn = player.final or ""
    while not isinstance(turn, str) and not turn:  # an empty turn: ask the agent again
        try:
            turn = player.agent.send([])
        except StopIteration:
            turn = ""
    player.take(turn)
