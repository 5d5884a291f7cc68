"""What a task row must hold for play to read it, checked without a catalog.

``ShopEnv.reset`` refuses a row these name a problem in (``TaskError``), and ``shopgen
validate`` lists them for every row of a task dataset. The checks cover what the runtime reads
as it plays: θ's turn, call and search axes, the episode's keys (typed by
:class:`~shopgen.schemas.task.EpisodeSpec`) and the user script
(:class:`~shopgen.schemas.task.UserScript`). A goal is read by its environment's verifier
only, which names what it cannot grade when it grades.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from shopgen.gen.difficulty import check_axis
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import EpisodeSpec, UserScript

#: θ axes every episode reads: its turns and its calls per turn.
PLAY_AXES = ("T_max", "B_tool")
#: θ axes a row offering ``catalog_search`` reads too: the retrieval depth and degradation.
SEARCH_AXES = ("top_k", "eps_rank")


def theta_problem(theta: dict[str, Any], axes: Iterable[str]) -> str | None:
    """The first of ``axes`` whose value θ does not allow, said as ``theta.<axis>=…``; or None.

    NaN, infinity and fractions passed the runtime's old ``>= 1`` test of ``T_max`` and
    failed in ``int()``; a missing ``top_k`` raised inside ``catalog_search``.
    """
    for axis in axes:
        try:
            check_axis(axis, theta.get(axis))
        except ConfigError as exc:
            return f"theta.{exc}"
    return None


def episode_problem(episode: Any) -> str | None:
    """Why the decoded ``episode`` is no :class:`EpisodeSpec`, or None.

    The tools read its keys by those types: a number for ``out_of_stock`` or a list for
    ``item_condition`` raised inside them.
    """
    if not isinstance(episode, dict):
        return "episode must be a JSON object"
    try:
        EpisodeSpec.model_validate(episode)
    except ValidationError as exc:
        return first_error(exc, "episode")
    return None


@lru_cache(maxsize=4096)
def user_script_problem(text: str) -> str | None:
    """Why the ``user_script`` JSON text is no :class:`UserScript`, or None.

    Remembered per text: a generated task is reset twice (its live run and its proof), and a
    trainer resets the same rows again and again.
    """
    try:
        UserScript.model_validate_json(text or "{}")
    except ValidationError as exc:
        return first_error(exc, "user_script")
    return None


def first_error(exc: ValidationError, name: str = "") -> str:
    """A validation error as one line, ``where: what``: its first error, placed under ``name``.

    ``row`` where the error has no place (the row as a whole).
    """
    first = exc.errors()[0]
    where = ".".join([*([name] if name else []), *map(str, first["loc"])]) or "row"
    return f"{where}: {first['msg']}"
