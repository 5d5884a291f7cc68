"""status: generation, determinism, an independently recomputed answer, axes, grading."""

import json
from datetime import date

import polars as pl
import pytest

from shopgen.env.state import EpisodeState
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.status import STATUS_PHRASES, answer
from shopgen.verifiers.status import verify
from shopgen.verifiers.text import asserted_statuses, dates_in, status_stated


def test_same_key_same_task(factory):
    assert factory.make("status", 5, 3).row == factory.make("status", 5, 3).row
    assert factory.make("status", 5, 3).row.task_id != factory.make("status", 5, 4).row.task_id


def test_goal_matches_the_orders_table(factory, indexed_catalog_dir):
    orders = CatalogStore(indexed_catalog_dir).read("orders")
    for k in range(8):
        goal = factory.make("status", 4, k).row.decoded("goal")
        order = orders.filter(pl.col("order_id") == goal["order_id"]).row(0, named=True)
        assert goal["status"] == order["status"]
        if order["delivered_at"] is not None:
            assert goal["date"] == order["delivered_at"].date().isoformat()
        elif order["cancelled_at"] is None:
            assert goal["date"] == order["eta"].isoformat()


def test_h_orders_sets_the_history_the_agent_sees(factory):
    for d in (0, 6, 12):
        row = factory.make("status", d, 0).row
        assert len(row.decoded("episode")["order_ids"]) == row.axis("H_orders")


def test_indirect_references_grow_with_d(factory):
    def by_number(d):
        return sum(
            "order_ref"
            in {s["name"] for s in factory.make("status", d, k).row.decoded("user_script")["slots"]}
            for k in range(12)
        )

    assert by_number(0) > by_number(12)


def test_the_first_message_carries_the_order_reference(factory):
    for k in range(6):
        row = factory.make("status", 0, k).row
        goal = row.decoded("goal")
        slots = {s["name"]: s for s in row.decoded("user_script")["slots"]}
        if "order_ref" in slots:
            assert goal["order_id"] in row.messages[1].content


@pytest.mark.parametrize("status", list(STATUS_PHRASES))
def test_the_oracles_phrasing_asserts_exactly_its_status(status):
    text = answer(
        {
            "order_id": "1",
            "status": status,
            "date_kind": None,
            "date": None,
            "tracking_number": None,
        }
    )
    assert status_stated(text, status)


def test_contradictions_and_narrative_mentions():
    assert not status_stated("It was delivered. Actually it was cancelled.", "delivered")
    assert status_stated("The order you placed on March 1 was delivered on March 4.", "delivered")
    assert status_stated("It has shipped and is in transit.", "in_transit")
    assert not status_stated("It is in transit.", "shipped")
    assert asserted_statuses("status: cancelled") == {"cancelled"}


def test_dates_in_common_forms():
    want = date(2026, 3, 5)
    for text in ("on 2026-03-05", "March 5", "Mar 5th, 2026", "5 March", "3/5", "the 5th of March"):
        assert want in dates_in(text, year=2026), text
    assert dates_in("February 30", year=2026) == set()


def _score(row, final_text):
    state = EpisodeState()
    state.turns = 2
    state.final_text = final_text
    return verify(row, state, [])


def test_grading_parts(factory):
    for k in range(10):
        row = factory.make("status", 8, k).row
        goal = row.decoded("goal")
        perfect = _score(row, answer(goal))
        assert perfect.is_correct
        assert perfect.r_task == 1
        if goal["date"]:
            wrong_day = answer({**goal, "date": "2020-01-01"})
            assert _score(row, wrong_day).r_task < 1
        assert _score(row, "").r_task == -1
        other = next(s for s in STATUS_PHRASES if s != goal["status"] and s not in ("shipped",))
        assert not _score(row, answer({**goal, "status": other})).is_correct


def test_oracle_trajectory_is_in_openai_format(factory):
    row = factory.make("status", 10, 1).row
    messages = json.loads(row.oracle)
    assert messages[-1] == {"role": "assistant", "content": answer(row.decoded("goal"))}
    assert all(m["role"] == "assistant" for m in messages)
    assert all(tc["type"] == "function" for m in messages[:-1] for tc in m["tool_calls"])
