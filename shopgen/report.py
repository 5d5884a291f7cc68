"""The calibration report: one self-contained HTML page of inline SVG plots (issue #9 §4).

Sections: solve rate and mean reward per environment versus d for each reference policy;
per-axis effect (heuristic solve rate with one axis at its d value, every other axis at d=0);
catalog realism from DuckDB over the catalog's Parquet files; task diversity. Plots are plain
SVG written here, so the page needs no network, no JavaScript and no plotting library.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from shopgen.console import counted
from shopgen.env.episode import ShopEnv
from shopgen.gen.difficulty import theta
from shopgen.policies.evaluate import Cell, evaluate, generated_rows
from shopgen.schemas.envs import env_spec
from shopgen.schemas.task import TaskRow

_W, _H, _PAD = 360, 220, 36
_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def line_chart(title: str, series: dict[str, list[tuple[float, float]]], *, y=(0.0, 1.0)) -> str:
    """An SVG line chart of named (x, y) series."""
    xs = [x for pts in series.values() for x, _ in pts] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = y

    def px(x: float, v: float) -> str:
        sx = _PAD + (x - x0) / (x1 - x0) * (_W - 2 * _PAD)
        sy = _H - _PAD - (v - y0) / (y1 - y0) * (_H - 2 * _PAD)
        return f"{sx:.1f},{sy:.1f}"

    body = [_frame(title, f"{x0:g}", f"{x1:g}", f"{y0:g}", f"{y1:g}")]
    for i, (name, pts) in enumerate(series.items()):
        color = _COLORS[i % len(_COLORS)]
        path = " ".join(px(x, v) for x, v in sorted(pts))
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        body.append(
            f'<text x="{_W - _PAD + 2}" y="{_PAD + 12 * i}" font-size="9" fill="{color}">'
            f"{html.escape(name)}</text>"
        )
    return _svg(body)


def bar_chart(title: str, bars: Sequence[tuple[str, float]]) -> str:
    """An SVG bar chart of labelled non-negative values."""
    top = max((v for _, v in bars), default=1.0) or 1.0
    width = (_W - 2 * _PAD) / max(1, len(bars))
    body = [_frame(title, "", "", "0", f"{top:.3g}")]
    for i, (label, v) in enumerate(bars):
        h = v / top * (_H - 2 * _PAD)
        x = _PAD + i * width
        body.append(
            f'<rect x="{x + 1:.1f}" y="{_H - _PAD - h:.1f}" width="{max(1.0, width - 2):.1f}" '
            f'height="{h:.1f}" fill="{_COLORS[0]}"><title>{html.escape(label)}: {v:.3g}</title></rect>'
        )
        if len(bars) <= 30:
            body.append(
                f'<text x="{x + width / 2:.1f}" y="{_H - _PAD + 10}" font-size="7" '
                f'text-anchor="end" transform="rotate(-45 {x + width / 2:.1f},{_H - _PAD + 10})">'
                f"{html.escape(label[:14])}</text>"
            )
    return _svg(body)


def _frame(title: str, x0: str, x1: str, y0: str, y1: str) -> str:
    b = _H - _PAD
    return (
        f'<text x="{_W / 2}" y="14" font-size="11" text-anchor="middle">{html.escape(title)}</text>'
        f'<line x1="{_PAD}" y1="{b}" x2="{_W - _PAD}" y2="{b}" stroke="#333"/>'
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{b}" stroke="#333"/>'
        f'<text x="{_PAD}" y="{b + 12}" font-size="8">{x0}</text>'
        f'<text x="{_W - _PAD}" y="{b + 12}" font-size="8" text-anchor="end">{x1}</text>'
        f'<text x="{_PAD - 3}" y="{b}" font-size="8" text-anchor="end">{y0}</text>'
        f'<text x="{_PAD - 3}" y="{_PAD + 4}" font-size="8" text-anchor="end">{y1}</text>'
    )


def _svg(body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}">' + "".join(body) + "</svg>"
    )


def policy_charts(cells: list[Cell]) -> list[str]:
    """Per environment: solve rate and mean reward versus d, one line per policy."""
    charts = []
    for env_name in sorted({c.env for c in cells}):
        mine = [c for c in cells if c.env == env_name]
        for what, y in (("solve_rate", (0.0, 1.0)), ("mean_reward", (-1.0, 1.0))):
            series: dict[str, list[tuple[float, float]]] = {}
            for c in mine:
                series.setdefault(c.policy, []).append((c.d, getattr(c, what)))
            charts.append(line_chart(f"{env_name}: {what.replace('_', ' ')} vs d", series, y=y))
    return charts


def effect_settings(env_name: str, d: int) -> list[tuple[str, dict[str, Any]]]:
    """The runs :func:`axis_effects` makes for ``env_name``: (label, θ overrides at d = 0).

    The baseline first, then each of the environment's axes whose θ(d) value differs from
    its θ(0) one, set alone to its value at ``d``.
    """
    base, high = theta(0).to_dict(), theta(d).to_dict()
    changed = [axis for axis in env_spec(env_name).axes if base[axis] != high[axis]]
    return [("(all at 0)", {}), *((axis, {axis: high[axis]}) for axis in changed)]


def axis_effects(
    env: ShopEnv,
    envs: list[str],
    d: int,
    n: int,
    *,
    seed: int = 0,
    progress: Callable[[int], None] = lambda done: None,
) -> dict[str, dict[str, float]]:
    """Heuristic solve rate per env with each listed axis alone at θ(d), the rest at θ(0).

    Key ``"(all at 0)"`` is the baseline. Lower than baseline = the axis makes tasks harder.
    ``progress(1)`` is called as each of the ``n`` tasks of every run in
    :func:`effect_settings` is played.
    """
    out: dict[str, dict[str, float]] = {}
    for env_name in envs:
        effects = {}
        for label, overrides in effect_settings(env_name, d):
            rows = generated_rows(env, [env_name], [0], n, seed=seed, overrides=overrides)
            effects[label] = _rate(evaluate(env, counted(rows, progress), ["heuristic"]))
        out[env_name] = effects
    return out


def _rate(cells: list[Cell]) -> float:
    n = sum(c.n for c in cells)
    return sum(c.solved for c in cells) / n if n else 0.0


def catalog_realism(catalog: Path) -> list[str]:
    """Charts of the catalog: price per department, ratings, popularity, variants, attributes."""
    products = str(catalog / "products" / "*.parquet")
    con = duckdb.connect()
    q = lambda sql: con.execute(sql.format(p=products)).fetchall()  # noqa: E731
    price = q("SELECT department, median(price) FROM read_parquet('{p}') GROUP BY 1 ORDER BY 1")
    rating = q(
        "SELECT floor(rating*2)/2 AS r, count(*) FROM read_parquet('{p}') GROUP BY 1 ORDER BY 1"
    )
    pop = q(
        "SELECT floor(log10(rating_count + 1)*2)/2 AS b, count(*) FROM read_parquet('{p}') "
        "GROUP BY 1 ORDER BY 1"
    )
    variants = q(
        "SELECT least(n_variants, 20) AS v, count(*) FROM read_parquet('{p}') GROUP BY 1 ORDER BY 1"
    )
    coverage = q(
        "SELECT department, avg(CASE WHEN attributes IS NOT NULL AND attributes <> '{{}}' "
        "THEN 1 ELSE 0 END) FROM read_parquet('{p}') GROUP BY 1 ORDER BY 1"
    )
    return [
        bar_chart("median price per department ($)", [(str(k), float(v)) for k, v in price]),
        bar_chart("rating distribution (products)", [(f"{k:g}", float(v)) for k, v in rating]),
        bar_chart("popularity: log10(rating_count+1)", [(f"{k:g}", float(v)) for k, v in pop]),
        bar_chart("variants per product (20 = 20+)", [(str(k), float(v)) for k, v in variants]),
        bar_chart("attribute coverage per department", [(str(k), float(v)) for k, v in coverage]),
    ]


def diversity(rows: list[TaskRow]) -> list[dict[str, Any]]:
    """Per environment: tasks, distinct first messages, distinct hidden targets."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        t = table.setdefault(
            row.env, {"env": row.env, "tasks": 0, "messages": set(), "goals": set()}
        )
        t["tasks"] += 1
        t["messages"].add(next(m.content for m in row.messages if m.role == "user"))
        goal = row.decoded("goal")
        goal.pop("min_turns", None)
        t["goals"].add(json.dumps(goal, sort_keys=True))
    return [
        {
            "env": t["env"],
            "tasks": t["tasks"],
            "distinct_first_messages": len(t["messages"]),
            "distinct_targets": len(t["goals"]),
        }
        for t in sorted(table.values(), key=lambda t: t["env"])
    ]


def render(
    *,
    cells: list[Cell],
    effects: dict[str, dict[str, float]],
    realism: list[str],
    diverse: list[dict[str, Any]],
    title: str = "shopgen calibration report",
) -> str:
    """The whole page."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:20px}svg{margin:4px;border:1px solid #ddd}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>",
        f"</head><body><h1>{html.escape(title)}</h1>",
        "<h2>Solve rate and mean reward vs d</h2><div>",
        *policy_charts(cells),
        "</div><h2>Per-axis effect (heuristic solve rate; axis alone at its d value)</h2><div>",
        *(bar_chart(f"{e}: solve rate", list(v.items())) for e, v in effects.items()),
        "</div><h2>Catalog realism</h2><div>",
        *realism,
        "</div><h2>Task diversity</h2>",
        _table(diverse),
        "</body></html>",
    ]
    return "\n".join(parts)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>no tasks</p>"
    head = "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"
