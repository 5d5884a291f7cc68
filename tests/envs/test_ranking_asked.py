"""discovery and substitution: a list made without asking what was left out is a guess.

The customer states their preference only when asked, and the facts their first message left
out likewise; the oracle asks for all of them in its first question. Its transcript without
that question recommends the same list, which is now worth at most 0 and never correct, as a
guessed cart, bundle or return already was.
"""

from __future__ import annotations

import json

import pytest

from shopgen.verifiers.ranking import facts_to_ask
from shopgen.verifiers.replay import play

LEVELS = (0, 3, 6, 9, 12)


def _without_questions(messages):
    out = []
    for m in messages:
        calls = [c for c in m.get("tool_calls") or () if c["function"]["name"] != "ask_user"]
        if m.get("tool_calls") and not calls:
            continue
        out.append({**m, "tool_calls": calls} if m.get("tool_calls") else m)
    return out


@pytest.fixture(scope="module", params=["discovery", "substitution", "journey"])
def rows(request, factory):
    return [factory.make(request.param, d, k).row for d in LEVELS for k in range(2)]


def test_the_oracle_asks_and_is_correct(shop_env, rows):
    for row in rows:
        score, _ = play(shop_env, row, json.loads(row.oracle))
        assert score.is_correct, (row.env, row.d)


def test_the_same_list_unasked_earns_at_most_zero(shop_env, rows):
    checked = 0
    for row in rows:
        if row.env == "journey":
            envs = {s["env"] for s in row.decoded("goal")["steps"]}
            if not envs & {"discovery", "substitution"}:
                continue
        score, _ = play(shop_env, row, _without_questions(json.loads(row.oracle)))
        assert score is not None
        assert not score.is_correct, (row.env, row.d)
        if row.env != "journey":
            assert score.r_task <= 0.0, (row.d, score.details)
            assert score.details["asked"] is False
        checked += 1
    assert checked >= 5


def test_the_preference_and_every_left_out_fact_must_be_asked(rows):
    for row in rows:
        if row.env == "journey":
            continue
        script = row.decoded("user_script")
        changed = {name for name, _ in (script.get("switch") or {}).get("changes", ())}
        need = facts_to_ask(row)
        assert "priority" in need
        for s in script["slots"]:
            left_out = s["omitted"] and s["kind"] != "id" and s["name"] not in changed
            assert (s["name"] in need) == (left_out or s["kind"] == "preference"), s["name"]
