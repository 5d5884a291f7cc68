import json

import polars as pl
import pytest
import yaml

from shopgen.gen.dataset import finalize, read_manifest, shard_name, staging_dir
from shopgen.gen.validate import validate_dataset
from shopgen.schemas.errors import DatasetError


def _write(root, table="things", rows=3):
    path = root / shard_name(table, 0, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({"x": list(range(rows))}).write_parquet(path)


def test_failed_write_leaves_no_directory(tmp_path):
    out = tmp_path / "ds"

    def die_midway():
        with staging_dir(out, force=False) as tmp:
            _write(tmp)
            raise RuntimeError("died midway")

    with pytest.raises(RuntimeError, match="midway"):
        die_midway()
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_manifest_and_card_describe_the_files(tmp_path):
    out = tmp_path / "ds"
    with staging_dir(out, force=False) as tmp:
        _write(tmp, rows=5)
        manifest = finalize(tmp, kind="catalog", seed=3, config={"size": 5}, title="t", summary="s")
    assert read_manifest(out) == manifest
    entry = manifest.files["things/train-00000-of-00001.parquet"]
    assert entry.rows == 5
    assert entry.table == "things"
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["configs"][0]["config_name"] == "things"
    assert front["configs"][0]["data_files"][0]["path"] == "things/train-*.parquet"
    assert json.loads((out / "manifest.json").read_text())["seed"] == 3
    assert validate_dataset(out) == []


def test_force_replaces_and_no_force_refuses(tmp_path):
    out = tmp_path / "ds"
    for rows in (2, 4):
        with staging_dir(out, force=True) as tmp:
            _write(tmp, rows=rows)
            finalize(tmp, kind="catalog", seed=0, config={}, title="t", summary="s")
    assert read_manifest(out).files["things/train-00000-of-00001.parquet"].rows == 4
    with pytest.raises(DatasetError, match="--force"), staging_dir(out, force=False):
        pass


def test_a_file_named_as_the_output_is_never_replaced(tmp_path):
    out = tmp_path / "notes.txt"
    out.write_text("mine")
    for force in (False, True):
        with pytest.raises(DatasetError, match="is a file"), staging_dir(out, force=force):
            pass
    assert out.read_text() == "mine"


def test_a_dataset_finished_meanwhile_by_another_run_is_kept(tmp_path):
    out = tmp_path / "ds"

    def long_run():
        with staging_dir(out, force=False) as tmp:
            _write(tmp, rows=2)
            with staging_dir(out, force=False) as other:  # a shorter run finishes first
                _write(other, rows=7)
                finalize(other, kind="catalog", seed=0, config={}, title="t", summary="s")
            finalize(tmp, kind="catalog", seed=0, config={}, title="t", summary="s")

    with pytest.raises(DatasetError, match="already exists"):
        long_run()
    assert read_manifest(out).files["things/train-00000-of-00001.parquet"].rows == 7
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # this run's staging is gone


def test_validate_flags_unlisted_and_missing_files(tmp_path):
    out = tmp_path / "ds"
    with staging_dir(out, force=False) as tmp:
        _write(tmp)
        finalize(tmp, kind="catalog", seed=0, config={}, title="t", summary="s")
    _write(out, table="extra")
    assert any("not listed" in p for p in validate_dataset(out))
    (out / "things/train-00000-of-00001.parquet").unlink()
    assert any("missing" in p for p in validate_dataset(out))
