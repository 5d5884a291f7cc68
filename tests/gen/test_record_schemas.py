"""The committed JSON Schemas of task rows and manifests match the models (``make schemas``)."""

import json

from shopgen.schemas.manifest import Manifest
from shopgen.schemas.record_schemas import RECORDS, default_dir, export, schema_texts
from shopgen.schemas.task import TaskRow


def test_committed_record_schemas_match_the_models():
    committed = {p.name: p.read_text(encoding="utf-8") for p in default_dir().glob("*.json")}
    expected = schema_texts()
    assert sorted(committed) == sorted(expected), "run `make schemas` and commit the files"
    for name, text in expected.items():
        assert committed[name] == text, f"{name} is stale: run `make schemas`"


def test_export_writes_one_file_per_record_and_removes_stale_ones(tmp_path):
    (tmp_path / "gone.json").write_text("{}")
    paths = export(tmp_path)
    assert sorted(p.stem for p in paths) == sorted(RECORDS)
    assert not (tmp_path / "gone.json").exists()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert set(manifest["required"]) >= {"kind", "dataset_id", "files", "content_hash"}
    assert manifest["additionalProperties"] is False
    task = json.loads((tmp_path / "task_row.json").read_text())
    assert set(task["properties"]) == set(TaskRow.model_fields)
    assert set(manifest["properties"]) == set(Manifest.model_fields)
