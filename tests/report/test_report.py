"""The calibration report: a self-contained page whose plots render."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from shopgen.cli import main
from shopgen.env.episode import ShopEnv
from shopgen.report import axis_effects, effect_settings


@pytest.fixture(scope="module")
def page(indexed_catalog_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    args = ["report", "--env", "status", "--d", "0,12", "--n", "2", "--axis-n", "2"]
    assert main([*args, "--catalog", str(indexed_catalog_dir), "--out", str(out)]) == 0
    return out


def test_report_is_self_contained_with_every_plot(page: Path) -> None:
    text = page.read_text()
    # 2 policy charts (solve rate, reward) + 1 axis chart + 5 catalog charts for one env.
    assert text.count("<svg") == 8
    assert "<polyline" in text
    assert "<rect" in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "distinct_first_messages" in text


def test_report_rejects_missing_source(indexed_catalog_dir: Path, tmp_path: Path) -> None:
    assert (
        main(["report", "--catalog", str(indexed_catalog_dir), "--out", str(tmp_path / "r")]) == 1
    )


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed")
def test_report_renders_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,2400",
            page.as_uri(),
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )
    image = pytest.importorskip("PIL.Image").open(shot).convert("RGB")
    counts = image.getcolors(maxcolors=1 << 24)
    inked = sum(n for n, rgb in counts if rgb != (255, 255, 255))
    assert inked > 0.02 * image.width * image.height  # the page is not blank
    saturated = {rgb for n, rgb in counts if n > 200 and max(rgb) - min(rgb) > 100}
    assert len(saturated) >= 3  # the policies' coloured lines and the bars were drawn


def test_axis_effects_reports_every_task_it_plays(indexed_catalog_dir: Path) -> None:
    """The per-axis progress bar's total is exactly the tasks the effect runs play."""
    env = ShopEnv(indexed_catalog_dir)
    played: list[int] = []
    effects = axis_effects(env, ["status"], 12, 2, progress=played.append)
    settings = effect_settings("status", 12)
    assert [label for label, _ in settings] == list(effects["status"])
    assert len(settings) > 1  # the baseline and at least one axis that grows with d
    assert played == [1] * (2 * len(settings))
