"""``ask_user``'s length limit is stated in its schema and said when a question exceeds it."""

from typing import Annotated

import pytest
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import REGISTRY
from shopgen.env.tools.dialogue import MAX_QUESTION_CHARS
from shopgen.env.tools.registry import MaxChars, build_spec
from shopgen.schemas.task import ScriptSlot, UserScript

SCRIPT = UserScript(
    style="terse",
    slots=[
        ScriptSlot(name="items.0.desc", value="wool socks", kind="text", label="item"),
        ScriptSlot(name="items.0.qty", value=3, kind="quantity", label="quantity", omitted=True),
    ],
)


def test_the_schema_states_the_limit():
    question = REGISTRY["ask_user"].schema["function"]["parameters"]["properties"]["question"]
    assert question["maxLength"] == MAX_QUESTION_CHARS
    assert f"At most {MAX_QUESTION_CHARS} characters" in question["description"]


def _ask(store, question: str):
    env = ShopEnv(store)
    row = make_row(store, T_max=6, B_tool=5)
    row["user_script"] = SCRIPT.model_dump_json()
    env.reset(row)
    obs, _, _, info = env.step(call("ask_user", question=question))
    return result(obs), env, info


def test_a_question_at_the_limit_is_answered_and_one_over_it_refused_saying_the_limit(store):
    at = "How many socks? " + "x" * (MAX_QUESTION_CHARS - 16)
    assert len(at) == MAX_QUESTION_CHARS
    answered, _, _ = _ask(store, at)
    assert "3" in answered["reply"]
    refused, env, info = _ask(store, at + "?")
    assert refused["error"] == "bad_arguments"
    assert f"limit of {MAX_QUESTION_CHARS}" in refused["message"]
    assert f"{MAX_QUESTION_CHARS + 1} characters" in refused["message"]
    assert [e["kind"] for e in info["errors"]] == ["bad_arguments"]
    assert "questions" not in env.state.extra  # the customer never heard it


def test_a_limit_on_a_non_string_argument_is_a_definition_error():
    def tool_fn(ctx, n: Annotated[int, MaxChars(5)]) -> dict:
        """A tool.

        Args:
            n: a number.
        """
        return {}

    with pytest.raises(TypeError, match="MaxChars"):
        build_spec(tool_fn, "read")


def test_a_declared_limit_is_enforced_by_validation():
    def tool_fn(ctx, text: Annotated[str, MaxChars(3)]) -> dict:
        """A tool.

        Args:
            text: some text.
        """
        return {}

    spec = build_spec(tool_fn, "read")
    assert spec.validate({"text": "abc"}) == {"text": "abc"}
    assert spec.schema["function"]["parameters"]["properties"]["text"]["maxLength"] == 3
    with pytest.raises(Exception, match="limit of 3"):
        spec.validate({"text": "abcd"})
