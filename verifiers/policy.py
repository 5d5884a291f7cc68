"""Verifier of ``policy`` (see ``shopgen.gen.tasks.policy`` for the task)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, compose
from shopgen.verifiers.rows import PerObject, decoded
from shopgen.verifiers.text import (
    PAID_SHARE_RE,
    corrections,
    fee_percents_stated,
    number_matches,
    numbers_stated,
    yes_no_stated,
    zero_offered,
    zero_stated,
)

#: Topic → what kind of value it answers, for a zero said in words (``text.ZERO_WORDS``).
ZERO_KINDS: dict[str, str] = {
    "restocking_fee": "restocking",
    "return_shipping_fee": "fee",
    "shipping_cost": "fee",
    "membership_fee": "fee",
    "free_return_threshold": "threshold",
    "free_shipping_threshold": "threshold",
    "bulk_discount": "discount",
    "warranty": "warranty",
}


def answer_right(text: str, goal: dict[str, Any], ignore: tuple[float, ...] = ()) -> bool:
    """The text states the true value and no conflicting one.

    Numbers of the answer's unit that equal a fact the customer gave (their order total,
    the days since delivery) or a threshold the policy tests (``ignore`` holds both: the
    customer's facts and the goal's ``conditions``) are a restatement, not an answer, and
    are skipped. An answer that writes no number of its unit may say zero in words ("there's
    no restocking fee", "return shipping is free"): it states 0. A percentage fee may be said
    as the share paid back ("you get 90% back" states a 10% fee), a discount as the share
    paid ("you pay 95% of the usual price" states a 5% discount). Values told as arithmetic
    on the answer ("$35.51 back", "35 days left") are the answer only when nothing else is:
    beside a stated value or a zero in words they are skipped. Zero offered as an
    alternative to a value ("either $7.99 or free") is a second value.

    A sentence that corrects what came before ("Actually, …", "Correction: …",
    :func:`~shopgen.verifiers.text.corrections`) replaces it, for a yes or no too: the answer
    is the last part that states one, and a correction that takes the answer back without
    another ("Sorry, I misspoke: I can't tell") leaves none. A correction under a condition
    ("Actually, for Premium members there's no fee") tells another case, not this one, and
    is read as the text before it.
    """
    first, *corrected = corrections(text)
    later = [part for part in corrected if not _CONDITION.search(part)]
    for part in reversed(later):
        if (right := _stated_right(part, goal, ignore)) is not None:
            return right
        if _WITHDRAWN.search(part):
            return False
    return bool(_stated_right(first, goal, ignore))


def _stated_right(text: str, goal: dict[str, Any], ignore: tuple[float, ...]) -> bool | None:
    """Whether what ``text`` states is the true answer alone; None when it states none."""
    if goal["kind"] == "boolean":
        said = yes_no_stated(text)
        return said == {bool(goal["value"])} if said else None
    unit, truth = goal["unit"], float(goal["value"])
    if values := _values_stated(text, unit, truth, goal.get("topic", ""), ignore):
        return all(number_matches(v, truth, unit=unit) for v in values)
    return None


#: A correction that takes the answer back: "Sorry, I misspoke: I can't tell what it is".
_WITHDRAWN = re.compile(
    r"\b(?:can't|cannot|can not|unable to|couldn't) (?:really )?(?:tell|say|confirm|determine"
    r"|know|be sure)\b|\b(?:not sure|unsure|no idea|disregard|ignore (?:that|this|what))\b"
    r"|\b(?:don't|do not) (?:actually |really )?know\b|\b(?:i was|that was|that's|that is) "
    r"(?:wrong|incorrect|not right|not correct)\b",
    re.I,
)


#: A condition that makes a correction tell another case than the customer's.
_CONDITION = re.compile(
    r"\b(?:if|unless|when|once|only|except)\b"
    r"|\bfor (?:\w+ ){0,2}(?:members?|customers?|orders?|items?|purchases?)\b",
    re.I,
)


def _values_stated(
    text: str, unit: str, truth: float, topic: str, ignore: tuple[float, ...]
) -> list[float]:
    """The values of ``unit`` that ``text`` states (see :func:`answer_right`)."""
    kind = ZERO_KINDS.get(topic, "")

    def told(stated: list[float]) -> list[float]:
        return [
            v
            for v in stated
            if number_matches(v, truth, unit=unit)
            or not any(number_matches(v, f, unit=unit) for f in ignore)
        ]

    if unit == "percent" and kind in ("fee", "restocking"):
        values = told(fee_percents_stated(text))
    elif unit == "percent" and kind == "discount":
        values = told(fee_percents_stated(text, PAID_SHARE_RE))
    else:
        values = told(numbers_stated(text, unit, derived=False))
    if not values and zero_stated(text, kind):
        values = [0.0]
    elif values and kind and zero_offered(text):
        values = [*values, 0.0]  # "either $7.99 or free"
    return values or told(numbers_stated(text, unit, derived=True))


@lru_cache(maxsize=4096, typed=True)
def _answer_right(
    text: str, kind: str, value: Any, unit: str | None, ignore: tuple[float, ...], topic: str
) -> bool:
    """:func:`answer_right` on the goal's answer fields, remembered.

    A pure function of them: scoring replays the same final messages, and reading numbers
    out of them is most of the grading.
    """
    return answer_right(text, {"kind": kind, "value": value, "unit": unit, "topic": topic}, ignore)


def needed_unsaid(task: TaskRow) -> list[str]:
    """Facts the deciding rule tests that the first message did not state."""
    return list(_needed_unsaid(task.goal, task.user_script))


@lru_cache(maxsize=4096)
def _needed_unsaid(goal_json: str, script_json: str) -> tuple[str, ...]:
    # Keyed by the row's JSON texts: a scored row's script is decoded once, not per episode.
    slots = {s["name"]: s for s in json.loads(script_json)["slots"]}

    def unsaid(name: str) -> bool:
        if name == "large_item" and "category" in slots:  # the message's category tells it
            return unsaid("category")
        return name in slots and (slots[name]["omitted"] or name not in _SAID_IN_MESSAGE)

    return tuple(name for name in json.loads(goal_json)["needed"] if unsaid(name))


#: Slots that can be in the first message (the policy vocabulary minus the topic).
_SAID_IN_MESSAGE = frozenset({"tier", "category", "days", "method", "order_total"})


def _asked(state: EpisodeState) -> set[str]:
    """Slots the customer answered before the final answer; the category also tells "large".

    A rule that tests only the ``large_item`` tag needs ``large_item`` (the task's
    ``needed``): "Is it a large item?" asks it, and so does the prompt's "product category".
    A question asked in the final answer's own message came too late to inform it.
    """
    asked = state.answered_slots(before=state.turns)
    return asked | {"large_item"} if "category" in asked else asked


def _task_terms(task: TaskRow) -> tuple[tuple[Any, ...], frozenset[str]]:
    """What :func:`verdict` reads of a row: the answer's fields and the facts to ask."""
    goal = decoded(task, "goal")
    # A fact restated is skipped only in its own unit: the item's $10 price hid a "10%"
    # alternative beside the true 15%.
    unit = goal.get("unit") or ""
    own = ("days",) if "days" in unit else ("order_total", "price") if "USD" in unit else ()
    ignore = tuple(
        float(v) for k, v in goal["fact_values"].items() if k in own and isinstance(v, int | float)
    ) + tuple(goal.get("conditions", ()))
    answer = (goal["kind"], goal["value"], goal.get("unit"), ignore, goal["topic"])
    return answer, frozenset(needed_unsaid(task))


#: Per (frozen) task row: a scored row is graded again and again.
_terms = PerObject(_task_terms)


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the final answer, that the policy was looked up, and that missing facts were asked."""
    answer, needed = _terms(task)
    text = state.final_text or ""
    parts = {
        "answer": bool(text.strip()) and _answer_right(text, *answer),
        "searched": any(name == "policy_search" for _, name, _ in state.calls_before(state.turns)),
        "asked": needed <= _asked(state),
    }
    # A wrong answer earns nothing for the process around it; a right answer the agent did
    # not ground (no search) or could not have known (a needed fact never asked) earns 0.
    # Both count only from the turns before the answer's own (``EpisodeState.calls_before``).
    if not text.strip():
        r_task = -1.0
    elif not parts["answer"]:
        # A wrong answer costs what a right one earns, so a guess right less than half the
        # time is worth less than nothing. A topic's commonest number is its answer in up to
        # 44% of tasks: at half that cost, guessing it after a search was worth +0.07.
        r_task = -1.0
    else:
        r_task = 1.0 if all(parts.values()) else 0.0
    return r_task, all(parts.values()), {"parts": parts}


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))
