"""The final-answer readers against banks of answers written apart from them.

Each bank (``data/answer_bank_*.jsonl``) was written by someone who never read the readers, as
different LLM assistants would answer: honest answers in many layouts and wordings, and
hedged or wrong ones, each labelled. A reader change that reads one more honest answer wrong,
or one more hedged or wrong answer right, fails here. The counts left are the cases the
readers do not take (CHANGELOG: status 2.15, policy 2.14, returns 2.14, journey 3.9).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from shopgen.verifiers.layout import texts
from shopgen.verifiers.policy import answer_right
from shopgen.verifiers.status import _parts
from shopgen.verifiers.text import not_eligible_stated, refusal_reasons_stated

BANKS = Path(__file__).parent / "data"
TODAY = "2026-03-02"


def _status(
    status: str, day: str | None, tracking=None, carrier=None, dates=(), held=(None, None)
) -> Callable:
    """``held``: the order's tracking number and carrier when they were not asked for."""
    held = (tracking, carrier) if tracking else held
    return lambda text: all(
        dict(_parts(text, status, day, tracking, carrier, TODAY, dates, held)).values()
    )


def _policy(value, unit, topic, ignore=(), kind="number") -> Callable:
    goal = {"kind": kind, "value": value, "unit": unit, "topic": topic}
    return lambda text: answer_right(text, goal, ignore)


def _refusal(reason: str, title: str) -> Callable:
    return lambda text: (
        not_eligible_stated(text) and refusal_reasons_stated(text, (title,)) == {reason}
    )


STATUS = {
    "S1": _status(
        "delivered",
        "2026-02-20",
        "1Z742870316384",
        "UPS",
        ("2026-02-14", "2026-02-17", "2026-02-20"),
    ),
    "S2": _status(
        "in_transit",
        "2026-03-05",
        "7529393822065",
        "FedEx",
        ("2026-02-25", "2026-02-27", "2026-03-05"),
    ),
    "S3": _status(
        "shipped",
        "2026-03-04",
        dates=("2026-02-26", "2026-02-28", "2026-03-04"),
        held=("9400111899223345678901", "USPS"),
    ),
    "S4": _status("processing", "2026-03-06", dates=("2026-02-28", "2026-03-06")),
    "S5": _status("placed", "2026-03-09", dates=("2026-03-01", "2026-03-09")),
    "S6": _status("cancelled", None, dates=("2026-02-20", "2026-02-21")),
}
#: Six orders whose answers volunteer facts not asked for (carrier, tracking number, dates)
#: and use negations ("it hasn't been delivered yet", "it isn't in transit anymore").
STATUS_VOLUNTEERED = {
    "T1": _status(
        "delivered",
        "2026-02-20",
        dates=("2026-02-14", "2026-02-17", "2026-02-20"),
        held=("1Z742870316384", "UPS"),
    ),
    "T2": _status(
        "in_transit",
        "2026-03-05",
        dates=("2026-02-25", "2026-02-27", "2026-03-05"),
        held=("7529393822065", "FedEx"),
    ),
    "T3": _status(
        "shipped",
        "2026-03-04",
        dates=("2026-02-26", "2026-02-28", "2026-03-04"),
        held=("9400111899223345678901", "USPS"),
    ),
    "T4": _status("processing", "2026-03-06", dates=("2026-02-28", "2026-03-06")),
    "T5": _status("placed", "2026-03-09", dates=("2026-03-01", "2026-03-09")),
    "T6": _status("cancelled", None, dates=("2026-02-20", "2026-02-21")),
}
POLICY = {
    "P1": _policy(15, "percent", "restocking_fee"),
    "P2": _policy(0, "percent", "restocking_fee"),
    "P3": _policy(9.99, "USD", "return_shipping_fee", (45.5,)),
    "P4": _policy(0, "USD", "return_shipping_fee", (80.0,)),
    "P5": _policy(5.99, "USD", "shipping_cost", (22.0, 35.0)),
    "P6": _policy(0, "USD", "shipping_cost", (64.0, 35.0)),
    "P7": _policy(45, "days", "return_window", (10.0,)),
    "P8": _policy(30, "days", "return_window", (3.0,)),
    "P9": _policy(3, "business days", "shipping_days"),
    "P10": _policy(24, "months", "warranty"),
    "P11": _policy(0, "months", "warranty"),
    "P12": _policy(10, "percent", "bulk_discount"),
    "P13": _policy(0, "percent", "bulk_discount"),
    "P14": _policy(99, "USD/year", "membership_fee"),
    "P15": _policy(35, "USD", "free_shipping_threshold"),
    "P16": _policy(True, None, "price_match", kind="boolean"),
    "P17": _policy(False, None, "returnable", kind="boolean"),
    "P18": _policy(False, None, "return_method_available", kind="boolean"),
    "P19": _policy(True, None, "returnable", kind="boolean"),
    "P20": _policy(14, "days", "price_match_window"),
}
#: Ten policy questions a second time, in other words, answered in many styles.
POLICY_SECOND = {
    "R1": _policy(15, "percent", "restocking_fee"),
    "R2": _policy(30, "days", "return_window", (12.0,)),
    "R3": _policy(7.99, "USD", "return_shipping_fee", (45.5, 75.0)),
    "R4": _policy(5.99, "USD", "shipping_cost", (28.0, 35.0)),
    "R5": _policy(12, "months", "warranty"),
    "R6": _policy(10, "percent", "bulk_discount"),
    "R7": _policy(True, None, "price_match", kind="boolean"),
    "R8": _policy(False, None, "returnable", kind="boolean"),
    "R9": _policy(99, "USD/year", "membership_fee"),
    "R10": _policy(35, "USD", "free_shipping_threshold"),
}
RETURNS = {
    "R1": _refusal("window", "Lumen Desk Lamp, LED"),
    "R2": _refusal("final_sale", "Trailhead Rain Jacket, Men's"),
    "R3": _refusal("perishable", "Organic Dark Roast Coffee Beans, 2 lb"),
    "R4": _refusal("personalised", "Engraved Leather Wallet"),
    "R5": _refusal("hygiene", "Electric Toothbrush Heads, 8-Pack"),
}
STEPS = {
    # A journey's status requests asked for the status and the date alone.
    "STATUS": (
        "status",
        _status(
            "in_transit",
            "2026-03-05",
            dates=("2026-02-25", "2026-02-27", "2026-03-05"),
            held=("7529393822065", "FedEx"),
        ),
    ),
    "STATUS_D": (
        "status",
        _status(
            "delivered",
            "2026-02-20",
            dates=("2026-02-14", "2026-02-17", "2026-02-20"),
            held=("1Z742870316384", "UPS"),
        ),
    ),
    "POLICY_FEE": ("policy", POLICY["P3"]),
    "POLICY_WINDOW": ("policy", POLICY["P7"]),
    "POLICY_YES": ("policy", POLICY["P16"]),
    "REFUSAL": ("returns", RETURNS["R4"]),
}
JOURNEYS = {
    "J1": ("STATUS", "POLICY_FEE"),
    "J2": ("POLICY_WINDOW", "STATUS_D"),
    "J3": ("REFUSAL", "POLICY_YES"),
    "J4": ("STATUS", "POLICY_WINDOW", "REFUSAL"),
    "J5": ("POLICY_FEE", "STATUS_D", "POLICY_YES"),
}
#: Six conversations a second time, their final messages written in other layouts (tables
#: of the requests among them).
JOURNEYS_SECOND = {
    "K1": ("STATUS", "POLICY_FEE"),
    "K2": ("POLICY_WINDOW", "STATUS_D"),
    "K3": ("REFUSAL", "POLICY_YES"),
    "K4": ("STATUS", "POLICY_WINDOW", "REFUSAL"),
    "K5": ("POLICY_FEE", "STATUS_D", "POLICY_YES"),
    "K6": ("REFUSAL", "STATUS", "POLICY_FEE"),
}


def _journey(scenario: str) -> Callable:
    steps = [STEPS[s] for s in {**JOURNEYS, **JOURNEYS_SECOND}[scenario]]
    kinds = tuple(kind for kind, _ in steps)
    return lambda text: all(
        right(part or "") for (_, right), part in zip(steps, texts(text, kinds), strict=True)
    )


GRADERS = {
    "status": STATUS.get,
    "status_volunteered": STATUS_VOLUNTEERED.get,
    "policy": POLICY.get,
    "policy_second": POLICY_SECOND.get,
    "returns": RETURNS.get,
    "journey": _journey,
    "journey_second": _journey,
}


@pytest.mark.parametrize(
    ("bank", "honest_wrong", "hedged_right"),
    [
        # Status: 3 say the date with "might"; one gives the day the order was placed as the
        # day it was cancelled (both its own dates), one calls it "cancelled or on hold".
        ("status", 0, 5),
        # 260 answers volunteering facts or using negations (before status 2.14: 16 of 180
        # honest read wrong, 41 of 80 wrong read right; before status 2.15, 4 honest). Honest:
        # 2 imply the placed status ("it hasn't shipped yet", which a processing order also
        # hasn't) or the shipped one ("the label was created") without saying it. Wrong: a
        # delivery date of a cancelled order that is today's, a placed date that is the
        # order's cancelled date.
        ("status_volunteered", 2, 2),
        # Policy: each reads one way ("Yes, we price match. Unfortunately, we can't …" reads
        # yes). Honest: "- In-store: No / - Mail-in: Yes" and "Mail-in returns are accepted"
        # beside a no, each a yes and a no to a reader that does not know what was asked.
        ("policy", 2, 3),
        # 300 more (before policy 2.13: 8 of 200 honest read wrong, 25 of 100 wrong read
        # right; before policy 2.14, 23). Wrong: a made-up condition that would change the
        # answer (12), a value then its contrary (3: "However, no, …", "But yes, …", and
        # "Actually, Basic members don't get free shipping", no threshold at all), wrong
        # arithmetic beside the right value (2).
        ("policy_second", 0, 17),
        ("returns", 0, 1),  # "It's likely … isn't eligible, since … usually can't be returned"
        ("journey", 0, 5),  # each reads one way, as the policy bank's
        # 150 more (before journey 3.8: 7 of 108 honest read wrong, each laid out as a table
        # of the requests; 8 of 42 wrong read right). Wrong: a "Yes" then its contrary, "is
        # eligible, but … can't be returned", wrong arithmetic or a wrong detail beside the
        # right value, two in-transit wordings ("in transit or out for delivery").
        ("journey_second", 0, 6),
    ],
)
def test_a_bank_written_apart_from_the_readers(bank, honest_wrong, hedged_right):
    lines = (BANKS / f"answer_bank_{bank}.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    graded = [(row["honest"], GRADERS[bank](row["scenario"])(row["text"])) for row in rows]
    assert sum(honest and not right for honest, right in graded) == honest_wrong
    assert sum(right and not honest for honest, right in graded) == hedged_right
