"""Option types every command shares, so one flag means one thing everywhere."""

from __future__ import annotations

import click

#: Seeds are keyed into 64-bit streams (``shopgen.gen.seeding``): larger ones cannot be used,
#: and Click says so in one line instead of an overflow deep inside generation.
SEED = click.IntRange(0, 2**63 - 1)
