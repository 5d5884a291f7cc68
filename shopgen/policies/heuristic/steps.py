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
from shopgen.policies.heuristic.cart_text import similar_and

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
#: Details a step may carry after its goal words (constraints, options, day, order number),
#: their template words matched by shape so a typo ("unser $38", "deivered within 3",
#: "palced on", "(oprdr 558-…") or a glued space ("setupunder $67") does not hide them.
_DETAIL = re.compile(
    r"\s*(?:\bfrom\s+[A-Z]|\b\w{3,6}\s+\$\d|\$\d|\br\w{3,5}\s+\d(?:\.\d)?\s+or\b|"
    r"\bd\w{5,9}\s+w\w{4,7}\s+\d|\(\d+\s+\w+\)|\bp\w{3,6}\s+(?:on|o|n)\s+[A-Z]|"
    r"\(\w{3,6}\s+\d{3}-)"
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
        best: tuple[float, int, int] | None = None
        for i, size in _windows(len(words), len(phrase.split())):
            ratio = SequenceMatcher(None, " ".join(normed[i : i + size]), phrase).ratio()
            if ratio >= MATCH and (best is None or ratio > best[0]):
                best = (ratio, i, size)
        if best is not None:
            found.append((best[0], best[1], best[1] + best[2], env))
    taken: list[tuple[int, int, str]] = []
    for _, start, end, env in sorted(found, key=lambda f: -f[0]):
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, env))
    return sorted(taken)


def _windows(n: int, size: int) -> list[tuple[int, int]]:
    """(first word, length) of every stretch an action phrase of ``size`` words may fill.

    A typo may glue two words ("areplacement") or split one ("ge4t everythng"), so the
    phrase is compared with stretches one word shorter and longer too; the best match wins,
    which keeps the word before a glued phrase ("ago, find areplacement 4") in its step.
    """
    sizes = [k for k in (size, size - 1, size + 1) if k >= 1]
    return [(i, k) for k in sizes for i in range(n - k + 1)]


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
        body = _without_joiner(body)
        body = step_text(" ".join(body.split()))
        steps.append(Step(env=env, text=body, goal=goal_words(body)))
    return steps


def _without_joiner(body: str) -> str:
    """A step's words without the "and" (or a typo of it: "ad", "annd") joining the next step."""
    body = re.sub(r"(?:,|\s+&)?\s*$", "", body.strip()).strip()
    last = body.rsplit(None, 1)
    if len(last) == 2 and (last[1].lower() in ("and", "ad", "an", "nd") or similar_and(last[1])):
        body = last[0]
    return body.rstrip(" ,")


def goal_words(text: str) -> str:
    """A step's goal without its details ("the blender" of "the blender (order 1-2-3)")."""
    return _DETAIL.split(text, maxsplit=1)[0].strip(" ,")


def step_text(text: str) -> str:
    """A step's words with a glued detail pulled apart ("setupunder $67" → "setup under $67")."""
    return re.sub(r"(?<=[a-z])(under|for)(?=\s+\$\d)", r" \1", text)
