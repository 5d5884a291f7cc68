"""The customer states their preference however an agent asks how much each factor matters."""

import pytest

from shopgen.env.user import compile_script, match_slots
from shopgen.gen.tasks.constraints import PRIORITY_WORDS
from shopgen.schemas.task import ScriptSlot, UserScript

SLOTS = [
    ScriptSlot(name="category", value="novels", kind="text", label="kind of product"),
    ScriptSlot(name="k_rec", value=4, kind="count", label="number of options", omitted=True),
    ScriptSlot(name="price_max", value=30, kind="money", label="budget", omitted=True),
    ScriptSlot(name="rating_min", value=4.0, kind="rating", label="minimum rating", omitted=True),
    ScriptSlot(name="ship_days_max", value=5, kind="days", label="delivery time", omitted=True),
    ScriptSlot(
        name="attrs.book_format", value="Hardcover", kind="attr", label="book format", omitted=True
    ),
    ScriptSlot(
        name="attrs.phone_model", value="S25 Ultra", kind="attr", label="phone model", omitted=True
    ),
    ScriptSlot(
        name="priority",
        value="fast delivery (very much: 1 day is ideal, 5 days the worst), then my favourite "
        'brands "A" and "B" (quite a lot), then a low price (a little), then a high rating '
        "(not at all)",
        kind="preference",
        label="priority order",
        keywords=list(PRIORITY_WORDS),
    ),
]
CONSTRAINTS = {"price_max", "rating_min", "ship_days_max", "attrs.book_format", "attrs.phone_model"}


def names(question: str) -> set[str]:
    script = UserScript(style="polite", slots=SLOTS, never_say=[])
    return {s.name for s in match_slots(compile_script(script.model_dump_json()), question)}


@pytest.mark.parametrize(
    "question",
    [
        # The system prompt: "The customer says what matters to them (price, rating,
        # delivery, brand) only when asked; ask, then rank as they weigh it … 'very much' …".
        "How much do price, rating, delivery time and brand matter to you?",
        "How important are price, rating, delivery speed and brand to you?",
        "How much does price matter to you?",
        "Does the brand matter?",
        "Do you have any favourite brands?",
        "Any favorite brand?",
        "How would you weigh price, rating, delivery and brand?",
        "How should I rank the options?",
        "How much do you care about fast delivery?",
        "What matters most to you?",
    ],
)
def test_natural_preference_questions_get_the_preference(question: str) -> None:
    """Only "what matters"/"priorities" did: the rest got "it doesn't matter to me"."""
    assert "priority" in names(question)


def test_a_preference_question_with_an_open_one_gets_both() -> None:
    """Asking what matters must not hide the constraints an open question reveals."""
    assert names("Anything else that matters to you, any other requirements?") >= {
        "priority",
        *CONSTRAINTS,
    }


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What's your budget?", {"price_max"}),
        ("Minimum rating?", {"rating_min"}),
        ("Any other requirements?", CONSTRAINTS),
    ],
)
def test_constraint_questions_do_not_get_the_preference(question: str, expected: set) -> None:
    assert names(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What's your budget, and do you have any other requirements?",
        "How many options would you like, and any other requirements?",
        "How much do price and rating matter to you? Any other requirements?",
    ],
)
def test_an_open_question_beside_a_specific_one_still_gets_every_constraint(question) -> None:
    """Only "Any other requirements?" alone got them: beside a named fact, the open words
    were weak and the customer answered the named fact alone (the count alone, on every
    discovery task that left a constraint out)."""
    assert names(question) >= CONSTRAINTS
