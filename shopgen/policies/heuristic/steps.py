"""Reading a journey's first message: which requests, in which order, in which words.

The journey message lists its steps as ``<action> <goal>`` joined by commas and "and"
(``templates/journey/first.j2``); the action phrase names the kind of request
(:data:`~shopgen.gen.tasks.journey.ACTIONS`, the store's own vocabulary). Typos and chat
shorthand ("ask abt") may touch the action words, so they are found by a fuzzy match on
normalised words, and everything between one action and the next is that step's goal and
details.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from shopgen.gen.tasks.journey import ACTIONS

#: Chat shorthand back to the word it stands for (the customer's texting habits).
_LONGHAND = {
    "abt": "about",
    "4": "for",
    "w/": "with",
    "u": "you",
    "ur": "your",
    "smth": "something",
    "pls": "please",
}
#: How close a window of words must be to an action phrase to count as it (typos allowed).
MATCH = 0.8
_WORD = re.compile(r"\S+")
#: Where the last step's words end: the template's closing words ("Thank you.", " thx").
_END = re.compile(r"(?:[.?!](?=\s|$)|,\s*quickly\b|\s+(?:pls|thx|asap)\b)", re.I)
#: Details a step may carry after its goal words (constraints, options, day, order number).
_DETAIL = re.compile(
    r"\s+(?:from\s+[A-Z]|under\s+\$|rated\s+\d|delivered\s+within\b|\(\d+\s+options\)|"
    r"placed\s+on\b|\(order\b)"
)


@dataclass(frozen=True)
class Step:
    """One request of a journey as the customer worded it.

    Attributes:
        env: the environment the action phrase names.
        text: everything the customer said about it after the action (goal and details).
        goal: the goal words alone (what a question about this step should name).
    """

    env: str
    text: str
    goal: str


def _norm(word: str) -> str:
    low = word.lower().strip(",.;:!?\"'()")
    return _LONGHAND.get(low, low)


def _find_actions(words: list[re.Match[str]]) -> list[tuple[int, int, str]]:
    """(first word, word after the action, env) of every action phrase found, in order."""
    normed = [_norm(w.group(0)) for w in words]
    found: list[tuple[float, int, int, str]] = []
    for env, phrase in ACTIONS.items():
        size = len(phrase.split())
        best: tuple[float, int] | None = None
        for i in range(len(words) - size + 1):
            ratio = SequenceMatcher(None, " ".join(normed[i : i + size]), phrase).ratio()
            if ratio >= MATCH and (best is None or ratio > best[0]):
                best = (ratio, i)
        if best is not None:
            found.append((best[0], best[1], best[1] + size, env))
    taken: list[tuple[int, int, str]] = []
    for _, start, end, env in sorted(found, key=lambda f: -f[0]):
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, env))
    return sorted(taken)


def split_steps(text: str) -> list[Step]:
    """The steps of a journey message in the order the customer listed them."""
    words = list(_WORD.finditer(text))
    actions = _find_actions(words)
    steps = []
    for j, (_, end, env) in enumerate(actions):
        start = words[end].start() if end < len(words) else len(text)
        stop = words[actions[j + 1][0]].start() if j + 1 < len(actions) else len(text)
        body = text[start:stop]
        if j + 1 == len(actions):
            cut = _END.search(body)
            body = body[: cut.start()] if cut else body
        body = re.sub(r"(?:,|\s+and|\s+&)?\s*$", "", body.strip()).strip()
        steps.append(Step(env=env, text=body, goal=goal_words(body)))
    return steps


def goal_words(text: str) -> str:
    """A step's goal without its details ("the blender" of "the blender (order 1-2-3)")."""
    return _DETAIL.split(text, maxsplit=1)[0].strip(" ,")
