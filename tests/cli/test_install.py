"""shopgen installed the way a user gets it: a wheel, not the editable dev install.

The dev venv's editable finder maps every ``shopgen.*`` name onto the source tree, so it hides a
subpackage or data file that ``pyproject.toml`` forgets to ship. Two checks close that gap:
a fast one comparing the package list and package data with the source tree, and one that
builds a wheel, installs it into a fresh venv and runs the CLI from outside the repository.
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _source_files(folder: Path):
    """Every file setuptools may ship from ``folder`` (no caches, no bytecode)."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path


def source_packages() -> dict[str, Path]:
    """Import name → folder of every package in the mapped source folders."""
    found: dict[str, Path] = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found[".".join((name, *init.parent.relative_to(base).parts))] = init.parent
    return found


def shipped_paths() -> set[str]:
    """Paths under ``shopgen/`` that an install must contain: each source and data file."""
    paths: set[str] = set()
    for name, folder in SETUPTOOLS["package-dir"].items():
        prefix = Path(*name.split(".")[1:])
        for path in _source_files(ROOT / folder):
            paths.add((prefix / path.relative_to(ROOT / folder)).as_posix())
    return paths


def test_package_list_names_every_package_in_the_source_tree():
    listed = set(SETUPTOOLS["packages"])
    found = set(source_packages())
    assert not found - listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert not listed - found, f"listed but not in the source tree: {sorted(listed - found)}"


def test_package_data_covers_every_non_python_file():
    packages = source_packages()
    unshipped = []
    for _name, folder in SETUPTOOLS["package-dir"].items():
        for path in _source_files(ROOT / folder):
            if path.suffix == ".py":
                continue
            owner = max(
                (p for p, d in packages.items() if d in path.parents),
                key=lambda p: len(packages[p].parts),
            )
            globs = SETUPTOOLS.get("package-data", {}).get(owner, [])
            if not any(path in set(packages[owner].glob(g)) for g in globs):
                unshipped.append(f"{path.relative_to(ROOT)} (package {owner})")
    assert not unshipped, f"not matched by [tool.setuptools.package-data]: {unshipped}"


def _build_backend_missing() -> str | None:
    """Why this interpreter cannot build the wheel offline, or None when it can."""
    for spec in PYPROJECT["build-system"]["requires"]:
        req = Requirement(spec)
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return f"build requirement {spec} is not installed"
        if not req.specifier.contains(have, prereleases=True):
            return f"build requirement {spec} not met (found {req.name} {have})"
    return None


def _run(args: list, *, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{' '.join(map(str, args))}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _fresh_venv_with_wheel(tmp: Path) -> Path:
    """A new venv holding only the built wheel; dependencies come from the dev venv's
    site-packages through a ``.pth`` file, whose own ``.pth`` files (the editable finder)
    Python does not process, so the source tree stays out of reach."""
    src = tmp / "src"  # a copy, so the build's build/ and egg-info stay out of the repository
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for folder in set(SETUPTOOLS["package-dir"].values()):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp / "wheels"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            wheels,
            src,
        ],
        cwd=tmp,
    )
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    python = venv / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            *wheels.glob("shopgen-*.whl"),
        ],
        cwd=tmp,
    )
    site = Path(
        _run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=tmp
        ).strip()
    )
    deps = [p for p in sys.path if Path(p).name == "site-packages" and Path(p) != site]
    (site / "zz_dev_dependencies.pth").write_text("".join(f"{p}\n" for p in deps))
    return venv


def test_wheel_installed_in_a_fresh_venv_ships_everything_and_runs_tasks(tmp_path):
    if (why := _build_backend_missing()) is not None:
        pytest.skip(f"cannot build the wheel offline here: {why}")
    venv = _fresh_venv_with_wheel(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    work = tmp_path / "work"  # cwd outside the repository: nothing importable by accident
    work.mkdir()

    where = json.loads(
        _run(
            [
                venv / "bin" / "python",
                "-c",
                "import json, sys, shopgen; print(json.dumps({'shopgen': shopgen.__file__,"
                "'editable': [m for m in sys.modules if 'editable' in m]}))",
            ],
            cwd=work,
            env=env,
        )
    )
    installed_root = Path(where["shopgen"]).parent
    assert installed_root.is_relative_to(venv), where
    assert where["editable"] == [], "the dev venv's editable finder leaked into the fresh venv"
    installed = {
        p.relative_to(installed_root).as_posix()
        for p in installed_root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    missing = shipped_paths() - installed
    assert not missing, f"the wheel lacks {len(missing)} file(s): {sorted(missing)[:10]}"

    shopgen = venv / "bin" / "shopgen"
    _run([shopgen, "catalog", "--size", "300", "--out", work / "cat"], cwd=work, env=env)
    assert (work / "cat" / "README.md").read_text().startswith("---\nconfigs:")
    _run(
        [
            shopgen,
            "tasks",
            "--env",
            "returns",
            "--d",
            "2",
            "--n",
            "2",
            "--catalog",
            work / "cat",
            "--out",
            work / "tasks",
        ],
        cwd=work,
        env=env,
    )
    assert "valid" in _run([shopgen, "validate", work / "tasks"], cwd=work, env=env)
