"""θ(d): one integer dial d ≥ 0 mapped to the twelve difficulty axes of DESIGN §5.

The formulas are fixed for comparability with EcomRLVE-GYM, so they are written out here once
and tested against the table for d = 0..30. Any axis can be overridden by name (an ablation
that holds ``p_noise`` at 0 while ``d`` rises, for instance); an unknown name is an error, not
a silently ignored keyword.

Environment-specific schedules (how many items a cart task holds, how often a return is an
edge case, how long a journey is) are in :mod:`shopgen.gen.schedules`, each a named function
of d beside these axes.

>>> t = theta(5)
>>> (t.m, t.k_rec, t.T_max, t.top_k)
(4, 4, 6, 150)
>>> theta(5, p_noise=0.0).p_noise
0.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from shopgen.schemas.errors import ConfigError

#: The deepest retrieval catalog search accepts (θ's own top_k is at most 200), and the
#: longest list a task may ask for (its k_rec is at most 10).
MAX_TOP_K = 1000
#: Axis name → (kind, low, high). Integer axes are counts; float axes are probabilities.
_BOUNDS: dict[str, tuple[type, float, float]] = {
    "m": (int, 0, math.inf),
    "k_rec": (int, 1, MAX_TOP_K),
    "T_max": (int, 1, math.inf),
    "p_missing": (float, 0.0, 1.0),
    "p_noise": (float, 0.0, 0.5),
    "p_switch": (float, 0.0, 1.0),
    "top_k": (int, 1, MAX_TOP_K),
    "eps_rank": (float, 0.0, 1.0),
    "p_oos": (float, 0.0, 1.0),
    "H_orders": (int, 0, math.inf),
    "B_branch": (int, 1, math.inf),
    "B_tool": (int, 1, math.inf),
}


def sigmoid(x: float) -> float:
    """The logistic function, written so large |x| never overflows."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@dataclass(frozen=True, kw_only=True)
class Theta:
    """The twelve axes for one difficulty level; validated at construction.

    Attributes:
        m: constraints in the goal.
        k_rec: items to recommend.
        T_max: maximum assistant turns.
        p_missing: probability an optional slot is left out of the first message.
        p_noise: per-character typo rate of user text.
        p_switch: probability the user changes intent mid-conversation.
        top_k: retrieval depth of catalog search.
        eps_rank: probability a search hit is replaced by a same-category distractor.
        p_oos: probability a relevant product is out of stock in the episode.
        H_orders: orders in the customer's history.
        B_branch: clauses in the policy rule being asked about.
        B_tool: tool calls allowed per assistant turn.
    """

    m: int
    k_rec: int
    T_max: int
    p_missing: float
    p_noise: float
    p_switch: float
    top_k: int
    eps_rank: float
    p_oos: float
    H_orders: int
    B_branch: int
    B_tool: int

    def __post_init__(self) -> None:
        for name in _BOUNDS:
            object.__setattr__(self, name, check_axis(name, getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        """The axes as a plain dict in table order (what a task row stores as ``theta``)."""
        return {name: getattr(self, name) for name in AXES}


AXES: tuple[str, ...] = tuple(f.name for f in fields(Theta))


def check_axis(name: str, value: object) -> int | float:
    """``value`` as θ axis ``name`` holds it (an int for counts), or a ConfigError saying why not.

    Infinity and NaN are no values: a count of infinite turns failed in ``int()``.
    """
    kind, low, high = _BOUNDS[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{name}={value!r} must be a finite number")
    if kind is int and value != int(value):
        raise ConfigError(f"{name}={value!r} must be a whole number")
    if not low <= value <= high:
        raise ConfigError(f"{name}={value!r} must be between {low} and {high}")
    return kind(value)


def check_d(d: object) -> int:
    """``d`` if it is a non-negative integer, else a ConfigError that shows it."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 0:
        raise ConfigError(f"d={d!r} must be an integer >= 0")
    return d


def theta(d: int, **overrides: float) -> Theta:
    """The difficulty axes at level ``d`` with exactly the formulas of DESIGN §5.

    Args:
        d: the difficulty dial, an integer ≥ 0.
        **overrides: axis name → value, replacing the formula for that axis.

    Returns:
        A frozen :class:`Theta`.

    Raises:
        ConfigError: ``d`` is negative or not an integer, an override names no axis, or an
            override is out of its range.
    """
    check_d(d)
    unknown = sorted(set(overrides) - set(AXES))
    if unknown:
        raise ConfigError(f"unknown difficulty axis {unknown[0]!r} (axes: {', '.join(AXES)})")
    values: dict[str, float] = {
        "m": 2 + d // 2,
        "k_rec": min(10, 3 + d // 3),
        "T_max": 4 + d // 2,
        "p_missing": 0.8 * sigmoid((d - 3) / 1.5),
        "p_noise": min(max(0.01 * d, 0.0), 0.125),
        "p_switch": 0.6 * sigmoid((d - 5) / 2),
        "top_k": max(20, 200 - 10 * d),
        "eps_rank": min(0.4, 0.02 * d),
        "p_oos": min(0.5, 0.05 * d),
        "H_orders": 1 + d // 2,
        "B_branch": 1 + d // 3,
        "B_tool": 1 + d // 2,
    }
    values.update(overrides)
    return Theta(**values)


def parse_d_range(text: str) -> list[int]:
    """Read ``5``, ``0-12`` or ``0,3,6`` as a list of difficulty levels, each once.

    A level named twice (``5,5``, ``0-12,3``) is listed once, where first named: a task set
    holding each of its tasks twice would count them twice (``pass^k`` over copies).

    >>> parse_d_range("0-3")
    [0, 1, 2, 3]
    >>> parse_d_range("3,0-4")
    [3, 0, 1, 2, 4]
    """
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            first, last = (int(lo), int(hi)) if sep else (int(part), int(part))
        except ValueError:
            raise ConfigError(
                f"d={text!r} is not a level or range (use 5, 0-12 or 0,3,6)"
            ) from None
        if first < 0 or last < first:
            raise ConfigError(f"d={text!r}: a range must be low-high with 0 <= low <= high")
        if len(out) + last - first + 1 > MAX_LEVELS:
            raise ConfigError(f"d={text!r} lists more than {MAX_LEVELS} levels")
        out.extend(range(first, last + 1))
    return list(dict.fromkeys(out))


#: Most levels one ``--d`` may list: every level is generated or printed, so a typo such
#: as ``0-100000000`` would otherwise run for hours.
MAX_LEVELS = 1000
