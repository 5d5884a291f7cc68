import contextlib
import json
import os
import stat

import polars as pl
import pytest
import yaml

from shopgen.gen.dataset import add_files, finalize, read_manifest, shard_name, staging_dir
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


def _dataset(out, rows=2):
    with staging_dir(out, force=True) as tmp:
        _write(tmp, rows=rows)
        finalize(tmp, kind="catalog", seed=0, config={}, title="t", summary="s")


@pytest.mark.parametrize(
    "manifest",
    [None, "{}", '{"name": "another tool"}', "\xff not text"],
    ids=["no-manifest", "empty-object", "foreign", "not-json"],
)
def test_force_never_replaces_a_directory_that_is_not_a_dataset(tmp_path, manifest):
    """``--force`` emptied any directory named as the output (a project root, ``data/``)."""
    out = tmp_path / "mine"
    (out / "src").mkdir(parents=True)
    (out / "src" / "notes.txt").write_text("precious")
    if manifest is not None:
        (out / "manifest.json").write_text(manifest)
    with (
        pytest.raises(DatasetError, match="not a shopgen dataset"),
        staging_dir(out, force=True) as tmp,
    ):
        _write(tmp)  # never reached: refused before any staging
    assert (out / "src" / "notes.txt").read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]


def test_a_directory_that_stops_being_a_dataset_meanwhile_is_not_replaced(tmp_path):
    out = tmp_path / "ds"
    _dataset(out)

    def replaced_meanwhile():
        with staging_dir(out, force=True) as tmp:
            _write(tmp)
            (out / "manifest.json").unlink()  # someone else's files take its place
            (out / "notes.txt").write_text("precious")

    with pytest.raises(DatasetError, match="not a shopgen dataset"):
        replaced_meanwhile()
    assert (out / "notes.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_force_fills_an_empty_directory(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    _dataset(out, rows=3)
    assert read_manifest(out).files["things/train-00000-of-00001.parquet"].rows == 3


@contextlib.contextmanager
def _umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _modes(root):
    return {
        ("d" if p.is_dir() else "f", stat.S_IMODE(p.stat().st_mode))
        for p in [root, *root.rglob("*")]
    }


@pytest.mark.parametrize(
    ("mask", "dirs", "files"),
    [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)],
    ids=["umask-022", "umask-077"],
)
def test_a_dataset_has_the_umask_modes(tmp_path, mask, dirs, files):
    """mkdtemp/mkstemp made every dataset 0700 and a refreshed manifest 0600."""
    out = tmp_path / "ds"
    with _umask(mask):
        _dataset(out)
        assert _modes(out) == {("d", dirs), ("f", files)}
        _dataset(out, rows=5)  # replaced with --force
        assert _modes(out) == {("d", dirs), ("f", files)}
        side = out / "index" / "deep"
        side.mkdir(parents=True)
        (out / "index").chmod(0o700)  # as a mkdtemp folder renamed into the dataset is
        (side / "x.bin").write_bytes(b"x")
        add_files(out, {"index/deep/x.bin": "index"})
        assert _modes(out) == {("d", dirs), ("f", files)}


def test_add_files_never_takes_rights_away(tmp_path):
    out = tmp_path / "ds"
    _dataset(out)
    (out / "extra").mkdir()
    (out / "extra" / "a.txt").write_text("a")
    (out / "extra").chmod(0o777)
    with _umask(0o077):
        add_files(out, {"extra/a.txt": "extra"})
    assert stat.S_IMODE((out / "extra").stat().st_mode) == 0o777


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
