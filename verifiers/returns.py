"""Verifier of ``returns`` (see ``shopgen.gen.tasks.returns`` for the task).

What the agent did is read from ``state.extra``, where ``return_start`` and ``exchange_start``
record every started return (``returns``) and exchange (``exchanges``); what it said is read
from the final message only when the item is not eligible.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.gen.tasks.returns import start_facts_to_ask
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import Verdict, compose
from shopgen.verifiers.rows import PerObject, decoded
from shopgen.verifiers.text import not_eligible_stated, refusal_reasons_stated

_CHECKS = ("return_check_eligibility", "return_start", "exchange_start")


def started(state: EpisodeState) -> list[tuple[str, dict[str, Any]]]:
    """Every return and exchange the agent started, as (action, record)."""
    out = [("return", r) for r in state.extra.get("returns", [])]
    return out + [("exchange", r) for r in state.extra.get("exchanges", [])]


def _variant_ok(record: dict[str, Any], goal: dict[str, Any], variants: dict[str, Any]) -> bool:
    new = variants.get(record.get("new_variant_id"))
    if new is None:
        return False
    return all(new.get(axis) == value for axis, value in goal["exchange"].items())


def _eligible_parts(
    goal: dict[str, Any], done: list[tuple[str, dict[str, Any]]], variants: dict[str, Any]
) -> dict[str, bool]:
    action, rec = done[0]
    parts = {
        "line": (rec["order_id"], rec["line_no"]) == (goal["order_id"], goal["line_no"]),
        "action": action == goal["action"],
        "reason": rec["reason"] == goal["reason"],
    }
    if goal["action"] == "return":
        parts["method"] = action == "return" and rec.get("method") == goal["method"]
    else:
        parts["variant"] = action == "exchange" and _variant_ok(rec, goal, variants)
    parts["only_one"] = len(done) == 1
    return parts


def _facts_to_ask(task: TaskRow) -> frozenset[str]:
    goal = decoded(task, "goal")
    slots = {slot["name"]: slot for slot in decoded(task, "user_script")["slots"]}
    return frozenset(start_facts_to_ask(goal, slots))


#: Per (frozen) task row: the facts its start needs asked (``start_facts_to_ask``).
_to_ask = PerObject(_facts_to_ask)


def _order_of(args: dict[str, Any]) -> Any:
    """The order a call names, as the tools read it (they strip blanks around the id)."""
    order_id = args.get("order_id")
    return order_id.strip() if isinstance(order_id, str) else order_id


def _checked(state: EpisodeState, goal: dict[str, Any]) -> bool:
    """The agent checked the target line, and only lines of orders the customer can mean.

    A check is ``return_check_eligibility`` or a refused start. A refusal names no line, so
    one said after checking every line of every order is right only when the target's reason
    happens to be the one said (the window, mostly): asking about orders the customer cannot
    mean is fishing, not checking. The orders the words can mean are the goal's
    ``holder_ids`` (the target's order when it was named by number). Only checks in turns
    before the refusal's own count: one made in the message that refuses came too late.
    """
    meant = {goal["order_id"], *goal.get("holder_ids", ())}
    target = False
    for _, name, args in state.calls_before(state.turns):
        if name not in _CHECKS:
            continue
        order_id = _order_of(args)
        if order_id not in meant:
            return False
        target = target or (
            order_id == goal["order_id"] and args.get("product_id") == goal["product_id"]
        )
    return target


@lru_cache(maxsize=4096)
def _refusal_stated(text: str, title: str | None) -> tuple[frozenset[str], bool]:
    """The refusal reasons ``text`` names, and whether it says the item is not eligible.

    The item's ``title`` (when the goal holds it) is no reason however it is worded. A pure
    function of its arguments, remembered: scoring replays the same final messages, and
    reading them is most of grading a refusal.
    """
    titles = (title,) if title else ()
    return frozenset(refusal_reasons_stated(text, titles)), not_eligible_stated(text)


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Grade the started return/exchange, or the refusal message when the item is not eligible."""
    goal = decoded(task, "goal")
    done = started(state)
    text = state.final_text or ""
    if goal["eligible"]:
        if not done:
            return -1.0, False, {"started": 0}
        variants = decoded(task, "episode").get("variant_attrs", {})
        parts = _eligible_parts(goal, done, variants)
        parts["asked"] = _to_ask(task) <= state.answered_slots(before=done[0][1].get("turn"))
    else:
        reasons, said_not_eligible = _refusal_stated(text, goal.get("title"))
        parts = {
            "nothing_started": not done,
            "checked": _checked(state, goal),
            "said_not_eligible": said_not_eligible,
            "reason": reasons == {goal["refusal"]},
        }
        # Saying "not eligible" without asking the store about the line is a guess: it earns
        # nothing even when it happens to be right; starting anything is the worst outcome.
        told = parts["said_not_eligible"] and parts["reason"]
        r_task = (
            -1.0 if done or not text.strip() else (-0.5 if not told else float(parts["checked"]))
        )
        return r_task, all(parts.values()), {"parts": parts}
    # The request's own parts (line, action, reason, method or variant) give r_task: "only
    # one started" is no part a single start could get wrong for free (it made a start with
    # the reason and method both wrong worth 3/5), but a start the customer did not ask for
    # leaves at most 0, and so does a start whose left-out facts (the method, always) were
    # guessed, not asked: a right guess of the method scored as asking did in half the starts.
    graded = [ok for name, ok in parts.items() if name not in ("only_one", "asked")]
    r_task = 2 * sum(graded) / len(graded) - 1 if parts["line"] else -1.0
    if not (parts["only_one"] and parts["asked"]):
        r_task = min(r_task, 0.0)
    return r_task, all(parts.values()), {"parts": parts}


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))
