"""Playing several rule-based agents in one conversation, packing their turns together.

Each agent is a generator of the oracle protocol (``shopgen.gen.tasks.base.Oracle``) that
believes it has the conversation to itself. :func:`interleave` sends the pending calls of as
many agents as the per-turn call budget allows in one turn, hands each agent exactly the
results of its own calls once all of them ran, and keeps what the runtime does behind their
backs: calls refused as ``over_budget`` are sent again (the budget is learned from the error,
as :class:`~shopgen.policies.heuristic.turns.Turns` does), so an agent never sees a refusal
it did not cause. Questions are prefixed with the words of the request they belong to, so the
customer answers about that request only.

The customer may change their mind about one request, unprompted or at the head of a reply
to any request's question (``templates/user/change_mind.j2``). :func:`interleave` takes such a
message out of the reply it came in (so another request's agent does not read its budget or
value as its own) and hands it, through ``route``, to the agent of the request it concerns,
as an unprompted ``{"customer": text}`` entry with that agent's next results.

The agent does not know how many turns it has. A journey of L requests has at least 2·L turns
(the store's traffic: longer journeys come with longer conversations), so :func:`interleave`
answers, with whatever each agent has, before that guess runs out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from shopgen.gen.tasks.base import Call, Oracle

_LIMIT = re.compile(r"at most (\d+) tool calls? per turn")
_BLANK = re.compile(r"\n\s*\n")
#: How a change of mind opens (the phrasings of ``templates/user/change_mind.j2``), matched
#: loosely: the customer's typos and shorthand ("4" for "for") touch these words too.
CHANGE_OPENERS = (
    "actually, i've changed my mind:",
    "wait, one change please:",
    "change:",
    "oh, hold on, i just thought about it some more and i'd rather go with something different:",
    "i apologise for the change, but could we make it so that",
    "scratch that.",
    "sorry, i change my idea,",
    "actually make",  # "actually make it <value>": the "make it" stays with the value
)
#: Share of an opener's letters a reply's head must match to open a change of mind.
OPENER_MATCH = 0.75
#: Where it ends: a sentence end (a value's "4.5" is not one), and a closing "Sorry!".
_CHANGE_END = re.compile(r"[.?!](?=\s|$)(?:\s+sorry!)?", re.I)


@dataclass
class Player:
    """One agent inside a shared conversation.

    Attributes:
        agent: the agent's generator.
        about: the words that name its request (prefixed to its questions), or "".
        calls: its current turn's calls; ``results`` holds the ones that ran (None = not yet).
        heard: unprompted customer messages routed to it, handed over with its next results.
        final: its final text once it gave one.
        played: how many of its turns have run (a request further behind goes first).
    """

    agent: Oracle
    about: str = ""
    calls: list[Call] = field(default_factory=list)
    results: list[dict[str, Any] | None] = field(default_factory=list)
    heard: list[dict[str, Any]] = field(default_factory=list)
    final: str | None = None
    played: int = 0

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


#: Which player an unprompted customer message concerns, and the message as it should read
#: to that player's agent; None when it concerns none.
Route = Callable[[str], tuple[Player, str] | None]


def _opener(text: str) -> tuple[int, str]:
    """Where the change-of-mind opener heading ``text`` ends (0: none), and which it is."""
    head = text.lower()
    found = (0, "")
    for opener in CHANGE_OPENERS:
        n = len(opener)
        ratio, size = max(
            (SequenceMatcher(None, head[:size], opener).ratio(), size)
            for size in range(max(1, n - 3), n + 4)
        )
        if ratio >= OPENER_MATCH and size > found[0]:
            found = (size, opener)
    return found


def split_change(reply: str) -> tuple[str, str]:
    """A reply split into the change of mind it opens with (or "") and the answer after it."""
    text = reply.strip()
    opened, _ = _opener(text)
    if not opened:
        return "", reply
    end = _CHANGE_END.search(text, opened)
    cut = end.end() if end else len(text)
    return text[:cut].strip(), text[cut:].strip()


def change_body(change: str) -> str:
    """A change of mind without its opener: what changes ("the budget should be $150.").

    Agents read these words as they read any statement of needs; the opener's own words
    ("I've changed my mind: …") would read as a "label: value" pair.
    """
    text = change.strip()
    opened, opener = _opener(text)
    body = text[opened:].strip(" ,")
    if opener == CHANGE_OPENERS[-1]:
        body = "make " + body  # "actually make it blue": the value is what "make it" names
    return body or text


def interleave(
    players: list[Player], max_turns: int, route: Route | None = None
) -> Generator[list[Call], Any, list[str]]:
    """Play every player to its final text within ``max_turns`` tool turns; their finals.

    A player still busy when the turns run out is stopped; its final is its last words (none).
    Unprompted customer messages (and a change of mind heading a reply) go where ``route``
    says; without ``route`` they are dropped.
    """
    budget: int | None = None
    for p in players:
        _advance(p, None)
    used = 0
    while used < max_turns:
        if max_turns - used == 1:  # the last tool turn: what matters goes, the rest is let go
            for p in players:
                _hurry(p)
        busy = [p for p in players if p.final is None]
        if not busy:
            break
        batch = _pack(sorted(busy, key=_urgency), budget)
        results = yield [routed(p.calls[i], p.about) for p, i in batch]
        used += 1
        tool = []
        for r in results:
            if "customer" in r:
                _deliver(route, str(r["customer"]))
                continue
            change, rest = split_change(r["reply"]) if isinstance(r.get("reply"), str) else ("", "")
            if change:
                _deliver(route, change)
                r = {**r, "reply": rest}
            tool.append(r)
        for (p, i), result in zip(batch, tool, strict=False):
            limit = _LIMIT.search(str(result.get("message", "")))
            if result.get("error") == "over_budget" and limit:
                budget = int(limit.group(1))
                continue
            p.results[i] = result
        for p in {id(p): p for p, _ in batch}.values():
            if p.final is None and not p.waiting():
                _advance(p, [*p.results, *p.heard])
                p.heard = []
                p.played += 1
    return [one_paragraph(p.final) for p in players]


def _deliver(route: Route | None, text: str) -> None:
    """Hand an unprompted message to the player it concerns (if any)."""
    hit = route(text) if route is not None and text else None
    if hit is not None:
        player, said = hit
        player.heard.append({"customer": said})


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


#: How urgent a call is, lowest first: acts the customer is graded on, then questions (their
#: answers unblock a request), look-ups, searches, and a last look at the cart.
URGENCY = {
    "recommend_products": 0,
    "cart_add": 0,
    "cart_update_quantity": 0,
    "cart_remove": 0,
    "return_start": 0,
    "exchange_start": 0,
    "return_check_eligibility": 0,
    "ask_user": 1,
    "catalog_search": 3,
    "cart_view": 4,
}
#: Calls a request can do without when the turns run out: more searching, a look at the cart.
OPTIONAL = frozenset({"catalog_search", "catalog_get_product", "cart_view"})
#: What a call let go returns to its agent (it reads like a search that found nothing).
SKIPPED = {"error": "skipped", "message": "not run: no turns left for it"}
#: Most turns of optional calls let go for one agent (its gathering loops are short).
MAX_SKIPS = 8


def _urgency(player: Player) -> tuple[int, int]:
    """Who goes first: the request furthest behind, then the most urgent waiting call.

    Counting turns played keeps a request from starving: a cart's first search goes before
    a discovery request's third, which only widens what it has already seen. Among requests
    as far along, one whose turn acts (:data:`URGENCY`; look-ups count 2) goes first: a
    recommendation or a cart line must not wait behind another request's extra search.
    """
    kind = min((URGENCY.get(player.calls[i][0], 2) for i in player.waiting()), default=5)
    return player.played, kind


def _hurry(player: Player) -> None:
    """Let go of a player's optional calls until it reaches a turn that matters (or its end).

    On the last tool turn, a request still searching would otherwise never recommend, and a
    cart's last look would crowd out another request's act. The agent is told each call was
    not run, as a search that found nothing, and moves on with what it has seen.
    """
    for _ in range(MAX_SKIPS):
        waiting = player.waiting()
        if player.final is not None or not waiting:
            return
        if any(player.calls[i][0] not in OPTIONAL for i in waiting):
            return
        done = [r if r is not None else dict(SKIPPED) for r in player.results]
        _advance(player, [*done, *player.heard])
        player.heard = []


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
