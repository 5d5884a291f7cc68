"""``shopgen validate`` checks an export against its own format's schema (DESIGN §10)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from shopgen.cli import main
from shopgen.exports import FORMATS, export_tasks
from shopgen.gen.dataset import MANIFEST, read_manifest, sha256_file
from shopgen.schemas import exports as export_schemas


@pytest.fixture(scope="module")
def exported(task_dir, indexed_catalog_dir, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("validated-exports")
    for fmt in FORMATS:
        export_tasks(task_dir, root / fmt, fmt=fmt, catalog=indexed_catalog_dir)
    return {fmt: root / fmt for fmt in FORMATS}


def _validate(path: Path, capsys) -> tuple[int, list[str]]:
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    return code, [line.strip() for line in err.splitlines() if line.startswith("  ")]


def _rewrite(root: Path, change) -> str:
    """Apply ``change`` to the export's first data file and re-list it in the manifest, as a
    writer with the wrong schema would have; returns the file's relative path."""
    manifest = read_manifest(root)
    rel = next(r for r in sorted(manifest.files) if r.endswith(".parquet"))
    path = root / rel
    table = change(pq.read_table(path))
    pq.write_table(table, path)
    entry = manifest.files[rel].model_copy(
        update={"rows": table.num_rows, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
    )
    manifest = manifest.model_copy(update={"files": {**manifest.files, rel: entry}})
    (root / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return rel


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_format_passes_validate(exported, capsys, fmt):
    code, problems = _validate(exported[fmt], capsys)
    assert (code, problems) == (0, [])


def _drop_last(table: pa.Table) -> pa.Table:
    return table.drop_columns([table.column_names[-1]])


def _retype_first(table: pa.Table) -> pa.Table:
    name = table.column_names[0]
    return table.set_column(0, name, pa.array(range(table.num_rows), pa.int64()))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("change", "says"),
    [(_drop_last, "missing column"), (_retype_first, "expected")],
    ids=["dropped", "retyped"],
)
def test_a_corrupted_export_fails_with_one_line(exported, tmp_path, capsys, fmt, change, says):
    copy = tmp_path / fmt
    shutil.copytree(exported[fmt], copy)
    rel = _rewrite(copy, change)
    code, problems = _validate(copy, capsys)
    assert code != 0
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{rel}: schema differs from the {fmt} export's rows")
    assert says in problems[0]


def test_a_verl_tool_entry_of_the_wrong_shape_fails(exported, tmp_path, capsys):
    """verl's schema follows the file's tool names, but each tool's kwargs keep verl's shape."""
    copy = tmp_path / "verl"
    shutil.copytree(exported["verl"], copy)

    def flatten_one_tool(table: pa.Table) -> pa.Table:
        rows = table.to_pylist()
        for row in rows:
            kwargs = row["extra_info"]["tools_kwargs"]
            first = sorted(kwargs)[0]
            kwargs[first] = {"create_kwargs": kwargs[first]["create_kwargs"]["task"]}
        return pa.Table.from_pylist(rows)

    rel = _rewrite(copy, flatten_one_tool)
    code, problems = _validate(copy, capsys)
    assert code != 0
    assert problems == [problems[0]]
    assert problems[0].startswith(f"{rel}: schema differs from the verl export's rows")
    assert "column extra_info is" in problems[0]


def test_an_unknown_export_format_is_one_line(exported, tmp_path, capsys):
    copy = tmp_path / "odd"
    shutil.copytree(exported["jsonl"], copy)
    manifest = read_manifest(copy)
    manifest = manifest.model_copy(update={"config": {**manifest.config, "format": "csv"}})
    (copy / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    code, problems = _validate(copy, capsys)
    assert code != 0
    assert len(problems) == 1, problems
    assert "export format 'csv' is not one of" in problems[0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_exporters_write_the_declared_schemas(exported, fmt):
    """What each exporter writes is exactly what ``shopgen.schemas.exports`` declares, so
    ``shopgen validate`` checks an export against the schema it was written with."""
    root = exported[fmt]
    files = sorted(r for r in read_manifest(root).files if r.endswith(".parquet"))
    assert files
    for rel in files:
        found = pq.read_schema(root / rel)
        if fmt == "verl":  # built per table from the tools its tool_config.yaml lists
            config = root / Path(rel).parent / "tool_config.yaml"
            config = config if config.is_file() else root / "tool_config.yaml"
            tools = yaml.safe_load(config.read_text())["tools"]
            names = [t["tool_schema"]["function"]["name"] for t in tools]
            assert names
            assert export_schemas.verl_tool_names(found) == names
            declared = export_schemas.verl(names)
        else:
            declared = export_schemas.FIXED[fmt]
        assert found.equals(declared), (rel, found, declared)
