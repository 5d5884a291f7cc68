"""Every user error ends in one line on stderr and a non-zero exit, never a traceback."""

import contextlib
import json
import subprocess
import sys
import time

import polars as pl
import pytest

from shopgen.cli import main


def run(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "shopgen", *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(code: int, err: str, needle: str) -> None:
    assert code != 0
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("shopgen: error:")]
    assert len(lines) == 1, err
    assert needle in lines[0]


@pytest.mark.parametrize(
    ("size", "needle"),
    [
        ("0", "size=0 must be > 0"),
        ("-5", "not a count"),
        ("1X", "not a count"),
        ("1e400", "not a count"),
        ("2.5k5", "not a count"),
    ],
)
def test_bad_sizes(tmp_path, size, needle):
    code, _, err = run("catalog", "--size", size, "--out", str(tmp_path / "c"))
    assert_one_line_error(code, err, needle)
    assert not (tmp_path / "c").exists()


def test_unknown_option_and_command():
    code, _, err = run("catalog", "--bogus")
    assert_one_line_error(code, err, "No such option")
    code, _, err = run("frobnicate")
    assert_one_line_error(code, err, "No such command")


def test_non_empty_output_needs_force(tmp_path):
    out = tmp_path / "c"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, _, err = run("catalog", "--size", "200", "--out", str(out))
    assert_one_line_error(code, err, "--force")
    assert (out / "keep.txt").read_text() == "mine"
    # --force replaces a shopgen dataset, never some other directory (it deleted keep.txt).
    code, _, err = run("catalog", "--size", "200", "--out", str(out), "--force")
    assert_one_line_error(code, err, "not a shopgen dataset")
    assert (out / "keep.txt").read_text() == "mine"
    assert not (out / "manifest.json").exists()
    (out / "keep.txt").unlink()
    assert run("catalog", "--size", "200", "--out", str(out))[0] == 0  # empty: no --force
    first = json.loads((out / "manifest.json").read_text())["dataset_id"]
    code, _, _ = run("catalog", "--size", "200", "--seed", "1", "--out", str(out), "--force")
    assert code == 0
    assert json.loads((out / "manifest.json").read_text())["dataset_id"] != first
    assert [p.name for p in tmp_path.iterdir()] == ["c"]


def test_unwritable_output(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run("catalog", "--size", "200", "--out", str(blocker / "c"))
    assert_one_line_error(code, err, "cannot create")


def test_validate_reports_corruption_and_foreign_files(tmp_path):
    out = tmp_path / "c"
    assert run("catalog", "--size", "300", "--out", str(out))[0] == 0
    assert run("validate", str(out))[0] == 0

    shard = next((out / "products").glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    code, _, err = run("validate", str(out))
    assert_one_line_error(code, err, "1 problem")
    assert "checksum mismatch" in err

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    pl.DataFrame({"a": [1, 2]}).write_parquet(foreign / "x.parquet")
    code, _, err = run("validate", str(foreign))
    assert_one_line_error(code, err, "no manifest.json")

    (foreign / "manifest.json").write_text("{not json")
    code, _, err = run("validate", str(foreign))
    assert_one_line_error(code, err, "not a valid shopgen manifest")


def test_validate_catches_a_broken_invariant(tmp_path):
    out = tmp_path / "c"
    assert run("catalog", "--size", "300", "--out", str(out))[0] == 0
    shard = next((out / "variants").glob("*.parquet"))
    frame = pl.read_parquet(shard)
    frame.with_columns(pl.lit("B0NOSUCHID").alias("product_id")).write_parquet(shard)
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["files"][shard.relative_to(out).as_posix()]
    from shopgen.gen.dataset import sha256_file

    entry["sha256"], entry["bytes"] = sha256_file(shard), shard.stat().st_size
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run("validate", str(out))
    assert_one_line_error(code, err, "problem")
    assert "variant whose product does not exist" in err


def test_killed_run_leaves_nothing_that_looks_complete(tmp_path):
    out = tmp_path / "big"
    proc = subprocess.Popen(
        [sys.executable, "-m", "shopgen", "catalog", "--size", "600k", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(
        tmp_path.glob(".big.partial-*/products/*.parquet")
    ):
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)  # poll: the run must still be going when it is killed
    proc.kill()  # SIGKILL: no cleanup handler runs
    proc.wait()
    assert not out.exists()
    assert not list(tmp_path.rglob("manifest.json"))


def test_internal_errors_are_one_line(monkeypatch, tmp_path, capsys):
    import shopgen.commands.validate as validate_cmd

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(validate_cmd, "validate_dataset", boom)
    monkeypatch.delenv("SHOPGEN_DEBUG", raising=False)
    assert main(["validate", str(tmp_path)]) == 70
    assert_one_line_error(70, capsys.readouterr().err, "internal error: RuntimeError: kaboom")


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["  "], "QUERY: is empty"), (["tent", "--top-k", "0"], "'--top-k': 0 is not in the range")],
)
def test_search_refuses_an_empty_query_and_no_depth(indexed_catalog_dir, capsys, args, needle):
    """It printed "no results" and exited 0 for a blank query, as if the catalog had none."""
    code = main(["search", "--catalog", str(indexed_catalog_dir), *args])
    assert_one_line_error(code, capsys.readouterr().err, needle)


@pytest.mark.parametrize("env", ["car", "returns,car", ","])
def test_an_unknown_environment_names_every_choice(tmp_path, env):
    code, _, err = run("tasks", "--env", env, "--out", str(tmp_path / "t"))
    assert_one_line_error(code, err, "is not an environment; give all, one of discovery")
    assert not (tmp_path / "t").exists()


def test_several_environments_joined_by_commas():
    from shopgen.commands.options import parse_envs

    assert parse_envs("returns, cart,returns") == ["returns", "cart"]
    assert parse_envs("all")[0] == "discovery"


def test_a_catalog_too_small_to_draw_from_says_its_size(tmp_path):
    """``shopgen catalog --size 10`` is a catalog; its tasks then failed with "no usable draw"
    and nothing said the catalog was the cause."""
    catalog = tmp_path / "c"
    assert run("catalog", "--size", "10", "--out", str(catalog))[0] == 0
    assert run("index", "--catalog", str(catalog))[0] == 0
    args = ("tasks", "--env", "discovery", "--d", "3", "--n", "1", "--catalog", str(catalog))
    code, _, err = run(*args, "--out", str(tmp_path / "t"))
    assert_one_line_error(code, err, "on a catalog of 10 products")
    assert "try a larger one" in err
