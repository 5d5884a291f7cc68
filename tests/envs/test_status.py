"""status: generation, determinism, an independently recomputed answer, axes, grading."""

import json
from datetime import date

import numpy as np
import polars as pl
import pytest

from shopgen.env.state import EpisodeState
from shopgen.env.user import SimulatedUser, compile_script
from shopgen.gen.schedules import order_facts_asked, p_order_clash
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.order_hints import HINT_KINDS
from shopgen.gen.tasks.status import (
    STATUS_PHRASES,
    _sorted_sample,
    answer,
    clarifying_question,
)
from shopgen.taskgen import TaskFactory
from shopgen.testing import scored_with_final
from shopgen.verifiers.status import verify
from shopgen.verifiers.text import (
    asserted_statuses,
    carrier_stated,
    carriers_named,
    date_listed,
    date_stated_alone,
    dates_in,
    only_code_stated,
    possible_statuses,
    status_stated,
)


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


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        (
            "Your order was placed on March 1, was shipped on March 2 and was delivered on March 4.",
            "delivered",
        ),
        ("It was placed on March 1 and has shipped; it is in transit now.", "in_transit"),
        ("It was placed on March 1 and is being processed.", "processing"),
        ("It was placed on March 1 and was cancelled on March 2.", "cancelled"),
    ],
)
def test_an_orders_history_does_not_contradict_its_status(text, truth):
    """An honest answer tells the stages the order passed through on its way to ``truth``."""
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("It was placed on March 1 and was delivered on March 4.", "in_transit"),
        ("It is in transit and was delivered.", "shipped"),
        ("It has shipped and was cancelled.", "cancelled"),
        ("It was placed and is processing.", "placed"),
    ],
)
def test_a_later_stage_contradicts_the_status(text, truth):
    """Claiming a stage the order has not reached (or, cancelled, could not reach) is wrong."""
    assert not status_stated(text, truth)


def test_dates_in_common_forms():
    want = date(2026, 3, 5)
    for text in ("on 2026-03-05", "March 5", "Mar 5th, 2026", "5 March", "3/5", "the 5th of March"):
        assert want in dates_in(text, year=2026), text
    assert dates_in("February 30", year=2026) == set()


def _score(row, final_text, *, looked=True):
    state = EpisodeState()
    state.turns = 2
    state.final_text = final_text
    if looked:
        order_id = row.decoded("goal")["order_id"]
        state.tool_calls.append((1, "order_get_details", {"order_id": order_id}))
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


# -- 2.0: same-item orders, telling details, several facts (issue #9) ----------------------------


def _goals(factory, d, n=16):
    return [factory.make("status", d, k).row.decoded("goal") for k in range(n)]


def test_same_item_orders_and_asked_facts_grow_with_d(factory):
    low, high = _goals(factory, 2), _goals(factory, 12)
    assert p_order_clash(12) > p_order_clash(2)
    assert sum(g["item_ambiguous"] for g in high) > sum(g["item_ambiguous"] for g in low)
    assert sum(g["holders"] for g in high) > sum(g["holders"] for g in low)

    def facts(goals):
        return sum(1 + g["want"].count(",") + g["want"].count(" and ") for g in goals)

    assert order_facts_asked(12) > order_facts_asked(0)
    assert facts(high) > facts(low)


def test_telling_details_get_vaguer_with_d(factory):
    def level(d):
        kinds = [g["hint_kind"] for g in _goals(factory, d, 24) if g["hint_kind"]]
        return sum(HINT_KINDS.index(k) for k in kinds) / max(1, len(kinds))

    assert level(12) > level(6)


def test_the_telling_detail_singles_the_order_out(factory, indexed_catalog_dir):
    """Recomputed from the orders table: the target is the only holder the detail fits."""
    orders = CatalogStore(indexed_catalog_dir).read("orders")
    checked = 0
    for d in (6, 8, 10, 12):
        for k in range(10):
            row = factory.make("status", d, k).row
            goal = row.decoded("goal")
            if not goal["item_ambiguous"]:
                continue
            slots = {s["name"]: s["value"] for s in row.decoded("user_script")["slots"]}
            held = orders.filter(pl.col("order_id").is_in(goal["holder_ids"]))
            assert set(goal["holder_ids"]) <= set(row.decoded("episode")["order_ids"])
            assert goal["order_id"] in goal["holder_ids"]
            assert held.height >= 2
            target = held.filter(pl.col("order_id") == goal["order_id"]).row(0, named=True)
            rest = held.filter(pl.col("order_id") != goal["order_id"])
            kind = goal["hint_kind"]
            hint = slots.get("order_hint", "")
            if kind == "day":
                day = target["placed_at"].date()
                assert slots["order_date"] == f"{day:%B} {day.day}"
                assert day not in {t.date() for t in rest["placed_at"]}
            elif kind == "month":
                assert target["placed_at"].strftime("%B") in hint
                assert target["placed_at"].month not in set(rest["placed_at"].dt.month())
            elif kind == "total":
                assert f"${target['total']:.2f}" in hint
                assert round(target["total"], 2) not in set(rest["total"].round(2))
            elif kind == "price_rank":
                cheapest = target["total"] < rest["total"].min()
                assert cheapest == ("cheap" in hint)
                assert cheapest or target["total"] > rest["total"].max()
            elif kind == "recency":
                latest = target["placed_at"] > rest["placed_at"].max()
                assert latest == ("recent" in hint)
                assert latest or target["placed_at"] < rest["placed_at"].min()
            elif kind == "position":
                newer = int((rest["placed_at"] > target["placed_at"]).sum())
                assert 0 < newer < rest.height
                assert ("second", "third", "fourth", "fifth", "sixth")[newer - 1] in hint
            elif kind == "shipping":
                assert target["ship_method"] not in set(rest["ship_method"])
            elif kind == "arrival":
                arrived = target["status"] == "delivered"
                assert arrived == ("already arrived" in hint)
                assert all((s == "delivered") != arrived for s in rest["status"])
            checked += 1
    assert checked > 0


def test_the_clarifying_question_reveals_the_telling_detail(factory):
    for d in (4, 8, 12):
        for k in range(12):
            row = factory.make("status", d, k).row
            goal = row.decoded("goal")
            script = row.decoded("user_script")
            slots = {s["name"]: s for s in script["slots"]}
            telling = slots.get("order_hint") or slots.get("order_date")
            if not goal["item_ambiguous"] or telling is None:
                continue
            user = SimulatedUser(compile_script(row.user_script), "status", row.seed, row.task_id)
            reply = user.reply(clarifying_question(str(slots["item"]["value"])), 1)["reply"]
            assert str(telling["value"]) in reply


def test_carrier_is_graded_exactly(factory):
    assert carriers_named("Shipped with USPS, tracking 94..") == {"USPS"}
    assert carrier_stated("The carrier is FedEx.", "FedEx")
    assert not carrier_stated("UPS or FedEx", "FedEx")
    rows = [factory.make("status", 12, k).row for k in range(16)]
    with_carrier = [r for r in rows if r.decoded("goal")["carrier"]]
    assert with_carrier, "no d=12 task asks for the carrier"
    for row in with_carrier:
        goal = row.decoded("goal")
        assert _score(row, answer(goal)).is_correct
        other = next(c for c in ("UPS", "USPS", "FedEx", "OnTrac") if c != goal["carrier"])
        wrong = _score(row, answer({**goal, "carrier": other}))
        assert not wrong.is_correct
        assert wrong.r_task < 1


def test_every_level_is_solved_by_its_oracle(factory):
    """The pipeline proves each task; at every d some draw succeeds within its attempts."""
    for d in range(13):
        row = factory.make("status", d, 0).row
        assert row.decoded("goal")["min_turns"] >= 2


def test_detail_only_kinds_make_the_oracle_open_every_candidate(factory):
    """A shipping detail is only in order_get_details: the oracle opens each holder."""
    seen = 0
    for d in (11, 12):
        for k in range(16):
            row = factory.make("status", d, k).row
            goal = row.decoded("goal")
            if goal["hint_kind"] != "shipping":
                continue
            opened = {
                tc["function"]["arguments"]
                for m in json.loads(row.oracle)
                for tc in m.get("tool_calls", [])
                if tc["function"]["name"] == "order_get_details"
            }
            assert len(opened) == len(goal["holder_ids"]) >= 2
            seen += 1
    assert seen > 0


def test_store_orders_equal_the_contexts_frame(factory):
    """The generator lists a customer's orders from the store's records; the clash table ranks
    them by the context's frame: both must list the same orders, in the same order."""
    ctx = factory.ctx
    for user_id in ctx.customers_with_orders(1):
        assert ctx.store.orders_of(user_id) == ctx.orders_of(user_id).to_dicts()


def test_leaf_categories_are_the_taxonomys_leaves(factory):
    from shopgen.gen.tasks.order_hints import category_paths, leaf_categories

    leaves = [c for _, c in factory.ctx.store_taxonomy.leaves()]
    assert list(leaf_categories(factory.ctx).values()) == leaves
    assert all(leaf_categories(factory.ctx)[c.id] is c for c in leaves)
    assert category_paths(factory.ctx) == {c.id: tuple(c.path) for c in leaves}


# -- 2.2: answers graded right without telling the customer (red-team, issue #7) ------------------


def _dated_rows(factory, n=12):
    rows = [factory.make("status", d, k).row for d in (4, 8, 12) for k in range(n)]
    return [r for r in rows if r.decoded("goal")["date"]]


def test_a_list_of_candidate_dates_does_not_state_the_date(factory):
    for row in _dated_rows(factory)[:12]:
        goal = row.decoded("goal")
        day = date.fromisoformat(goal["date"])
        candidates = ", ".join(str(day.fromordinal(day.toordinal() + i)) for i in range(-9, 10))
        listed = answer({**goal, "date_kind": None}) + f" It arrives on one of {candidates}."
        scored = _score(row, listed)
        assert not scored.details["parts"]["date"]
        assert not scored.is_correct


def test_the_orders_own_dates_may_be_mentioned(factory):
    """An honest, verbose answer (placed, shipped, delivered) stays right."""
    for row in _dated_rows(factory)[:12]:
        goal = row.decoded("goal")
        others = " ".join(f"One event was on {d}." for d in goal["order_dates"])
        assert _score(row, f"{answer(goal)} {others}").is_correct
        today = row.decoded("episode")["today"]
        later = date.fromisoformat(max(*goal["order_dates"], today)).toordinal() + 3
        assert not _score(row, f"{answer(goal)} Also {date.fromordinal(later)}.").is_correct


def test_every_orders_tracking_number_does_not_state_the_tracking_number(factory):
    rows = [factory.make("status", d, k).row for d in (8, 10, 12) for k in range(12)]
    tracked = [r for r in rows if r.decoded("goal")["tracking_number"]]
    assert tracked
    for row in tracked:
        goal = row.decoded("goal")
        assert _score(row, answer(goal)).is_correct
        for others in ("1Z000111222333, 94000111222333444", "REF1Z000111222333, REF94000111222"):
            scored = _score(row, f"{answer(goal)} Other tracking numbers: {others}.")
            assert not scored.details["parts"]["tracking"]
            assert not scored.is_correct


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("Your tracking number is 1Z267215455453.", True),
        ("Tracking: 1Z 2672 1545 5453 (order 703-0001488-0481154).", True),
        ("Tracking #`1Z267215455453`, order 703-0001488-0481154, placed 2026-02-19.", True),
        ("Yours is 1Z267215455453; the others are 1Z111111111111 and 1Z222222222222.", False),
        ("Yours is 1Z267215455453, or 1Z 1111 1111 1111.", False),
        ("1Z267215455453, or maybe 94 1111 1111 1111 11 or C-1111-1111-1111.", False),
        # A code glued to a word was no token: a list of them hid all but the right one.
        ("Codes: REF1Z267215455453, REF1Z111111111111, REF94111111111111.", False),
        ("It is 1Z267215455453x or 1Z111111111111x.", False),
        ("It is 1Z267215455453 or 1Z.1111.1111.1111 or 94/1111/1111/1111/11.", False),
        ("Your tracking number: REF1Z267215455453.", True),
        ("Tracking 1Z267215455453 (order no. 703-0001488-0481154).", True),
        # Grouped by a separator the scan did not read while code_stated squashed it: a list of
        # every order's number, the right one among them, passed.
        ("1Z\u00a02672\u00a01545\u00a05453 or 94\u00a01111\u00a01111\u00a01111\u00a011", False),
        ("Yours is 1Z267215455453; others: 1Z\u20091111\u20091111\u20091111.", False),
        ("Yours is 1Z267215455453, or 1Z1111,1111,1111.", False),
        ("Yours is 1Z267215455453 or 1Z\u200b111111111111.", False),
        ("Tracking: 1Z\u00a02672\u00a01545\u00a05453.", True),
        ("Delivered between 2026-02-24/2026-02-26; tracking 1Z267215455453.", True),
        ("Order 703.0001488.0481154, tracking 1Z267215455453.", True),
    ],
)
def test_other_tracking_numbers_are_seen_whatever_their_prefix_or_spacing(text, stated):
    """UPS's "1Z…" numbers and digits grouped by spaces or dashes are tracking numbers too."""
    assert only_code_stated(text, "1Z267215455453") is stated


def test_a_hedge_over_statuses_asserts_or_offers_them_all():
    hedge = "Your order has shipped, or maybe in transit, or delivered, or cancelled."
    # "maybe in transit" is a guess: offered as possible, not asserted; a hedge all the same.
    assert asserted_statuses(hedge) == {"shipped", "delivered", "cancelled"}
    assert possible_statuses(hedge) == {"in_transit"}
    for truth in ("shipped", "in_transit", "delivered", "cancelled"):
        assert not status_stated(hedge, truth)
    assert not status_stated("It is in transit or cancelled.", "in_transit")
    assert status_stated("It is on its way or out for delivery.", "in_transit")


def test_a_negated_status_is_not_asserted():
    assert asserted_statuses("It has not been cancelled.") == set()
    assert status_stated("It was delivered; it has not been cancelled.", "delivered")
    assert status_stated("It hasn't been delivered yet: it is in transit.", "in_transit")
    assert not status_stated("It was not delivered.", "delivered")


def test_an_answer_without_looking_the_order_up_earns_nothing(factory):
    for k in range(8):
        row = factory.make("status", 6, k).row
        blind = _score(row, answer(row.decoded("goal")), looked=False)
        assert not blind.is_correct
        assert blind.r_task <= 0
        assert blind.reward <= 0
        assert _score(row, answer(row.decoded("goal"))).is_correct


# -- 2.2: honest answers as assistants write them are right (false negatives) ----------------------

_TODAY = date(2026, 3, 2)  # a Monday


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("Good news: your order shipped!", "shipped"),
        ("Your order has shipped and is on its way to you.", "shipped"),
        ("It's on its way and should arrive Friday.", "in_transit"),
        ("It's en route to you.", "in_transit"),
        ("It’s out for delivery today!", "in_transit"),
        ("It hasn’t been delivered yet; it is in transit.", "in_transit"),
        ("Your order is **in transit**.", "in_transit"),
        ("Status: in_transit", "in_transit"),
        ("It is being delivered by UPS today.", "in_transit"),
        ("Your delivery is confirmed for March 6; it is in transit.", "in_transit"),
        ("It should have arrived by now, but it is still in transit.", "in_transit"),
        ("It's being processed right now.", "processing"),
        ("Your package arrived on March 4.", "delivered"),
        ("Your order shipped on March 1 and arrived on March 4.", "delivered"),
        ("I have confirmed that your order was delivered.", "delivered"),
        ("You should have received it on Feb 17: it was delivered then.", "delivered"),
        ("- Placed: Feb 25\n- Shipped: Feb 27\n- Delivered: Mar 1", "delivered"),
        ("I see that this order was **cancelled**.", "cancelled"),
    ],
)
def test_honest_phrasings_state_the_status(text, truth):
    assert status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("It's on its way.", "processing"),
        ("It's on its way.", "delivered"),
        ("It was on its way.", "shipped"),
        ("It is on its way or was cancelled.", "shipped"),
        ("Your order arrived.", "in_transit"),
        ("- Placed: Feb 25\n- Shipped: Feb 27\n- Delivered: Mar 1", "in_transit"),
        ("It will be delivered on March 6.", "in_transit"),
        ("Once it arrives you can track it.", "delivered"),
        ("It shipped and arrived and was cancelled.", "delivered"),
    ],
)
def test_the_new_readings_let_no_wrong_status_through(text, truth):
    assert not status_stated(text, truth)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("It was delivered on December 21.", date(2025, 12, 21)),  # last year's, not this one's
        ("It was delivered on Dec. 21st.", date(2025, 12, 21)),
        ("It arrives **March 6**.", date(2026, 3, 6)),
        ("It was delivered yesterday.", date(2026, 3, 1)),
        ("It's out for delivery today.", _TODAY),
        ("It should arrive tomorrow (March 3).", date(2026, 3, 3)),
        ("It should arrive this Friday.", date(2026, 3, 6)),
        ("It should arrive by Friday.", date(2026, 3, 6)),
        ("It was delivered last Thursday.", date(2026, 2, 26)),
        ("It should arrive Friday, March 6.", date(2026, 3, 6)),
    ],
)
def test_dates_as_assistants_write_them(text, day):
    allowed = frozenset({date(2026, 2, 20), _TODAY})
    assert date_stated_alone(text, day, year=2026, allowed=allowed, today=_TODAY)


def test_weekdays_do_not_list_candidate_dates():
    every = "It arrives on Monday, Tuesday, Wednesday, Thursday, Friday, Saturday or Sunday."
    allowed = frozenset({date(2026, 2, 27), _TODAY})
    for day in (date(2026, 3, 3), date(2026, 3, 6), date(2026, 2, 28)):
        assert not date_stated_alone(every, day, year=2026, allowed=allowed, today=_TODAY)
    wrong = "It should arrive Thursday."
    assert not date_stated_alone(wrong, date(2026, 3, 6), year=2026, allowed=allowed, today=_TODAY)


def test_carrier_names_as_written():
    assert carrier_stated("It's with Federal Express.", "FedEx")
    assert carrier_stated("Shipped via United Parcel Service.", "UPS")
    assert carrier_stated("Carrier: OnTrac. Let me know if you have any follow-ups!", "OnTrac")
    assert not carrier_stated("Carrier: OnTrac, or UPS.", "OnTrac")


def test_honest_answers_replayed_keep_the_oracles_reward(factory):
    """Replayed with the oracle's tool calls, an assistant-style answer scores as the oracle."""

    seen = 0
    for d in (2, 6, 10, 12):
        for k in range(6):
            row = factory.make("status", d, k).row
            goal = row.decoded("goal")
            words = {
                "in_transit": "It's on its way",
                "shipped": "Good news: your order shipped",
                "delivered": "Your package arrived",
                "cancelled": "I see this order was **cancelled**",
                "processing": "It's being processed",
                "placed": "It's been placed but hasn't been processed yet",
            }[goal["status"]]
            text = f"Thanks for reaching out about order **{goal['order_id']}**!\n\n{words}."
            if goal["date"]:
                day = date.fromisoformat(goal["date"])
                text += f" That's **{day:%b}. {day.day}**."
            if goal["tracking_number"]:
                text += f" Tracking #: `{goal['tracking_number']}`."
            if goal["carrier"]:
                name = {"FedEx": "Federal Express"}.get(goal["carrier"], goal["carrier"])
                text += f" It's with {name}."
            text += "\n\nAnything else I can help with? Happy to take follow-ups!"
            score, oracle_score = scored_with_final(factory.env, row, text)
            assert score.is_correct, (text, score.details)
            assert score.reward == oracle_score.reward
            seen += 1
    assert seen


@pytest.mark.parametrize("population", [1, 2, 3, 4, 6])
def test_sorted_sample_draws_as_numpy_choice(population):
    # The asked facts are drawn without rng.choice's overhead: the same picks, and the stream
    # left exactly where choice leaves it (every later draw of the task depends on it).
    for seed in range(300):
        for k in range(population + 1):
            ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
            picks = _sorted_sample(ours, population, k)
            assert picks == sorted(numpys.choice(population, size=k, replace=False).tolist())
            assert ours.bit_generator.state == numpys.bit_generator.state


def test_prompt_asks_for_the_eta_of_every_order_not_delivered(factory):
    """An ETA is graded for placed and processing orders too: the prompt must ask for it.

    Status 2.2's prompt asked for "the expected delivery date if it is on its way", and a
    processing order is not on its way: an agent doing as told answered "it is processing"
    and lost the date part (7 of 40 tasks at d = 0 on 5k products).
    """
    found = None
    for k in range(80):
        row = factory.make("status", 0, k).row
        goal = json.loads(row.goal)
        if goal["status"] in ("placed", "processing"):
            found = row, goal
            break
    assert found is not None, "no unshipped order drawn in 80 tasks"
    row, goal = found
    assert goal["date_kind"] == "eta"
    assert goal["date"]
    system = row.messages[0].content.lower()
    assert "not delivered yet" in system
    assert "processing" in system
    assert "carrier" in system  # graded when asked, as the tracking number is


def test_a_bare_list_of_the_orders_dates_does_not_state_the_date(factory):
    """Every date of the order, unlabelled, passed as stating the delivery or expected one.

    "Your order is in transit. Dates: 2026-02-14, 2026-02-15, 2026-02-20." names only the
    order's own dates (each allowed), so it was right in 59 of 59 dated tasks of an audit
    while not saying which is the expected day. Labelled, the same dates stay right.
    """
    rows = [r for r in _dated_rows(factory) if len(set(r.decoded("goal")["order_dates"])) > 1]
    assert rows, "no dated task of the fixture has two dates"
    for row in rows[:12]:
        goal = row.decoded("goal")
        dates = sorted(set(goal["order_dates"]))
        for joined in (", ".join(dates), "\n- ".join(dates), " and ".join(dates)):
            scored = _score(row, f"{answer(goal)}\nDates: {joined}.")
            assert not scored.details["parts"]["date"], joined
        labelled = " ".join(f"One event was on {d}." for d in dates)
        assert _score(row, f"{answer(goal)} {labelled}").is_correct


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("Placed on Feb 14, shipped Feb 15, expected Feb 20.", False),
        ("Timeline: Feb 14 - placed; Feb 15 - shipped; Feb 20 - expected delivery.", False),
        ("- Placed: 2026-02-14\n- Shipped: 2026-02-15\n- Expected: 2026-02-20", False),
        ("It should arrive on 2026-02-20 (February 20).", False),
        ("Expected delivery: Friday, February 20, 2026.", False),
        ("Dates: 2026-02-14, 2026-02-15, 2026-02-20.", True),
        ("It arrives Feb 15 or Feb 20.", True),
        ("- 2026-02-14\n- 2026-02-20", True),
        ("2/14 / 2/20", True),
    ],
)
def test_labelled_dates_are_no_list(text, listed):
    assert date_listed(text, date(2026, 2, 20), year=2026, today=date(2026, 3, 2)) is listed


_NOT_ARRIVED = ("no sign of it", "not arrive", "still nothing", "waited long enough", "waiting on")


def test_no_first_message_claims_a_delivered_or_cancelled_order_has_not_arrived(shop_env):
    """ "Still nothing from my order with the smartphone!" asked about a delivered order.

    With a same-item order in transit beside it, the complaint pointed an honest agent at
    that one (2 of 160 tasks at d = 4–12 on 5k products; 15 of 160 made the false claim).
    """
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    rows = [factory.make("status", d, k).row for d in (4, 8, 12) for k in range(30)]
    done = [r for r in rows if r.decoded("goal")["status"] in ("delivered", "cancelled")]
    assert done, "no task of the fixture asks about a delivered or cancelled order"
    for row in done:
        first = shop_env.reset(row)["messages"][-1]["content"].lower()
        assert not [p for p in _NOT_ARRIVED if p in first], first


# -- 2.14: a fact not asked for, said, must be the order's ---------------------------------------


def test_the_goal_holds_the_orders_tracking_and_carrier_asked_or_not(factory, indexed_catalog_dir):
    orders = CatalogStore(indexed_catalog_dir).read("orders")
    for k in range(12):
        goal = factory.make("status", 3, k).row.decoded("goal")
        order = orders.filter(pl.col("order_id") == goal["order_id"]).row(0, named=True)
        assert (goal["order_tracking"], goal["order_carrier"]) == (
            order["tracking_number"],
            order["carrier"],
        )


def _unasked(factory, shipped: bool):
    """A task whose goal asks neither tracking nor carrier, of a shipped order or not."""
    for k in range(200):
        row = factory.make("status", 0, k).row
        goal = row.decoded("goal")
        if not goal["tracking_number"] and bool(goal["order_tracking"]) == shipped:
            return row, goal
    raise AssertionError("no such task in 200")


@pytest.mark.parametrize("shipped", [True, False])
def test_a_tracking_number_or_carrier_not_asked_for_is_wrong_when_not_the_orders(factory, shipped):
    row, goal = _unasked(factory, shipped)
    told = answer(goal)
    assert _score(row, told).is_correct
    other = next(c for c in ("UPS", "USPS", "FedEx") if c != goal["order_carrier"])
    assert not _score(row, f"{told} It ships with {other}.").is_correct
    assert not _score(row, f"{told} Tracking number: 1Z999999999999.").is_correct
    if shipped:  # the order's own, said unasked, is no fault
        said = f"{told} It ships with {goal['order_carrier']}, tracking {goal['order_tracking']}."
        assert _score(row, said).is_correct


def test_a_date_of_a_cancelled_order_must_be_one_of_its_own(factory):
    for k in range(300):
        row = factory.make("status", 0, k).row
        goal = row.decoded("goal")
        if goal["status"] == "cancelled":
            break
    else:
        raise AssertionError("no cancelled order in 300 tasks")
    told = answer(goal)
    assert _score(row, told).is_correct
    assert not _score(row, f"{told} It is expected to be delivered on March 6, 2031.").is_correct
    cancelled_on = date.fromisoformat(goal["order_dates"][-1]).strftime("%B %-d, %Y")
    assert _score(row, f"{told} It was cancelled on {cancelled_on}.").is_correct
