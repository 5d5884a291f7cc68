"""An attribute constraint is asked for by any word of its name ("Which format?")."""

import pytest
from test_user_preference import names

from shopgen.env.user import compile_script, match_slots
from shopgen.schemas.task import ScriptSlot, UserScript


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which format would you like?", "attrs.book_format"),
        ("Hardcover or paperback — what format?", "attrs.book_format"),
        ("Which model is your phone?", "attrs.phone_model"),
    ],
)
def test_an_attribute_is_asked_for_by_its_names_last_word(question: str, expected: str) -> None:
    """An attribute ``book_format`` was asked for only by "book format": "Which format?" got
    "I'm not sure, it doesn't matter to me" though the format was a hidden constraint."""
    assert expected in names(question)


def test_the_head_word_is_the_labels_not_the_names() -> None:
    """``shoe_size_us`` is labelled "size": "tell us" must not ask for the shoe size."""
    slots = [
        ScriptSlot(name="price_max", value=30, kind="money", label="budget", omitted=True),
        ScriptSlot(name="items.0.variant.shoe_size_us", value="US 9", kind="variant", label="size"),
        ScriptSlot(
            name="items.0.variant.coffee_flavor",
            value="Mocha",
            kind="variant",
            label="coffee flavor",
        ),
    ]
    compiled = compile_script(UserScript(style="polite", slots=slots).model_dump_json())
    asked = lambda q: {s.name for s in match_slots(compiled, q)}  # noqa: E731
    assert asked("Could you tell us your budget?") == {"price_max"}
    assert asked("Which flavor?") == {"items.0.variant.coffee_flavor"}
    assert asked("What size?") == {"items.0.variant.shoe_size_us"}
