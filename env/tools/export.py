"""Write every registered tool's JSON Schema to ``schemas/json/tools/<name>.json``.

The committed files are what trainers and other languages read without importing shopgen;
``make schemas`` rewrites them and ``tests/env/test_tool_schemas.py`` fails when they drift
from the registry (STYLE §4, tau2's ``generate-schema`` / ``check-schema``).

Run: ``python -m shopgen.env.tools.export [OUT_DIR]``.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from shopgen.env.tools import REGISTRY


def schema_texts() -> dict[str, str]:
    """File name → JSON text, one per registered tool, in a stable byte form."""
    return {
        f"{name}.json": json.dumps(REGISTRY[name].schema, indent=2, ensure_ascii=False) + "\n"
        for name in sorted(REGISTRY)
    }


def default_dir() -> Path:
    """``schemas/json/tools`` of the installed package (the source tree in an editable install)."""
    return Path(str(resources.files("shopgen.schemas"))) / "json" / "tools"


def export(out: Path | None = None) -> list[Path]:
    """Write the schema files (removing stale ones of tools that no longer exist)."""
    out = out or default_dir()
    out.mkdir(parents=True, exist_ok=True)
    texts = schema_texts()
    for stale in out.glob("*.json"):
        if stale.name not in texts:
            stale.unlink()
    written = []
    for name, text in texts.items():
        path = out / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    paths = export(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(f"wrote {len(paths)} tool schemas to {paths[0].parent if paths else '-'}")
