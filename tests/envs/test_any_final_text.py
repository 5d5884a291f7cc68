"""Whatever an agent writes last, grading returns a reward in [-1, 1] and never fails.

The final message is the one part of a trajectory no tool validates: status, policy, returns
and journey read facts out of it with regexes and look-ups, so any text (any script, look-alike
letters, odd digits, huge numbers) must grade, not raise.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopgen.schemas.envs import ENV_NAMES
from shopgen.testing import scored_with_final
from shopgen.verifiers.text import fee_percents_stated, numbers_stated

#: Pieces the readers look for, so generated texts reach their deeper branches.
_PIECES = [
    "delivered",
    "in transit",
    "was placed",
    "has not shipped",
    "or cancelled",
    "Status: in_transit",
    "ſep 5",
    "aprİl 3",
    "March 32",
    "2026-13-40",
    "12/31/99",
    "99999999999999999999",
    "1Z 2672 1545",
    "$1,000,000.00",
    "USD 0",
    "fifteen percent",
    "free",
    "Yes",
    "no.",
    "can't",
    "٣ days",
    "tomorrow",
    "last Friday",
    "**",
    "`",
    "\n\n",
    "UPS",
    "Federal Express",
    "final sale",
    "return window",
    "90% back",
    "a refund of 1,000.5 percent",
    "3) Yes",
    "(b) no",
    "REF1Z111111111111",
    "218-0075245-0541472 7",
]
_TEXTS = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=12)), max_size=12).map(
    " ".join
)


@pytest.fixture(scope="module")
def rows(factory):
    return {name: factory.make(name, 5, 0).row for name in ENV_NAMES}


@pytest.mark.parametrize("name", ENV_NAMES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXTS)
def test_any_final_text_grades_within_bounds(factory, rows, name, text):
    score, oracle = scored_with_final(factory.env, rows[name], text)
    assert oracle.is_correct
    assert -1.0 <= score.reward <= 1.0
    assert -1.0 <= score.r_task <= 1.0


@given(text=_TEXTS)
def test_fee_percents_are_the_percents_but_for_shares_paid_back(text):
    # The policy grader reads a restocking fee with fee_percents_stated: whatever the text,
    # it returns numbers, and only a share paid back ("90% back") reads other than "N%".
    fees = fee_percents_stated(text)
    if not re.search(r"back|refund|returned to you", text, re.I):
        assert sorted(fees) == sorted(numbers_stated(text, "percent"))
    assert all(isinstance(f, float) for f in fees)
