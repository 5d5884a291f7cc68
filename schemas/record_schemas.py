"""Write the typed records' JSON Schemas to ``schemas/json/records/<name>.json`` (DESIGN §3).

Task rows and manifests cross I/O, so readers in other languages get their schemas as files;
``make schemas`` rewrites them and ``tests/gen/test_record_schemas.py`` fails when they drift
from the pydantic models (as the tools' schemas do, in ``shopgen.env.tools.export``).

Run: ``python -m shopgen.schemas.record_schemas [OUT_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel

from shopgen.schemas.json_files import json_text, packaged_dir, sync_dir
from shopgen.schemas.manifest import Manifest
from shopgen.schemas.task import TaskRow

#: File stem → the record it describes.
RECORDS: dict[str, type[BaseModel]] = {"manifest": Manifest, "task_row": TaskRow}


def schema_texts() -> dict[str, str]:
    """File name → JSON text, one per record, in a stable byte form."""
    return {
        f"{name}.json": json_text(model.model_json_schema())
        for name, model in sorted(RECORDS.items())
    }


def default_dir() -> Path:
    """``schemas/json/records`` of the installed package."""
    return packaged_dir("records")


def export(out: Path | None = None) -> list[Path]:
    """Write the schema files, removing stale ones of records that no longer exist."""
    return sync_dir(out or default_dir(), schema_texts())


if __name__ == "__main__":
    paths = export(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(f"wrote {len(paths)} record schemas to {paths[0].parent}")
