"""Asked in plain words what a substitute must match, the customer names the compat values."""

import pytest

from shopgen.env.user import compile_script, match_slots
from shopgen.gen.tasks.substitution import compat_facts
from shopgen.schemas.task import ScriptSlot, UserScript


def _asked(question: str) -> set[str]:
    slots = [
        ScriptSlot(name="product_title", value="Acme K-Cup Brewer", kind="text", label="product"),
        ScriptSlot(name="price_max", value=80, kind="money", label="budget", omitted=True),
        *(
            ScriptSlot(name=n, **fact)
            for n, fact in compat_facts({"pod_system": "K-Style"}).items()
        ),
    ]
    compiled = compile_script(UserScript(style="polite", slots=slots).model_dump_json())
    return {s.name for s in match_slots(compiled, question)}


@pytest.mark.parametrize(
    "question",
    [
        "Which features must the substitute match?",
        "What must the substitute have in common with the original?",
        "What should the replacement match exactly?",
        "Does it need to be the same as the original in any way?",
        "Does it have to be the same type?",
        "What does it need to work with?",
    ],
)
def test_plain_questions_about_what_must_match_get_the_compat_values(question: str) -> None:
    """Only "must match", "share", "keep"… did: the rest got "I don't know"."""
    assert "compat.pod_system" in _asked(question)


def test_a_budget_question_does_not_get_them() -> None:
    assert _asked("What's your budget?") == {"price_max"}
