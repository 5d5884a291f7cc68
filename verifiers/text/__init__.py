"""Reading facts out of an agent's final message: order statuses, dates, codes, numbers.

Answers given in free text are graded by what they *assert*, read as an assistant writes
them. One module per kind of fact, each reading through :mod:`.normalize`:

- :mod:`.dates`: calendar dates in any common written form, ranges, weekdays;
- :mod:`.statuses`: the order statuses asserted, offered as possible or told as history;
- :mod:`.codes`: tracking numbers and order ids, however their groups are spaced;
- :mod:`.carriers`: the carriers named;
- :mod:`.numbers`: money, percentages, spans of time and zero said in words;
- :mod:`.yes_no`: yes and no, said as the word or as what the customer can do;
- :mod:`.refusals`: a return refused, and the reasons named.
"""

from shopgen.verifiers.text.carriers import CARRIER_WORDS, carrier_stated, carriers_named
from shopgen.verifiers.text.codes import code_stated, only_code_stated, other_code_stated
from shopgen.verifiers.text.dates import (
    date_claims,
    date_listed,
    date_stated_alone,
    dates_in,
    more_dates,
    weekday_claims,
    weekday_mismatched,
)
from shopgen.verifiers.text.normalize import TABLE_RULE, corrections, plain
from shopgen.verifiers.text.numbers import (
    PAID_SHARE_RE,
    ZERO_WORDS,
    fee_percents_stated,
    number_matches,
    numbers_stated,
    zero_offered,
    zero_stated,
)
from shopgen.verifiers.text.refusals import (
    REFUSAL_REASONS,
    not_eligible_stated,
    refusal_reasons_stated,
)
from shopgen.verifiers.text.statuses import (
    COMPATIBLE,
    HISTORY,
    STATUS_WORDS,
    UNDER_WAY,
    asserted_statuses,
    possible_statuses,
    status_stated,
)
from shopgen.verifiers.text.yes_no import yes_no_stated

__all__ = [
    "CARRIER_WORDS",
    "COMPATIBLE",
    "HISTORY",
    "PAID_SHARE_RE",
    "REFUSAL_REASONS",
    "STATUS_WORDS",
    "TABLE_RULE",
    "UNDER_WAY",
    "ZERO_WORDS",
    "asserted_statuses",
    "carrier_stated",
    "carriers_named",
    "code_stated",
    "corrections",
    "date_claims",
    "date_listed",
    "date_stated_alone",
    "dates_in",
    "fee_percents_stated",
    "more_dates",
    "not_eligible_stated",
    "number_matches",
    "numbers_stated",
    "only_code_stated",
    "other_code_stated",
    "plain",
    "possible_statuses",
    "refusal_reasons_stated",
    "status_stated",
    "weekday_claims",
    "weekday_mismatched",
    "yes_no_stated",
    "zero_offered",
    "zero_stated",
]
