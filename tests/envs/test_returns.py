"""returns: determinism, policy-consistent ground truth, θ effects, oracle, degenerate policies."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from shopgen.gen.tasks.base import spoken_list
from shopgen.gen.tasks.returns import ASK_PHRASES
from shopgen.schemas.errors import ShopgenError
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.testing import scored_with_final
from shopgen.verifiers.replay import play
from shopgen.verifiers.text import not_eligible_stated, refusal_reasons_stated

D_ALL = range(13)


@pytest.fixture(scope="module")
def tasks(factory):
    return [factory.make("returns", d, k) for d in D_ALL for k in range(3)]


def test_bad_input_rejected(factory):
    with pytest.raises(ShopgenError):
        factory.make("returns", -1, 0)
    with pytest.raises(ShopgenError):
        factory.make("returnz", 3, 0)


def test_same_key_same_task(shop_env, tasks):
    again = TaskFactory(shop_env, seed=0).make("returns", 7, 1)
    first = next(g for g in tasks if g.row.d == 7 and g.row.task_id == again.row.task_id)
    assert first.row == again.row


def test_oracle_correct_at_every_d(shop_env, tasks):
    assert {g.row.d for g in tasks} == set(D_ALL)
    for g in tasks:
        score, _ = play(shop_env, g.row, json.loads(g.row.oracle))
        assert score.is_correct, g.row.task_id
        assert score.reward == pytest.approx(0.9), g.row.task_id


def test_goal_matches_the_tools_and_visible_orders(shop_env, tasks):
    """Eligibility recomputed through the runtime's own check on the episode's line."""
    for g in tasks:
        goal, episode = g.row.decoded("goal"), g.row.decoded("episode")
        assert goal["order_id"] in episode["order_ids"]  # the peer's bug: invisible orders
        shop_env.reset(g.row)
        _, _, _, _ = shop_env.step(
            assistant_message(
                0,
                [
                    (
                        "return_check_eligibility",
                        {
                            "order_id": goal["order_id"],
                            "product_id": goal["product_id"],
                            "reason": goal["reason"],
                            **({"variant_id": goal["variant_id"]} if goal["variant_id"] else {}),
                        },
                    )
                ],
            )
        )
        ((_, name, _),) = shop_env.state.tool_calls
        assert name == "return_check_eligibility"
        assert goal["days_since_delivery"] <= goal["window_days"] or not goal["eligible"]
        said = [g.row.messages[1].content] + [
            str(s["value"]) for s in g.row.decoded("user_script")["slots"]
        ]
        assert not any(goal["product_id"] in t for t in said)


def test_eligibility_by_independent_check(shop_env, tasks):
    """The runtime's eligibility tool, asked about the goal's line, agrees with the goal."""
    for g in tasks:
        goal = g.row.decoded("goal")
        shop_env.reset(g.row)
        args = {"order_id": goal["order_id"], "product_id": goal["product_id"]}
        args["reason"] = goal["reason"]
        if goal["variant_id"]:
            args["variant_id"] = goal["variant_id"]
        obs, _, _, _ = shop_env.step(assistant_message(0, [("return_check_eligibility", args)]))
        info = json.loads(obs["messages"][0]["content"])
        assert info["eligible"] == goal["eligible"]
        assert info["days_since_delivery"] == goal["days_since_delivery"]
        assert info["window_days"] == goal["window_days"]


def test_axes_have_effects(shop_env):
    few = TaskFactory(shop_env, seed=1, overrides={"H_orders": 1})
    many = TaskFactory(shop_env, seed=1, overrides={"H_orders": 5})
    n_few = [len(few.make("returns", 4, k).row.decoded("episode")["order_ids"]) for k in range(6)]
    n_many = [len(many.make("returns", 4, k).row.decoded("episode")["order_ids"]) for k in range(6)]
    assert max(n_few) == 1
    assert sum(n_many) > sum(n_few)

    def omitted(p):
        f = TaskFactory(shop_env, seed=1, overrides={"p_missing": p})
        rows = [f.make("returns", 4, k).row for k in range(6)]
        return sum(s["omitted"] for r in rows for s in r.decoded("user_script")["slots"])

    assert omitted(1.0) > omitted(0.0) == 0
    sw = TaskFactory(shop_env, seed=1, overrides={"p_switch": 1.0})
    switched = [sw.make("returns", 6, k).row for k in range(12)]
    assert any(json.loads(r.user_script)["switch"] for r in switched)


def test_edge_days_grow_with_d(tasks):
    def edge_share(ds):
        goals = [g.row.decoded("goal") for g in tasks if g.row.d in ds]
        return sum(abs(g["days_since_delivery"] - g["window_days"]) <= 2 for g in goals) / len(
            goals
        )

    assert edge_share(range(9, 13)) > edge_share(range(0, 2))


def _degenerate(goal, row):
    oid = goal["order_id"]
    yield "nothing", [assistant_message(0, "")]
    yield "one_turn", [assistant_message(0, "Your return is started.")]
    yield (
        "every_reason",
        [
            assistant_message(
                0,
                [
                    (
                        "return_check_eligibility",
                        {"order_id": oid, "product_id": goal["product_id"]},
                    )
                ],
            ),
            assistant_message(
                0,
                "Not eligible: the window has passed, it is final sale, perishable, personalised and hygiene.",
            ),
        ],
    )
    yield (
        "ask_forever",
        [assistant_message(0, [("ask_user", {"question": "Anything else?"})])]
        * (row.axis("T_max") + 1),
    )
    yield (
        "made_up",
        [
            assistant_message(
                0,
                [
                    (
                        "return_start",
                        {
                            "order_id": oid,
                            "product_id": "B0FAKE0000",
                            "reason": "changed_mind",
                            "method": "mail",
                        },
                    )
                ],
            ),
            assistant_message(0, "Done."),
        ],
    )


def test_degenerate_policies_never_correct(shop_env, tasks):
    rewards = []
    for g in tasks:
        goal = g.row.decoded("goal")
        for name, messages in _degenerate(goal, g.row):
            score, _ = play(shop_env, g.row, messages)
            assert not score.is_correct, (name, g.row.task_id)
            assert -1.0 <= score.reward <= 1.0
            rewards.append(score.reward)
    assert sum(rewards) / len(rewards) <= 0


def test_return_everything_is_wrong(shop_env, tasks):
    """Starting returns of every line of every order is never correct.

    Only tasks whose turn budget leaves room for the extra starts after the oracle's own
    (at T_max the episode ends before they run) say anything.
    """
    tried = 0
    for g in [t for t in tasks if t.row.decoded("goal")["eligible"]]:
        goal = g.row.decoded("goal")
        calls = []
        shop_env.reset(g.row)
        for oid in g.row.decoded("episode")["order_ids"]:
            for ln in shop_env.store.lines_of(oid):
                calls.append(
                    (
                        "return_start",
                        {
                            "order_id": oid,
                            "product_id": ln["product_id"],
                            "reason": goal["reason"],
                            "method": goal["method"],
                        },
                    )
                )
        oracle = json.loads(g.row.oracle)
        others = [c for c in calls if c[1]["product_id"] != goal["product_id"]]
        if not others or len(oracle) + 1 > g.row.axis("T_max"):
            continue
        extra = assistant_message(0, others[: g.row.axis("B_tool")])
        score, state = play(shop_env, g.row, [*oracle[:-1], extra, assistant_message(0, "done")])
        n_started = len(state.extra.get("returns", [])) + len(state.extra.get("exchanges", []))
        assert n_started >= 1
        assert n_started == 1 or not score.is_correct
        tried += 1
    assert tried > 0


def test_breaking_one_part_lowers_r_task(shop_env, tasks):
    for g in tasks:
        goal = g.row.decoded("goal")
        if not (goal["eligible"] and goal["action"] == "return"):
            continue
        oracle = json.loads(g.row.oracle)
        good, _ = play(shop_env, g.row, oracle)
        bad = json.loads(json.dumps(oracle))
        for m in bad:
            for c in m.get("tool_calls", []):
                if c["function"]["name"] == "return_start":
                    args = json.loads(c["function"]["arguments"])
                    args["reason"] = (
                        "defective" if args["reason"] != "defective" else "changed_mind"
                    )
                    c["function"]["arguments"] = json.dumps(args)
        worse, _ = play(shop_env, g.row, bad)
        if worse.details.get("started", 1):
            assert worse.r_task < good.r_task


# -- 2.0: same-item lines across orders, told apart by a detail (issue #9) -----------------------


def test_same_item_lines_grow_with_d_and_the_detail_singles_the_order_out(shop_env, factory):
    def goals(d, n=12):
        return [factory.make("returns", d, k).row for k in range(n)]

    low, high = goals(0), goals(12)
    assert sum(r.decoded("goal")["item_ambiguous"] for r in high) > sum(
        r.decoded("goal")["item_ambiguous"] for r in low
    )
    checked = 0
    for row in high:
        goal = row.decoded("goal")
        if not goal["holder_ids"]:
            continue
        slots = {s["name"]: s["value"] for s in row.decoded("user_script")["slots"]}
        assert goal["order_id"] in goal["holder_ids"]
        assert set(goal["holder_ids"]) <= set(row.decoded("episode")["order_ids"])
        held = [shop_env.store.order(oid) for oid in goal["holder_ids"]]
        rest = [o for o in held if o["order_id"] != goal["order_id"]]
        target = shop_env.store.order(goal["order_id"])
        hint = slots.get("order_hint", "")
        if goal["hint_kind"] == "price_rank":
            cheapest = all(target["total"] < o["total"] for o in rest)
            assert cheapest == ("cheap" in hint)
        elif goal["hint_kind"] == "position":
            newer = sum(o["placed_at"] > target["placed_at"] for o in rest)
            assert 0 < newer < len(rest)
        elif goal["hint_kind"] == "shipping":
            assert all(o["ship_method"] != target["ship_method"] for o in rest)
        elif goal["hint_kind"] == "day":
            assert all(o["placed_at"].date() != target["placed_at"].date() for o in rest)
        checked += 1
    assert checked > 0


# -- 2.1: honest refusals as assistants write them are right (false negatives) ---------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "Unfortunately, you can't return it because it's past the 30-day return window.",
            "window",
        ),
        (
            "I'm sorry, we can't accept a return for this item: it's outside our return period.",
            "window",
        ),
        ("This item isn't returnable: the return period for this item has ended.", "window"),
        ("This item is non-returnable — it was a final-sale item.", "final_sale"),
        ("Unfortunately this item can’t be returned because it is perishable.", "perishable"),
        (
            "I'm not able to process a return for this item because it was customized for you.",
            "personalised",
        ),
        (
            "Even though you're still within the 30-day return window, opened hygiene items "
            "can't be returned.",
            "hygiene",
        ),
        (
            "**This item is not eligible for return.** Reason: it's an opened *personal-care* item.",
            "hygiene",
        ),
    ],
)
def test_honest_refusals_are_read(text, reason):
    assert not_eligible_stated(text)
    assert refusal_reasons_stated(text) == {reason}


@pytest.mark.parametrize(
    "text",
    [
        "You can return it within 30 days.",
        "We can take it back by mail.",
        "I'm able to return it for you.",
    ],
)
def test_an_offer_to_return_is_no_refusal(text):
    assert not not_eligible_stated(text)


def test_every_reason_at_once_is_still_wrong():
    text = (
        "You can't return it: the return window has expired, it was a final sale, it is "
        "perishable, it is customized and it is a hygiene item."
    )
    assert len(refusal_reasons_stated(text)) == 5


#: How an assistant words each refusal reason.
_REASON_WORDS = {
    "window": "it's outside our 30-day return period",
    "final_sale": "it was a final-sale item",
    "perishable": "perishable items can't be taken back",
    "personalised": "it was customized for you",
    "hygiene": "opened hygiene products aren't returnable",
}


def _assert_graded_as_the_oracle(factory, row, text):
    """The oracle's calls with ``text`` as the final message score as the oracle does."""
    score, oracle_score = scored_with_final(factory.env, row, text)
    assert score.is_correct, (text, score.details)
    assert score.reward == oracle_score.reward


def test_honest_refusals_replayed_keep_the_oracles_reward(factory):
    """Replayed with the oracle's tool calls, an assistant-style refusal scores as the oracle."""

    seen = 0
    for d in range(13):
        for k in range(6):
            row = factory.make("returns", d, k).row
            goal = row.decoded("goal")
            if goal["eligible"]:
                continue
            text = (
                f"Thanks for checking about order {goal['order_id']}.\n\nI'm sorry, but you "
                f"can’t return it because {_REASON_WORDS[goal['refusal']]}.\n\nAnything else?"
            )
            _assert_graded_as_the_oracle(factory, row, text)
            seen += 1
    assert seen


# -- 2.2: the red-team's audit (hackord) ---------------------------------------------------------


def _with_start_args(oracle: list[dict], **changes: str) -> list[dict]:
    """The oracle's messages with its return_start/exchange_start arguments changed."""
    out = json.loads(json.dumps(oracle))
    for m in out:
        for c in m.get("tool_calls", []):
            if c["function"]["name"] in ("return_start", "exchange_start"):
                args = {**json.loads(c["function"]["arguments"]), **changes}
                c["function"]["arguments"] = json.dumps(args)
    return out


def test_a_start_with_the_wrong_reason_and_method_earns_nothing(shop_env, tasks):
    """Starting a return on the right line with the customer's reason and method both wrong
    mis-executes the request: it earns at most 0, and never the efficiency term.

    Before 2.2 ``only_one`` was a fifth part that a single start always got right, so line,
    action and only_one made 3/5 → r_task 0.2 and reward ≈ 0.3: skipping the questions
    about reason and method paid.
    """
    tried = 0
    for g in tasks:
        goal = g.row.decoded("goal")
        if not (goal["eligible"] and goal["action"] == "return"):
            continue
        reason = "defective" if goal["reason"] != "defective" else "changed_mind"
        shop_env.reset(g.row)
        for method in ("mail", "drop_off", "pickup"):
            if method == goal["method"]:
                continue
            bad = _with_start_args(json.loads(g.row.oracle), reason=reason, method=method)
            score, state = play(shop_env, g.row, bad)
            if not state.extra.get("returns"):
                continue  # the store refused this method for the item
            assert score.r_task <= 0, g.row.task_id
            assert score.reward <= 0, g.row.task_id
            tried += 1
            break
    assert tried > 0


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but it's too late to return this item: the return period is over.",
        "Unfortunately it's too late to exchange it — your return window has closed.",
        "I checked: the return window for this order has expired, so I can't start anything.",
        "Sorry, the return period for this item ended on March 3.",
    ],
)
def test_too_late_and_an_ended_window_say_not_eligible(text):
    """An honest window refusal that never says "not eligible" is a refusal (2.2).

    "it's too late to return this item … the return period is over" was read as naming the
    window but refusing nothing: the oracle's tool calls with it scored −0.5, not 0.9.
    """
    assert not_eligible_stated(text)
    assert refusal_reasons_stated(text) == {"window"}


@pytest.mark.parametrize(
    "text",
    [
        "Good news: it's not too late to return it, I can start the return now.",
        "It isn't too late to exchange it.",
        "Your return window is not over yet, so you can send it back.",
        "The return period isn't over until March 3.",
    ],
)
def test_not_too_late_is_no_refusal(text):
    assert not not_eligible_stated(text)


def _refusal_rows(factory, n=12):
    rows = [factory.make("returns", d, k).row for d in range(0, 13, 2) for k in range(n)]
    return [r for r in rows if not r.decoded("goal")["eligible"]]


def _checks(shop_env, row, order_ids):
    """return_check_eligibility of every line of ``order_ids``, in turns of B_tool calls."""
    calls = [
        ("return_check_eligibility", {"order_id": oid, "product_id": ln["product_id"]})
        for oid in order_ids
        for ln in shop_env.store.lines_of(oid)
    ]
    size = row.axis("B_tool")
    listing = assistant_message(0, [("orders_list", {})])  # shows the ids the checks use
    return [
        listing,
        *(assistant_message(0, calls[i : i + size]) for i in range(0, len(calls), size)),
    ]


def test_a_refusal_after_checking_every_line_is_not_grounded(shop_env, factory):
    """Checking every line of every order, then refusing, is right only by luck: the refusal
    says nothing of which line it is about (2.4).

    "Check every line, say the return window has passed" was correct on 20 % of returns
    tasks (every not-eligible one refused for the window) without finding the item.
    """
    tried = 0
    for row in _refusal_rows(factory):
        goal = row.decoded("goal")
        meant = {goal["order_id"], *goal["holder_ids"]}
        others = [o for o in row.decoded("episode")["order_ids"] if o not in meant]
        checks = _checks(shop_env, row, row.decoded("episode")["order_ids"])
        if not others or len(checks) + 1 > row.axis("T_max"):
            continue
        final = json.loads(row.oracle)[-1]
        score, _ = play(shop_env, row, [*checks, final])
        assert not score.is_correct, row.task_id
        assert score.r_task <= 0, row.task_id
        tried += 1
    assert tried > 0


def test_checking_every_line_the_customer_could_mean_stays_right(shop_env, factory):
    """An agent unsure which order is meant may check every order holding the item."""
    tried = 0
    for row in _refusal_rows(factory):
        goal = row.decoded("goal")
        holders = goal["holder_ids"] or [goal["order_id"]]
        checks = _checks(shop_env, row, holders)
        if len(checks) + 1 > row.axis("T_max"):
            continue
        score, _ = play(shop_env, row, [*checks, json.loads(row.oracle)[-1]])
        assert score.is_correct, row.task_id
        tried += 1
    assert tried > 0


def test_an_order_id_written_with_blanks_still_counts_as_checked(shop_env, factory):
    """The tools read " 123-… " as the order (they strip it); the verifier must as well."""
    row = _refusal_rows(factory)[0]
    goal = row.decoded("goal")
    args = {"order_id": f" {goal['order_id']} ", "product_id": goal["product_id"]}
    if goal["variant_id"] is not None:
        args["variant_id"] = goal["variant_id"]
    listing = assistant_message(0, [("orders_list", {})])
    check = assistant_message(0, [("return_check_eligibility", args)])
    score, _ = play(shop_env, row, [listing, check, json.loads(row.oracle)[-1]])
    assert score.is_correct


def test_order_rank_words_count_only_days_the_tools_show():
    """ "The second most recent one" was drawn from hours the tools never show.

    Holders placed 2026-01-22 05:12 (the target), 2026-01-16 and 2026-01-22 13:36: both
    listed as placed on 2026-01-22, so no agent could tell which was "second most recent"
    (returns d = 12, 1 of 40 tasks on 5k products).
    """
    from datetime import datetime

    import numpy as np

    from shopgen.gen.tasks.order_hints import _Said

    def order(oid: str, when: str) -> dict:
        return {"order_id": oid, "placed_at": datetime.fromisoformat(when)}

    target = order("A", "2026-01-22T05:12:58")
    tied = [order("B", "2026-01-16T12:30:18"), order("C", "2026-01-22T13:36:56")]
    said = _Said(None, target, tied, "dog chews", np.random.default_rng(0), False)
    assert said.words("position") is None
    assert said.words("recency") is None
    apart = [order("B", "2026-01-16T12:30:18"), order("C", "2026-01-23T01:00:00")]
    said = _Said(None, target, apart, "dog chews", np.random.default_rng(0), False)
    assert said.words("position") == "the second most recent of my orders with that item"
    late = _Said(None, order("C", "2026-01-23T01:00:00"), [target], "x", None, False)
    assert late.words("recency") == "the most recent one"


def test_no_listed_order_is_pending_after_the_worlds_day(shop_env, tasks):
    """The store's statuses are those at the end of the catalog's day; a return's day may be
    months later, when an order then in transit has long arrived. Such an order was listed
    "in_transit" with an expected date before the episode's day (a quarter of returns tasks
    at 5k); every listed order must be one whose status still holds on the episode's day."""
    catalog_today = date.fromisoformat(shop_env.store.manifest.config["today"])
    later = 0
    for g in tasks:
        today = date.fromisoformat(g.row.decoded("episode")["today"])
        later += today > catalog_today
        for order_id in g.row.decoded("episode")["order_ids"]:
            order = shop_env.store.order(order_id)
            if order["status"] not in ("delivered", "cancelled"):
                assert today <= catalog_today, (g.row.task_id, order_id, order["status"])
    assert later  # the case the test is about occurs


def test_a_middle_rank_counts_only_the_orders_holding_the_item():
    """ "The second most recent one" also reads as the second most recent order of all, which
    may hold the item too: listed newest first A (no such item), B, C, D (all holding it),
    target C was B by that reading (7 of 20 status and 1 of 6 returns tasks with this hint
    at d 6-12 on 5k products). The words say which orders the rank counts."""
    from datetime import datetime

    from shopgen.gen.tasks.order_hints import _Said

    def order(oid: str, day: int) -> dict:
        return {"order_id": oid, "placed_at": datetime(2026, 1, day, 12)}

    others = [order("B", 20), order("D", 10)]
    said = _Said(None, order("C", 15), others, "dog chews", None, False)
    assert said.words("position") == "the second most recent of my orders with that item"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # The tool's explanation of a faulty item past its window opens with the rule that
        # faulty items "can always be returned, even final-sale, perishable, personalised or
        # opened hygiene items" (27 of 61 window refusals at d 0-12 on 5k products): relayed,
        # it named all five reasons.
        (
            "Items that arrive defective can always be returned, even final-sale, perishable, "
            "personalised or opened hygiene items, but clothing can be returned within 90 days "
            "of delivery and it was delivered 104 days ago, outside the window, so it is not "
            "eligible.",
            "window",
        ),
        (
            "Damaged items are normally accepted even if they're final sale or perishable "
            "items, but yours was delivered 20 days ago, past the 15-day return window, so it "
            "can't be returned.",
            "window",
        ),
        ("Unfortunately the return deadline has passed, so it is not eligible.", "window"),
        (
            "Electronics can only be returned within 15 days of delivery, and it was delivered "
            "20 days ago, so it is not eligible.",
            "window",
        ),
        ("It was delivered more than 90 days ago, so it can't be returned.", "window"),
        (
            "Returns must be made within 30 days of delivery and it has been 45 days, so I "
            "cannot start a return.",
            "window",
        ),
        ("I'm afraid a return isn't possible: the 30-day window has passed.", "window"),
        ("Sorry, this item doesn't qualify for a return because it is perishable.", "perishable"),
        ("The window has closed, so returning it is not possible.", "window"),
        ("This item was sold as final, so it is not eligible for a return.", "final_sale"),
        ("Sale items marked as final can't be returned.", "final_sale"),
        ("Items with custom engraving are not returnable.", "personalised"),
        (
            "Since this item was made just for you, it is not eligible for return.",
            "personalised",
        ),
        ("Since it has been opened, it can't be returned for health reasons.", "hygiene"),
        ("Opened cosmetics can't be returned.", "hygiene"),
        ("Opened items like this one are not returnable, for hygienic reasons.", "hygiene"),
    ],
)
def test_more_honest_refusals_are_read(text, reason):
    assert not_eligible_stated(text)
    assert refusal_reasons_stated(text) == {reason}


@pytest.mark.parametrize(
    ("text", "reasons"),
    [
        # A wrong or extra reason stays in: the context stripped is the faulty-item rule only.
        ("This is a final-sale item and can't be returned.", {"final_sale"}),
        (
            "Even though you changed your mind, perishable items cannot be returned.",
            {"perishable"},
        ),
        (
            "Even though it hasn't been opened, it is past the 60-day window.",
            {"window"},
        ),
        ("It was never opened, but the return period has ended.", {"window"}),
        (
            "The return window has passed, and it is a final-sale item too.",
            {"window", "final_sale"},
        ),
        (
            "Returns are accepted within 60 days of delivery; opened hygiene items are not.",
            {"hygiene"},
        ),
    ],
)
def test_readings_keep_wrong_and_extra_reasons(text, reasons):
    assert refusal_reasons_stated(text) == reasons


def test_the_named_item_shows_in_every_holders_listed_title(shop_env, factory):
    """orders_list and order_get_details cut titles at 60 characters. The item's noun past
    the cut ("… Birthstone Crystal Hoo…" for earrings) hid the target (14 of 156 tasks at
    d 0-12 on 5k products) or a same-item order the rank counts (11 of 51 ambiguous tasks):
    "the more expensive one" then compared orders the agent could not see hold the item."""
    from shopgen.env.tools.orders import listed_titles

    store = shop_env.store
    shown = dict(zip(store.line_list("product_id"), listed_titles(store), strict=True))
    for d in (0, 4, 8, 10, 12):
        for k in range(16):
            row = factory.make("returns", d, k).row
            goal = row.decoded("goal")
            noun = next(
                s["value"] for s in row.decoded("user_script")["slots"] if s["name"] == "item"
            )
            for order_id in goal["holder_ids"] or [goal["order_id"]]:
                held = [
                    p
                    for p in store.lines_columns(order_id, "product_id")[0]
                    if noun in store.product(p)["title"].lower()
                ]
                assert held, (row.task_id, order_id)
                assert all(noun in shown[p].lower() for p in held), (row.task_id, order_id)


@pytest.mark.parametrize(
    "question",
    ["Has the item been opened?", "Is it unused?", "Is it still sealed?", "Have you used it?"],
)
def test_the_customer_knows_whether_their_hygiene_item_was_opened(shop_env, factory, question):
    """Whether a hygiene item was opened decides its return, and the customer holds it:
    "Has the item been opened?" got "Sure: the item is baby bottles" and "Is it unused?"
    "I'm not sure, it doesn't matter to me" (honest-agent audit)."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0})
    seen = set()
    for d in (0, 3, 6, 9, 12):
        for k in range(12):
            row = factory.make("returns", d, k).row
            condition = next(iter(row.decoded("episode")["item_condition"].values()))
            slots = {s["name"]: s for s in row.decoded("user_script")["slots"]}
            if "condition" not in slots:
                continue
            assert slots["condition"]["value"] == condition
            shop_env.reset(row)
            obs, *_ = shop_env.step(assistant_message(1, [("ask_user", {"question": question})]))
            reply = json.loads(obs["messages"][-1]["content"])["reply"]
            assert "condition" in reply, reply
            seen.add(condition)
    assert seen == {"opened", "unopened"}


def test_an_item_named_only_as_a_modifier_is_another_kind():
    """ "Coffee" fitted "… 13-Cup Coffee Maker …": a coffee maker's order counted among the
    customer's coffee orders, so "the second most recent of my orders with that item" and
    the like ranked an order no one would say holds coffee (1 of 82 same-item tasks at
    d = 4–12 on 5k products). "Digital air fryer" is still an air fryer."""
    from types import SimpleNamespace

    from shopgen.gen.tasks.returns import _holders

    titles = [
        "wagner harvest brazilian medium roast whole bean coffee, 30 oz",
        "jones & sons market colombian medium roast ground coffee, 3 lb",
        "washingtify pro 13-cup coffee maker, glass carafe",
        "webex elite 4-quart dual basket digital air fryer",
        "long pro 8-quart single basket air fryer",
    ]
    nouns = ["coffee", "coffee", "coffee maker", "digital air fryer", "air fryer"]
    book = SimpleNamespace(
        line_titles=titles, line_nouns=nouns, line_spans=[(i, i + 1) for i in range(5)]
    )
    assert _holders(book, [0, 1, 2], 0, "coffee") == [0, 1]
    assert _holders(book, [3, 4], 4, "air fryer") == [4, 3]


def test_a_first_message_without_the_reason_claims_no_fault(shop_env):
    """ "… I ordered the stuffed animal (my order) and it's not right" stood in for a left-out
    reason, and 4 of the 6 such tasks in 195 at d = 0–12 on 5k products were "I changed my
    mind": the message claimed a fault the customer then denies (the reason is graded)."""
    factory = TaskFactory(shop_env, seed=0, overrides={"p_noise": 0.0, "p_missing": 1.0})
    seen = 0
    for d in range(0, 13, 2):
        for k in range(20):
            row = factory.make("returns", d, k).row
            slots = {s["name"]: s for s in row.decoded("user_script")["slots"]}
            if not slots["reason"]["omitted"]:
                continue
            seen += 1
            text = row.messages[1].content.lower()
            assert not any(w in text for w in ("not right", "broken", "faulty")), text
    assert seen


def test_the_order_meant_among_same_item_orders_is_not_usually_the_oldest(shop_env, factory):
    """The clashing draw kept each customer's first line of the shared item, so the order
    meant was the oldest of those holding it in 76–88% of same-item tasks at d = 4–12 on 5k
    products (chance 42–48%): "the oldest one" told it without the customer's detail. Now
    one of their lines of it is drawn; the customer's day anchors which later orders exist
    yet, so a mild lean remains (the newest in 51% at d = 12, chance 42%)."""
    oldest = newest = chance = clashes = 0.0
    for k in range(40):
        goal = factory.make("returns", 12, k).row.decoded("goal")
        holders = goal["holder_ids"]
        if len(holders) < 2:
            continue
        by_day = sorted(holders, key=lambda o: shop_env.store.order(o)["placed_at"])
        clashes += 1
        oldest += by_day[0] == goal["order_id"]
        newest += by_day[-1] == goal["order_id"]
        chance += 1 / len(holders)
    assert clashes >= 20
    assert oldest / clashes <= chance / clashes + 0.15
    assert newest / clashes <= chance / clashes + 0.2


def _without_asking(messages: list[dict], ask: str) -> list[dict]:
    """The oracle's messages with ``ask`` cut from its question (the call dropped if empty)."""
    out = []
    for message in json.loads(json.dumps(messages)):
        calls = message.get("tool_calls")
        if calls is None:
            out.append(message)
            continue
        kept = []
        for tool_call in calls:
            function = tool_call["function"]
            args = json.loads(function["arguments"])
            if function["name"] == "ask_user":
                asks = args["question"].removeprefix("Could you tell me ").rstrip("?")
                left = [x for x in re.split(r", | and ", asks) if x != ask]
                if not left:
                    continue
                args["question"] = f"Could you tell me {spoken_list(left)}?"
                function["arguments"] = json.dumps(args)
            kept.append(tool_call)
        if kept:
            out.append({**message, "tool_calls": kept})
    return out


def _method_guesses(tasks) -> list[tuple]:
    """(row, goal, the oracle's messages without asking the method) per eligible return."""
    return [
        (g.row, goal, _without_asking(json.loads(g.row.oracle), ASK_PHRASES["method"]))
        for g in tasks
        if (goal := g.row.decoded("goal"))["eligible"] and goal["action"] == "return"
    ]


def test_a_return_method_guessed_right_is_not_correct(shop_env, tasks):
    """The customer never says the method unasked: naming the right one without asking is a
    lucky guess (right in about half of all eligible returns: 39 of 78 for drop-off before
    2.9), not a correct return. It earns at most 0."""
    guesses = _method_guesses(tasks)
    for row, goal, guessed in guesses:
        score, state = play(shop_env, row, guessed)
        assert state.extra["returns"][0]["method"] == goal["method"]
        assert not score.details["parts"]["asked"]
        assert not score.is_correct
        assert score.r_task <= 0
    assert guesses


def test_asking_the_method_after_the_start_is_not_asking(shop_env, tasks):
    """A guess first and the question after it: the answer cannot have chosen the method."""
    late = assistant_message(90, [("ask_user", {"question": "What is the return method?"})])
    guesses = _method_guesses(tasks)
    for row, _, guessed in guesses:
        score, state = play(shop_env, row, [*guessed[:-1], late, guessed[-1]])
        assert "method" in state.answered_slots()  # asked, and answered, but too late
        assert not score.details["parts"]["asked"]
        assert not score.is_correct
    assert guesses


# -- 2.13: the item's title is no reason ---------------------------------------------------------

BED = "Jordan Cove Queen Platform Bed Frame, 16-Inch Under-Bed Clearance, No Box Spring Needed"
LAPTOP = "Rubio Studio 13-Inch Laptop, Intel Core i7, 16GB RAM, Windows 11 Home, Touchscreen"


@pytest.mark.parametrize(
    ("text", "reasons"),
    [
        (f"Sorry, your {BED} can't be returned: it's past its 30-day return window.", {"window"}),
        ("Your platform bed (16-inch under-bed clearance) is outside the window.", {"window"}),
        (f"The {LAPTOP} was a final-sale item, so it can't be returned.", {"final_sale"}),
        # Said beside the title, the reason still counts.
        (f"The {BED} was bought on clearance, so it can't be returned.", {"final_sale"}),
    ],
)
def test_a_reasons_words_in_the_items_title_name_no_reason(text, reasons):
    """1.5% of titles (100k products) hold a reason's words: "Under-Bed Clearance" read as a
    final sale, "Windows 11" as the return window, beside the true reason (a wrong reason)."""
    assert refusal_reasons_stated(text, (BED, LAPTOP)) == reasons


def test_windows_is_no_return_window():
    assert refusal_reasons_stated("The laptop runs Windows 11 and was final sale.") == {
        "final_sale"
    }


def test_refusals_quoting_the_items_title_keep_the_oracles_reward(factory):
    """The goal holds the item's title and the verifier reads no reason in it."""
    seen = 0
    for row in _refusal_rows(factory, n=6):
        goal = row.decoded("goal")
        product = factory.env.store.product(goal["product_id"])
        assert goal["title"] == product["title"]
        text = (
            f"I checked order {goal['order_id']}. I'm sorry, but your {goal['title']} can't be "
            f"returned because {_REASON_WORDS[goal['refusal']]}."
        )
        _assert_graded_as_the_oracle(factory, row, text)
        seen += 1
    assert seen
