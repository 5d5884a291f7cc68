"""What an agent is told says a hard constraint is one, and nothing the verifier does not grade.

Substitution's system prompt asked for substitutes "at a similar price", but a substitute is
graded only against the budget (at most 1.2x the original, no floor): 96 of 100 tasks on 5k
products ranked a product under 70% of the original's price in the ideal list, which an agent
taking the prompt at its word left out. And a chatty customer said their hard constraints as
"Ideally …", a wish an agent could rank instead of enforcing.
"""

import re
from pathlib import Path

import pytest

import shopgen.templates

TEMPLATES = Path(shopgen.templates.__file__).parent


def test_substitution_prompt_grades_the_budget_not_a_similar_price():
    text = (TEMPLATES / "substitution" / "system.j2").read_text()
    assert "similar price" not in text
    assert "budget" in text


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_stated_constraints_are_not_said_as_wishes(env):
    source = (TEMPLATES / env / "first.j2").read_text()
    for macro in re.findall(r"{% macro .*?{% endmacro %}", source, flags=re.S):
        if "c.cons" in macro:
            assert not re.search(r"\b(ideally|preferably|if possible)\b", macro, re.I), macro
