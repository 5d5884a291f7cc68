"""Write every registered tool's JSON Schema to ``schemas/json/tools/<name>.json``.

The committed files are what trainers and other languages read without importing shopgen;
``make schemas`` rewrites them and ``tests/env/test_tool_schemas.py`` fails when they drift
from the registry (STYLE §4, tau2's ``generate-schema`` / ``check-schema``).

Run: ``python -m shopgen.env.tools.export [OUT_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shopgen.env.tools import REGISTRY
from shopgen.schemas.json_files import json_text, packaged_dir, sync_dir


def schema_texts() -> dict[str, str]:
    """File name → JSON text, one per registered tool, in a stable byte form."""
    return {f"{name}.json": json_text(REGISTRY[name].schema) for name in sorted(REGISTRY)}


def default_dir() -> Path:
    """``schemas/json/tools`` of the installed package."""
    return packaged_dir("tools")


def export(out: Path | None = None) -> list[Path]:
    """Write the schema files (removing stale ones of tools that no longer exist)."""
    return sync_dir(out or default_dir(), schema_texts())


if __name__ == "__main__":
    paths = export(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(f"wrote {len(paths)} tool schemas to {paths[0].parent if paths else '-'}")
