"""Render throughput: first messages with omission + shorthand + typos, against str.format.

The baseline renders the same sentences (the exact clean text of each rendered message, with
its slot values as format fields) with plain ``str.format`` in the same run, so the ratio says
what the sandboxed templates, slot marking, omission and noise cost on top of string building.
The first pass meets most shapes of goal for the first time (each is rendered by Jinja once,
then refilled); the warm pass renders the same goals with new streams, as a long generation
run does once its shapes are cached. Replies are timed the same way.
"""

from __future__ import annotations

import time

from shopgen.gen.render import render_first_message, render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, example_slots


def _timed(fn, n: int) -> float:
    start = time.perf_counter()
    fn(n)
    return time.perf_counter() - start


def run(quick: bool = False) -> dict:
    """Renders per second with noise (d=8) and the ratio against ``str.format``."""
    n = 400 if quick else 4000
    cases = []
    for k in range(n):
        env = ENVS[k % len(ENVS)]
        rng = stream(0, "bench-render", k)
        cases.append((env, example_slots(env, rng), rng))
    # Warm the template cache, then measure fresh streams for each render.
    render_first_message("cart", cases[2][1], d=8, rng=stream(0, "warm"))
    texts = []

    def templated(m: int) -> None:
        for k in range(m):
            env, goal, _ = cases[k]
            texts.append(render_first_message(env, goal, d=8, rng=stream(1, "bench", k)).clean)

    t_render = _timed(templated, n)
    texts.clear()
    t_warm = _timed(templated, n)

    def replies(m: int) -> None:
        for k in range(m):
            goal = cases[k][1]
            render_user_reply(
                "answer", goal[-2:], style="chatty", rng=stream(2, "bench", k), p_noise=0.08
            )

    replies(n)  # warm the reply skeletons
    t_reply = _timed(replies, n)
    formats = []
    for text, (_, goal, _) in zip(texts, cases, strict=True):
        fmt, fields = text.replace("{", "{{").replace("}", "}}"), {}
        for i, s in enumerate(goal):
            if s.display() in fmt:  # placeholders without digits, so "2" cannot match inside one
                fmt = fmt.replace(s.display(), f"\x00{chr(0x100 + i)}\x00", 1)
                fields[f"f{i}"] = s.display()
        for i in range(len(goal)):
            fmt = fmt.replace(f"\x00{chr(0x100 + i)}\x00", f"{{f{i}}}")
        formats.append((fmt, fields))

    def baseline(m: int) -> None:
        for fmt, fields in formats[:m]:
            fmt.format(**fields)

    t_base = _timed(baseline, n)
    if [f.format(**kw) for f, kw in formats] != texts:
        raise AssertionError("baseline does not rebuild the same sentences")
    return {
        "render_first_message_per_s": round(n / t_render, 1),
        "render_first_message_warm_per_s": round(n / t_warm, 1),
        "render_user_reply_warm_per_s": round(n / t_reply, 1),
        "str_format_per_s": round(n / t_base, 1),
        "slowdown_vs_str_format": round(t_render / t_base, 1),
        "warm_slowdown_vs_str_format": round(t_warm / t_base, 1),
        "renders": n,
        "d": 8,
    }


if __name__ == "__main__":
    print(run(quick=True))
