"""Heuristic agent for ``bundle``: learn the kinds, search each, pick the cheapest in-stock of each.

The kinds come from the first message ("…, and all I need is a tent and a lantern") or,
when it names only the project, from the customer's answer to "which items do you need",
worded as "the must-have is tent, …" or as a bare list, typos and all. A customer may add a
kind or change the budget mid-way ("the must-have should be lantern", "actually make it $320");
every message the customer sends is read for that.

A card is of the wanted kind when its title names the kind as a phrase ("sleeping bag", not
"bag" alone): stray cheap cards of other kinds that share a word ("chest" in a shirt's "Chest
Pocket") are never picked. A kind the customer misspelt is matched to the phrase the shown
titles use (:func:`resolve`), and searched again by that phrase when a turn is left, so the
cheapest true match is among the cards.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.cart_text import _phrase_end
from shopgen.policies.heuristic.common import MONEY_RE, cards, money, reply_text
from shopgen.policies.heuristic.turns import SAFE_TURNS, Turns

#: What the agent asks when the customer named only the project.
ASK_LIST = "Which items do you need?"
#: How close a word must be to be taken for another despite typos (difflib ratio).
CLOSE = 0.75
#: Share of a title phrase's letters a customer's words must hold for it to be that kind.
CONTAINED = 0.75
_END = re.compile(
    r"(?:[.!?](?:\s|$)|,\s+(?:no|today)\b|\s+(?:pls|thx)\b|\s+(?:can we|thank you|i think)\b)",
    re.I,
)
#: What introduces the list in a first message: "all I need is" (bundle 1.2 on), or the
#: older "it has to include" of rows made before.
_LIST_LEADS = (("all", "i", "need", "is"), ("has", "to", "include"))
_MAKE_IT = re.compile(r"\bmake it\s+(.+?)(?:[.!?](?:\s|$)|$)", re.I)
_LEAD = re.compile(
    r"^(?:oh|sure|yes|of course|ah, good question, i totally forgot to mention it!?|"
    r"no, that's not right|no, is not this\.?|actually|no|okay|ok|wrong\.?)\s*[,:!.]?\s*",
    re.I,
)


def _bare(word: str) -> str:
    return re.sub(r"[^a-z0-9-]", "", word.lower())


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio()


def _is_and(word: str) -> bool:
    w = _bare(word)
    return (
        w in ("and", "&")
        or sorted(w) == sorted("and")
        or (len(w) == 4 and _ratio(w, "and") >= 0.85)
    )


def _is_label(word: str) -> bool:
    """A "must-have" as typed (typos, a merged "is": "musth-ave", "must-haveis")."""
    w = _bare(word).replace("-", "")
    return _ratio(w[:9], "musthave") >= 0.6 and any(x in w for x in ("av", "hv", "ha", "ve"))


def must_haves(text: str) -> list[str]:
    """Kinds listed after "all I need is" (or "has to include"): "a towel set and candle"."""
    words = text.split()
    for i in range(len(words)):
        for lead in _LIST_LEADS:
            said = [_bare(w) for w in words[i : i + len(lead)]]
            if len(said) == len(lead) and _ratio(" ".join(said), " ".join(lead)) >= CLOSE:
                rest = " ".join(words[i + len(lead) :])
                cut = _END.search(rest)
                return split_list(rest[: cut.start()] if cut else rest)
    return []


def split_list(text: str) -> list[str]:
    """Items of "a, b and c" (an "and" typed "nad" too) without articles or amounts."""
    out: list[str] = []
    for chunk in re.split(r"\s*[,;]+\s*", text):
        words: list[str] = []
        for w in [*chunk.split(), "and"]:
            if _is_and(w):
                item = re.sub(r"^(?:an?|the|some)\s+", "", " ".join(words), flags=re.I)
                item = item.strip(" .!?:")
                if item and not MONEY_RE.search(item):
                    out.append(item)
                words = []
            else:
                words.append(w)
    return out


def said_kinds(text: str, exclude: str = "", *, unprompted: bool = False) -> list[str]:
    """Kinds an answer or change of mind names ("the must-have is tent, …" or "tent, mat").

    In "the <label> is <value>" answers only must-have values count (not "the project is
    …"); a bare list drops items the first message already said (``exclude``: the project).
    An ``unprompted`` message (a change of mind) is read only for must-have values and
    "make it …", never as a bare list: its other words are the customer's manners.
    """
    words = text.split()
    labels = [i for i, w in enumerate(words) if _is_label(w)]
    if labels:
        out = []
        for j, i in enumerate(labels):
            start = i + 1
            while start < len(words) and _bare(words[start]) in ("should", "be", "now", ""):
                start += 1  # "should be", "is now", "→"
            if (
                start < len(words)
                and not _bare(words[i]).endswith("s")
                and len(_bare(words[start])) <= 3
            ):
                start += 1  # "is" typed on its own ("iis", "os", "s")
            while start < len(words) and _bare(words[start]) in ("be", "now"):
                start += 1
            stop = labels[j + 1] if j + 1 < len(labels) else len(words)
            out += _value(words[start:stop], last=j + 1 == len(labels))
        return [_added(k) for k in out if not MONEY_RE.search(k)]
    made = _MAKE_IT.search(text)
    if made:
        return (
            [] if MONEY_RE.search(made.group(1)) else list(map(_added, split_list(made.group(1))))
        )
    if unprompted or re.search(r"\b(?:don'?t know|no idea|not sure|idk)\b", text, re.I):
        return []
    body = _LEAD.sub("", text.strip())
    cut = _END.search(body)
    body = body[: cut.start()] if cut else body
    said = _compact(exclude)
    return [k for k in split_list(body) if not (said and _compact(k) in said)]


def _added(kind: str) -> str:
    """A kind without the "as well" an added must-have is said with (typos and all)."""
    cut = _phrase_end(kind, ("as well",), tail=True)
    return kind[:-cut].strip() if cut and cut < len(kind) else kind


def _value(words: list[str], *, last: bool) -> list[str]:
    """The value in the words after a "must-have is": up to a comma, a "the", an "and"."""
    out: list[str] = []
    for w in words:
        if out and re.search(r"[,.!?;]$", out[-1]):
            break
        out.append(w)
    while (
        len(out) > 1
        and not re.search(r"[,.!?;]$", out[-1])
        and (
            _is_and(out[-1]) or (len(_bare(out[-1])) <= 4 and _ratio(_bare(out[-1]), "the") >= 0.6)
        )
    ):
        out.pop()  # the "and the" before the next must-have
    text = " ".join(out)
    if last:
        cut = _END.search(text)
        text = text[: cut.start()] if cut else text
    return split_list(text)


def last_budget(texts: list[str]) -> float | None:
    """The last dollar amount the customer said (a changed budget replaces the first)."""
    amounts = [money(m.group(0)) for t in texts for m in MONEY_RE.finditer(t)]
    return amounts[-1] if amounts else None


def names_kind(kind: str, title: str) -> bool:
    """Whether ``title`` names ``kind`` as a phrase (plural ``s`` allowed on the last word)."""
    pattern = r"\b" + r"\s+".join(re.escape(w) for w in kind.lower().split()) + r"s?\b"
    return re.search(pattern, title.lower()) is not None


def _compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def resolve(kind: str, shown: list[dict[str, Any]]) -> str:
    """The phrase shown titles use for ``kind``, read through its typos and slipped spaces.

    A title phrase of one to four words is the kind when it and the customer's words share
    most of their letters in order ("gaminh keybaord", "mirrorelessc amera"); the phrase with
    the most letters shared and fewest of its own unshared wins (ties: more titles, then the
    phrase). ``kind`` itself, lower case, when a title names it or nothing fits.
    """
    low = kind.lower()
    if any(names_kind(low, str(c.get("title", ""))) for c in shown):
        return low
    said = _compact(kind)
    grams: Counter[str] = Counter()
    for card in shown:
        words = re.findall(r"[a-z0-9]+", str(card.get("title", "")).lower())
        grams.update(
            {" ".join(words[i : i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}
        )
    best: tuple[int, int, str] | None = None
    for gram, count in grams.items():
        letters = _compact(gram)
        if not 4 <= len(letters) <= len(said) + 2 or len(set(letters) - set(said)) > 2:
            continue
        held = sum(
            b.size
            for b in SequenceMatcher(None, letters, said, autojunk=False).get_matching_blocks()
        )
        if held >= CONTAINED * max(len(letters), len(said)):
            key = (2 * held - len(letters), count, gram)
            best = key if best is None or key > best else best
    return best[2] if best else low


def cheapest(kind: str, shown: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cheapest in-stock card of ``kind`` (ties: better rating, then id)."""
    fits = [c for c in shown if c.get("stock_qty") and names_kind(kind, c.get("title", ""))]
    return min(fits, key=lambda c: (c["price"], -c.get("rating", 0), c["product_id"]), default=None)


def heuristic(task: PublicTask) -> Oracle:
    """Play a bundle task from the public view only."""
    turns = Turns()
    kinds = must_haves(task.user)
    heard: list[str] = []
    if not kinds:
        (answer,) = yield from turns.run([call("ask_user", question=ASK_LIST)])
        reply = reply_text([answer or {}])
        heard.append(reply)
        kinds = said_kinds(reply, exclude=task.user)
    shown: dict[str, list[dict[str, Any]]] = {}
    read = 0
    while True:
        fresh, read = turns.said[read:], len(turns.said)
        heard += fresh
        kinds += [k for t in fresh for k in said_kinds(t, unprompted=True) if k not in kinds]
        todo = [k for k in kinds if k not in shown]
        if not todo:
            break
        found = yield from turns.run([call("catalog_search", query=k) for k in todo])
        for kind, result in zip(todo, found, strict=True):
            shown[kind] = cards([result or {}])
    picks = yield from _pick_all(turns, kinds, shown)
    heard += turns.said[read:]
    budget = last_budget([task.user, *heard])
    chosen = [p for p in picks if p is not None]
    if not chosen:
        yield "Sorry, I could not find any of those items in stock."
        return
    yield [call("recommend_products", product_ids=[c["product_id"] for c in chosen])]
    total = sum(c["price"] for c in chosen)
    over = budget is not None and total > budget + 1e-9
    yield (
        "Here is your set: "
        + "; ".join(f"{c['title']} (${c['price']:.2f})" for c in chosen)
        + f". Total ${total:.2f}"
        + (f", over your budget of ${budget:.2f}, the cheapest I found." if over else ".")
    )


def _pick_all(turns: Turns, kinds: list[str], shown: dict[str, list[dict[str, Any]]]) -> Any:
    """The cheapest in-stock card of each kind; misspelt kinds searched again by their fix."""
    fixed = {k: resolve(k, shown[k]) for k in kinds}
    again = [k for k in kinds if fixed[k] != k.lower()]
    if again and turns.left(SAFE_TURNS) > 0:
        found = yield from turns.run(
            [call("catalog_search", query=fixed[k]) for k in again], max_turns=turns.left()
        )
        for kind, result in zip(again, found, strict=True):
            shown[kind] = shown[kind] + cards([result or {}])
    return [cheapest(fixed[k], shown[k]) for k in kinds]
