"""Small named checks whose errors name the field and show the value (STYLE §4)."""

from __future__ import annotations

import math
import re

from shopgen.schemas.errors import ConfigError

_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbB]?)\s*$")


def parse_count(text: str | int, *, field: str = "size") -> int:
    """Read a row count written as ``10k``, ``250k``, ``1M``, ``2.5M`` or a plain integer.

    >>> parse_count("2.5M")
    2500000
    >>> parse_count("10k")
    10000
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return check_positive(field, text)
    match = _COUNT.match(str(text))
    if not match:
        raise ConfigError(f"{field}={text!r} is not a count (use e.g. 1000, 10k, 250k, 1M, 2.5M)")
    value = float(match[1]) * _SUFFIX[match[2].lower()]
    if not math.isfinite(value) or value != math.floor(value):
        raise ConfigError(f"{field}={text!r} is not a whole number of rows")
    return check_positive(field, int(value))


def check_positive(field: str, value: int) -> int:
    """``value`` if it is > 0."""
    if value <= 0:
        raise ConfigError(f"{field}={value} must be > 0")
    return value


def check_range(field: str, value: float, low: float, high: float) -> float:
    """``value`` if ``low <= value <= high``."""
    if not low <= value <= high:
        raise ConfigError(f"{field}={value} must be between {low} and {high}")
    return value
