"""Option types every command shares, so one flag means one thing everywhere."""

from __future__ import annotations

import click

from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.errors import ConfigError

#: Seeds are keyed into 64-bit streams (``shopgen.gen.seeding``): larger ones cannot be used,
#: and Click says so in one line instead of an overflow deep inside generation.
SEED = click.IntRange(0, 2**63 - 1)

#: What ``--env`` accepts, for its help text.
ENV_HELP = f"One of {', '.join(ENV_NAMES)}; several joined by commas; or all."


def parse_envs(text: str) -> list[str]:
    """``--env``: ``all``, one environment, or several joined by commas, as names in order.

    Raises:
        ConfigError: a name is no environment, or none is given.
    """
    if text.strip() == "all":
        return list(ENV_NAMES)
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in ENV_NAMES] or ([] if names else [""])
    if unknown:
        raise ConfigError(
            f"--env {text!r}: {unknown[0]!r} is not an environment; give all, one of "
            f"{', '.join(ENV_NAMES)}, or several joined by commas"
        )
    return list(dict.fromkeys(names))
