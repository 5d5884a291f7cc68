"""A folder of generated JSON Schema files kept equal to what the code declares.

The tools' schemas (``shopgen.env.tools.export``) and the records' (``record_schemas``) are
committed under ``schemas/json/<kind>/`` so readers in other languages need not import
shopgen; ``make schemas`` rewrites them through :func:`sync_dir` and a test per kind fails
when a committed file drifts.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any


def json_text(value: Any) -> str:
    """``value`` as JSON in one stable byte form (indented, UTF-8 kept, newline-terminated)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def packaged_dir(kind: str) -> Path:
    """``schemas/json/<kind>`` of the installed package (the source tree in an editable install)."""
    return Path(str(resources.files("shopgen.schemas"))) / "json" / kind


def sync_dir(out: Path, texts: dict[str, str]) -> list[Path]:
    """Make ``out`` hold exactly ``texts`` (file name → text); return the files' paths.

    Files whose text is unchanged are not rewritten (their mtimes stay), and ``.json`` files
    not in ``texts`` (of a tool or record that no longer exists) are removed.
    """
    out.mkdir(parents=True, exist_ok=True)
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
