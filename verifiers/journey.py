"""Verifier of ``journey`` (see ``shopgen.gen.tasks.journey`` for the task)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.gen.tasks.journey import sub_task
from shopgen.schemas.envs import env_spec, load_entry_point
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.reward import compose

_PARAGRAPHS = re.compile(r"\n\s*\n")


def step_state(state: EpisodeState, i: int, text: str | None) -> EpisodeState:
    """The shared final state as step ``i``'s verifier reads it.

    Its text is ``text``; the questions the customer answered name this step's slots as the
    sub-environment calls them (``steps.1.tier`` → ``tier``).
    """
    prefix = f"steps.{i}."
    questions = [
        {
            **q,
            "answered": [
                a.removeprefix(prefix) for a in q.get("answered", []) if a.startswith(prefix)
            ],
        }
        for q in state.extra.get("questions", [])
    ]
    return dataclasses.replace(
        state, final_text=text, extra={**state.extra, "questions": questions}
    )


def texts(final: str | None, n: int) -> list[str | None]:
    """Each step's text: its own paragraph when there is one per step, else the whole message.

    Grading a step on its own paragraph keeps another step's numbers or dates from
    contradicting it; the whole-message fallback is never easier (more text, more conflicts).
    """
    parts = [p for p in _PARAGRAPHS.split(final or "") if p.strip()]
    return parts if len(parts) == n else [final] * n


def verify(task: TaskRow, state: EpisodeState, transcript: list[dict[str, Any]]) -> Score:
    """Mean of the steps' r_task, each graded by its own environment's verifier."""
    steps = task.decoded("goal")["steps"]
    per_step = texts(state.final_text, len(steps))
    scores = []
    for i, step in enumerate(steps):
        sub_verify = load_entry_point(env_spec(step["env"]).verifier)
        scores.append(
            sub_verify(sub_task(task, step), step_state(state, i, per_step[i]), transcript)
        )
    r_task = sum(s.r_task for s in scores) / len(scores)
    details = {
        "steps": [
            {"env": st["env"], "r_task": s.r_task, "is_correct": s.is_correct}
            for st, s in zip(steps, scores, strict=True)
        ]
    }
    return compose(
        task, state, r_task=r_task, correct=all(s.is_correct for s in scores), details=details
    )
