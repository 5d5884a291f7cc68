"""Reward composition shared by every environment (DESIGN §9).

``reward = −1`` on a protocol failure (an unreadable call, a tool that does not exist or that
the environment does not offer); otherwise ``clip(0.75·r_task + 0.15·r_eff + 0.10·r_hall, −1, 1)``.

- ``r_task ∈ [−1, 1]`` comes from the environment's verifier.
- ``r_eff ∈ [0, 1]`` is 1 when the episode took no more assistant turns than the oracle needed
  (stored in the goal as ``min_turns``) and falls linearly to 0 at ``T_max + 1``. It is paid
  only when ``r_task > 0``: finishing fast is worth nothing when nothing was achieved, so
  "stop after one turn" cannot collect it.
- ``r_hall ∈ [−1, 0]`` is minus the share of product ids the agent used that no tool had shown.

So the maximum reward of any task is :data:`MAX_REWARD` = 0.90, and the oracle reaches it.
``is_correct`` is the environment's exact predicate, and no protocol failure, and no
hallucinated id: consistent with the formula, a correct episode has ``r_task = 1`` and
``r_hall = 0``.
"""

from __future__ import annotations

from typing import Any

from shopgen.env.state import EpisodeState
from shopgen.env.verifier import Score
from shopgen.schemas.task import TaskRow
from shopgen.verifiers.rows import PerObject, decoded

W_TASK, W_EFF, W_HALL = 0.75, 0.15, 0.10
MAX_REWARD = W_TASK + W_EFF


def r_eff(turns: int, *, min_turns: int, T_max: int) -> float:
    """Efficiency: 1 at or below the oracle's turn count, 0 at ``T_max + 1``."""
    if turns <= min_turns:
        return 1.0
    return max(0.0, 1.0 - (turns - min_turns) / (T_max - min_turns + 1))


def r_hall(state: EpisodeState) -> float:
    """Minus the share of used product ids that no tool had shown when they were used."""
    if not state.used_ids:
        return 0.0
    return -len(state.unshown_used_ids) / len(state.used_ids)


def _make_turn_terms(task: TaskRow) -> tuple[int, int]:
    """A row's (min_turns, T_max): what :func:`r_eff` reads of it.

    The goal is read through :func:`~shopgen.verifiers.rows.decoded`, whose decoding every
    verifier shares: a new row (the task pipeline's proof) decodes its goal once, not twice.
    """
    return int(decoded(task, "goal").get("min_turns", 1)), task.axis("T_max")


#: Per (frozen) task row: one identity look-up instead of hashing its goal text and reading θ.
_turn_terms = PerObject(_make_turn_terms, limit=1024)


#: An environment's own judgement of an episode: (r_task, correct, details), before the shared
#: terms. ``details`` may be remembered by the verifier that made it: read it, never change it.
Verdict = tuple[float, bool, dict[str, Any]]


def as_asked(
    verdict: Verdict, needed: frozenset[str], state: EpisodeState, *, before: int | None = None
) -> Verdict:
    """``verdict`` when the customer was asked for every slot in ``needed``, else a guess.

    What the customer states only when asked, an agent that never asked could only guess:
    however well the guess matches, it earns at most 0 and is not correct (bundle,
    discovery and substitution; ``details["asked"]`` says so; a cart checks each line,
    ``verifiers.cart``). Only answers heard in turns before ``before`` (the turn of the
    graded list) count: a list recommended first and asked about after, in the same turn or
    a later one, was still a guess, and was correct on 43 of 295 withheld bundle lists (5k
    products, d = 0–12).
    """
    if needed <= state.answered_slots(before=before):
        return verdict
    return guessed(verdict)


def guessed(verdict: Verdict) -> Verdict:
    """``verdict`` of a guess: at most 0, not correct, ``details["asked"]`` False."""
    r_task, _, details = verdict
    return min(r_task, 0.0), False, {**details, "asked": False}


def protocol_failure(state: EpisodeState) -> str | None:
    """The first protocol failure of the episode as ``"kind: message"``, or None.

    Read from the runtime's own label (``ErrorRecord.protocol``, ``info.errors``), so the
    label and the reward never disagree.
    """
    for e in state.errors:
        if e.protocol:
            return f"{e.kind}: {e.message}"
    return None


def task_terms(r_task: float, correct: bool, *, hall: float, failed: bool) -> tuple[float, bool]:
    """The (r_task, is_correct) a :class:`Score` carries for a verdict (see :func:`compose`).

    Apart from :func:`compose` so that ``journey`` can weigh its steps' verdicts exactly as
    their own Scores would, without composing one per step: r_task is rounded only when no
    protocol failure voided the episode, and correctness reads the unrounded value.

    Raises:
        ValueError: ``r_task`` is outside [-1, 1].
    """
    if not -1.0 <= r_task <= 1.0:
        raise ValueError(f"r_task={r_task} outside [-1, 1]")
    if failed:
        return r_task, False
    return _round6(r_task), bool(correct and r_task == 1.0 and hall == 0.0)


def _round6(value: float) -> float:
    """``round(value, 6)``, skipped for a whole float (most r_task are ±1), which it returns as is.

    ``round`` with digits goes through a decimal conversion (~0.2 µs); a whole float, -0.0
    included, rounds to itself.
    """
    return value if type(value) is float and value.is_integer() else round(value, 6)


def compose(
    task: TaskRow, state: EpisodeState, r_task: float, correct: bool, details: dict[str, Any]
) -> Score:
    """The episode's :class:`Score` from the environment's verdict and the shared terms.

    ``details`` becomes the Score's own: the runtime hands it to its caller uncopied, so a
    verifier passes details it does not keep (a remembered verdict's are copied first).
    """
    hall = r_hall(state)
    failure = protocol_failure(state)
    task_r, is_correct = task_terms(r_task, correct, hall=hall, failed=failure is not None)
    if failure is not None:
        details = {**details, "protocol_failure": failure}
        return Score(
            reward=-1.0, r_task=task_r, r_eff=0.0, r_hall=hall, is_correct=False, details=details
        )
    min_turns, t_max = _turn_terms(task)
    eff = r_eff(state.turns, min_turns=min_turns, T_max=t_max) if r_task > 0 else 0.0
    reward = max(-1.0, min(1.0, W_TASK * r_task + W_EFF * eff + W_HALL * hall))
    return Score(
        reward=round(reward, 6),
        r_task=task_r,
        r_eff=round(eff, 6),
        r_hall=round(hall, 6),
        is_correct=is_correct,
        details=details,
    )
