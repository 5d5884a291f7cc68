"""Verifier of ``journey`` (see ``shopgen.gen.tasks.journey`` for the task).

Each step is graded by its own environment's verifier on a view of the shared final state:
its paragraph of the final text, the questions named as the sub-environment calls them (for
the steps whose verifier reads them), and — for recommend-steps — the last recommendation list
that belongs to it (:func:`owned_lists`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.gen.store import BoundedCache
from shopgen.gen.tasks.journey import RECOMMEND_ENVS, sub_task
from shopgen.schemas.envs import env_spec, load_entry_point
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.layout import texts
from shopgen.verifiers.reward import Verdict, compose, protocol_failure, r_hall, task_terms
from shopgen.verifiers.rows import PerObject, decoded


def recommend_categories(step: dict[str, Any]) -> set[str]:
    """The leaf categories a recommend-step asks for (empty for other steps)."""
    goal = step["goal"]
    if step["env"] in ("discovery", "substitution"):
        return {goal["constraints"]["category"]}
    if step["env"] == "bundle":
        return {c["category"] for c in goal["categories"]}
    return set()


def owned_lists(
    steps: list[dict[str, Any]], lists: list[dict[str, Any]]
) -> dict[int, dict[str, Any]]:
    """Step index → the last recommendation list that belongs to that step.

    A list belongs to the recommend-step whose categories hold most of its products (by the
    categories the runtime recorded; ties go to the earlier step); a list holding none of any
    step's categories belongs to none. Steps' categories are disjoint by construction, so a
    right list is always owned by its own step, and a dump of every search hit is owned by one
    step at most (and graded there as the over-long list it is).
    """
    return _owned(_make_steps_of_category(steps), lists)


def _owned(
    steps_of: dict[Any, tuple[int, ...]],
    lists: list[dict[str, Any]],
    owners: BoundedCache | None = None,
) -> dict[int, dict[str, Any]]:
    """:func:`owned_lists` on the steps' category index (which a goal's steps share).

    ``owners``, when given, remembers each list's owner under its ids and the identities of
    its fact records (held with it), as :func:`shopgen.verifiers.ranking.grade` remembers
    gradings: the runtime shares one record per (product, stock), so a replayed list is
    placed without reading its records' categories again.
    """
    owned: dict[int, dict[str, Any]] = {}
    for entry in lists:
        ids = entry["product_ids"]
        facts = entry.get("facts", {})
        records = tuple(map(facts.get, ids))
        if owners is None:
            owner = _owner(steps_of, records)
        else:
            key = (tuple(ids), tuple(map(id, records)))
            hit = owners.get(key)
            if hit is None:
                hit = owners.put(key, (records, _owner(steps_of, records)))
            owner = hit[1]
        if owner is not None:
            owned[owner] = entry
    return owned


def _owner(
    steps_of: dict[Any, tuple[int, ...]], records: tuple[dict[str, Any] | None, ...]
) -> int | None:
    """The step owning a list whose products' recorded facts are ``records`` (None: none)."""
    counts: dict[int, int] = {}
    for fact in records:
        for i in steps_of.get(fact.get("category_id") if fact is not None else None, ()):
            counts[i] = counts.get(i, 0) + 1
    # Only steps holding some of the list's products can own it.
    return max(counts, key=lambda i: (counts[i], -i)) if counts else None


def _make_steps_of_category(steps: list[dict[str, Any]]) -> dict[Any, tuple[int, ...]]:
    """Leaf category → the recommend-steps asking for it, in step order."""
    index: dict[Any, list[int]] = {}
    for i, step in enumerate(steps):
        if step["env"] in RECOMMEND_ENVS:
            for cat in recommend_categories(step):
                index.setdefault(cat, []).append(i)
    return {cat: tuple(ids) for cat, ids in index.items()}


def step_questions(questions: list[dict[str, Any]], n: int, i: int) -> list[dict[str, Any]]:
    """Step ``i`` of ``n``'s view of the answered questions.

    A step's questions name only its own slots, as the sub-environment calls them
    (``steps.1.tier`` → ``tier`` for step 1); every question stays, answering what it answered
    for that step (maybe nothing). Only the steps whose verdict reads the questions
    (:data:`QUESTION_ENVS`) are given a view: building one for every step was ~3% of a
    journey play's work, for verdicts that never look.
    """
    return [
        {**q, "answered": list(_slots_by_step(tuple(q.get("answered", ())), n)[i] or ())}
        for q in questions
    ]


@lru_cache(maxsize=4096)
def _slots_by_step(names: tuple[str, ...], n: int) -> tuple[tuple[str, ...] | None, ...]:
    """Per step, the slots of ``names`` that are its own (None: none).

    A pure function of a question's answered names: a replayed episode asks the same questions,
    and splitting the names was most of :func:`step_questions`' cost.
    """
    index = {str(i): i for i in range(n)}
    answered: dict[int, list[str]] = {}
    for name in names:
        if name.startswith("steps."):
            step, dot, slot = name[6:].partition(".")
            i = index.get(step)
            if dot and i is not None:
                answered.setdefault(i, []).append(slot)
    return tuple(tuple(answered[i]) if i in answered else None for i in range(n))


_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(EpisodeState))
#: Every field of a state at once, in ``__init__`` order (one C call instead of a loop).
_state_values = operator.attrgetter(*_STATE_FIELDS)


def _replace(state: EpisodeState, **changes: Any) -> EpisodeState:
    """``dataclasses.replace(state, **changes)`` without its per-call field introspection.

    Every field is set (none has ``init=False``), so the view is the one ``replace`` makes:
    the unchanged containers shared with ``state``.
    """
    view = EpisodeState(*_state_values(state))
    for name, value in changes.items():
        setattr(view, name, value)
    return view


@lru_cache(maxsize=16)
def _sub_verdict(env: str) -> Callable[[TaskRow, EpisodeState], Verdict]:
    """The ``verdict`` beside a step's environment's verifier, imported once (not per step)."""
    module = env_spec(env).verifier.partition(":")[0]
    return load_entry_point(f"{module}:verdict")


class _Step(NamedTuple):
    """How one step of a journey row is graded."""

    env: str
    task: TaskRow  # the step's own row (:func:`sub_task`)
    verdict: Callable[[TaskRow, EpisodeState], Verdict]  # its environment's verdict
    recommends: bool  # a recommend-step, graded on the list it owns
    asks: bool  # its verdict reads the questions: given its own view (see step_questions)


class _Plan(NamedTuple):
    """What grading a journey row reads of the row, made once per (frozen) row object."""

    steps_of: dict[Any, tuple[int, ...]]  # leaf category → recommend-steps (see _owned)
    steps: tuple[_Step, ...]
    kinds: tuple[str, ...]  # the steps' environments, in order (how texts reads the answer)
    owners: BoundedCache  # a list (ids, fact records) → its owning step (see _owned)


def _make_plan(task: TaskRow) -> _Plan:
    """The row's steps with their rows and verdicts.

    Making a step's row re-encodes three JSON fields: it cost a journey's scoring more than
    grading it, so it is done once per row.
    """
    script = decoded(task, "user_script")
    steps = decoded(task, "goal")["steps"]
    return _Plan(
        _make_steps_of_category(steps),
        tuple(
            _Step(
                step["env"],
                sub_task(task, step, i, script),
                _sub_verdict(step["env"]),
                step["env"] in RECOMMEND_ENVS,
                step["env"] in QUESTION_ENVS,
            )
            for i, step in enumerate(steps)
        ),
        tuple(step["env"] for step in steps),
        BoundedCache(_OWNERS_LIMIT),
    )


_plan = PerObject(_make_plan, limit=1024)
#: The step environments whose verdict reads ``extra["questions"]`` (their "asked" part).
#: The others see the journey's questions as recorded, which they never read.
QUESTION_ENVS = frozenset({"bundle", "cart", "discovery", "policy", "returns", "substitution"})
#: Distinct recommendation lists whose owning step one journey row remembers.
_OWNERS_LIMIT = 64


def verdict(task: TaskRow, state: EpisodeState) -> Verdict:
    """Mean of the steps' r_task, each graded by its own environment's verifier.

    A step's r_task and correctness are the ones its own Score would carry
    (:func:`~shopgen.verifiers.reward.task_terms` on its verdict): the state's protocol
    failures and hallucinated ids are the journey's own, so they are read once, not
    composed into a Score per step.
    """
    plan = _plan(task)
    hall, failed = r_hall(state), protocol_failure(state) is not None
    steps = []
    total, all_correct = 0.0, True
    for step, view in zip(plan.steps, _step_views(state, plan), strict=True):
        r_task, correct, _ = step.verdict(step.task, view)
        r_task, correct = task_terms(r_task, correct, hall=hall, failed=failed)
        steps.append({"env": step.env, "r_task": r_task, "is_correct": correct})
        total += r_task
        all_correct = all_correct and correct
    return total / len(steps), all_correct, {"steps": steps}


def _step_views(state: EpisodeState, plan: _Plan) -> Iterator[EpisodeState]:
    """Step by step, the shared final state as each step's verifier reads it, as one re-pointed object.

    Each step is graded before the next view is asked for, and verdicts keep nothing of the
    state they read, so one view and one ``extra`` dict are re-pointed from step to step
    instead of a fresh state and dict per step (most of the views' cost). The step's list
    and its facts are shared, not copied: verdicts read them, never change them. Only steps
    that read the questions get their own view of them (:data:`QUESTION_ENVS`).
    """
    n = len(plan.steps)
    base = state.extra
    per_step = texts(state.final_text, plan.kinds)
    owned = _owned(plan.steps_of, base.get("recommendation_lists", []), plan.owners)
    extra = dict(base)
    view = _replace(state, extra=extra)
    viewed = False  # extra holds a step's own questions, not the state's
    for i, step in enumerate(plan.steps):
        if step.asks:
            extra["questions"] = step_questions(base.get("questions", []), n, i)
            viewed = True
        elif viewed:
            _restore(extra, base, "questions")
            viewed = False
        if step.recommends:
            listed = owned.get(i, {})
            extra["recommended_facts"] = listed.get("facts", {})
            extra["recommended_turn"] = listed.get("turn")
            view.recommendations = listed.get("product_ids", [])
        else:
            _restore(extra, base, "recommended_facts")
            _restore(extra, base, "recommended_turn")
            view.recommendations = state.recommendations
        view.final_text = per_step[i]
        yield view


def _restore(extra: dict[str, Any], base: dict[str, Any], key: str) -> None:
    """Set ``extra[key]`` back to the state's own (absent when the state has none)."""
    if key in base:
        extra[key] = base[key]
    else:
        extra.pop(key, None)


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """The episode's Score: :func:`verdict` with the shared terms."""
    return compose(task, state, *verdict(task, state))
