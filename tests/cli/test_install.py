"""A non-editable ``pip install .`` gives a working ``shopgen`` with its data files."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_non_editable_install_ships_code_templates_and_data(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = tmp_path / "cat"
    proc = subprocess.run(
        [str(target / "bin" / "shopgen"), "catalog", "--size", "300", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "README.md").read_text().startswith("---\nconfigs:")
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import shopgen.gen, shopgen.templates; print(shopgen.gen.__file__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert where.startswith(str(target))
    installed = {
        p.relative_to(target / "shopgen").as_posix()
        for p in (target / "shopgen").rglob("*")
        if p.is_file()
    }
    assert "gen/data/taxonomy.yaml" in installed
    assert "templates/cards/dataset.md.j2" in installed
