"""Every limit a tool enforces is stated in its schema, and a call outside it is refused saying it.

The agent sees only the schemas: a limit they do not state can only be hit, never kept. Each
bound below is declared as an annotation (``MaxChars``, ``Range``, ``Items``), written into the
schema (JSON Schema keyword + a sentence of the description) and enforced by argument
validation, whose refusal names the limit.
"""

from __future__ import annotations

import math
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import REGISTRY
from shopgen.env.tools.cart import MAX_QUANTITY
from shopgen.env.tools.dialogue import MAX_QUESTION_CHARS
from shopgen.env.tools.recommend import MAX_RECOMMENDED
from shopgen.env.tools.registry import LIMIT_KEYWORDS, Items, MaxChars, Range, ToolError, build_spec

#: tool → argument → the keywords its schema must carry and the sentence its description ends with.
STATED = {
    ("ask_user", "question"): (
        {"maxLength": MAX_QUESTION_CHARS},
        f"At most {MAX_QUESTION_CHARS} characters.",
    ),
    ("cart_add", "quantity"): (
        {"minimum": 1, "maximum": MAX_QUANTITY},
        f"Between 1 and {MAX_QUANTITY}.",
    ),
    ("cart_update_quantity", "quantity"): (
        {"minimum": 0, "maximum": MAX_QUANTITY},
        f"Between 0 and {MAX_QUANTITY}.",
    ),
    ("recommend_products", "product_ids"): (
        {"minItems": 1, "maxItems": MAX_RECOMMENDED},
        f"Between 1 and {MAX_RECOMMENDED} items.",
    ),
}


def _prop(tool: str, arg: str) -> dict:
    return REGISTRY[tool].schema["function"]["parameters"]["properties"][arg]


@pytest.mark.parametrize(("tool", "arg"), sorted(STATED))
def test_the_schema_states_each_limit(tool, arg):
    keywords, sentence = STATED[(tool, arg)]
    prop = _prop(tool, arg)
    assert {k: prop[k] for k in keywords} == keywords
    assert prop["description"].endswith(sentence)


def test_no_other_argument_has_a_limit_keyword():
    """The table above is every limit: a new one must be added there (and so tested)."""
    for name, spec in REGISTRY.items():
        for p in spec.params:
            if any(k in p.schema for k in LIMIT_KEYWORDS):
                assert (name, p.name) in STATED


def test_the_line_total_limit_is_said_in_the_tool_description():
    assert (
        "at most as many units as quantity's maximum"
        in (REGISTRY["cart_add"].schema["function"]["description"])
    )


def _play(store, picks, *messages, env_name="cart"):
    env = ShopEnv(store, score=False)
    env.reset(make_row(store, env=env_name, T_max=50, B_tool=len(messages) + 1))
    outs = []
    for m in messages:
        obs, _, _, _ = env.step(m)
        outs.append(result(obs))
    return outs, env


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("cart_add", {"quantity": 0}, "under the minimum of 1"),
        ("cart_add", {"quantity": -3}, "under the minimum of 1"),
        ("cart_add", {"quantity": MAX_QUANTITY + 1}, f"over the maximum of {MAX_QUANTITY}"),
        ("cart_update_quantity", {"quantity": -1}, "under the minimum of 0"),
        ("cart_update_quantity", {"quantity": 10_000}, f"over the maximum of {MAX_QUANTITY}"),
    ],
)
def test_an_out_of_range_quantity_is_refused_naming_the_limit(store, picks, tool, arguments, named):
    (out,), env = _play(store, picks, call(tool, product_id=picks["plain"], **arguments))
    assert out["error"] == "bad_arguments"
    assert "'quantity'" in out["message"]
    assert named in out["message"]
    assert env.state.tool_calls == []  # refused before it reached the tool


def test_quantities_at_the_limits_are_taken(store, picks):
    outs, env = _play(
        store,
        picks,
        call("cart_add", product_id=picks["plain"], quantity=1),
        call("cart_update_quantity", product_id=picks["plain"], quantity=0),
    )
    assert outs[0]["added"]["quantity"] == 1
    assert outs[1]["updated"]["quantity"] == 0
    assert env.state.cart == {}


def test_a_line_total_over_the_limit_is_refused_naming_it(store, picks):
    env = ShopEnv(store, score=False)
    env.reset(make_row(store, T_max=50, B_tool=5))
    env.state.cart[(picks["plain"], picks["plain_variant"])] = MAX_QUANTITY - 1
    obs, _, _, _ = env.step(call("cart_add", product_id=picks["plain"], quantity=2))
    out = result(obs)
    assert out["error"] == "bad_arguments"
    assert (
        f"would hold {MAX_QUANTITY + 1} units, over the limit of {MAX_QUANTITY}" in (out["message"])
    )
    assert env.state.cart[(picks["plain"], picks["plain_variant"])] == MAX_QUANTITY - 1


@pytest.mark.parametrize(
    ("n", "named"),
    [(0, "has 0 items, under the minimum of 1"), (MAX_RECOMMENDED + 1, "over the limit of 20")],
)
def test_a_recommendation_list_of_the_wrong_length_is_refused_naming_the_limit(
    store, picks, n, named
):
    ids = [f"B{i:09d}" for i in range(n)]
    (out,), env = _play(
        store, picks, call("recommend_products", product_ids=ids), env_name="discovery"
    )
    assert out["error"] == "bad_arguments"
    assert named in out["message"]
    assert env.state.recommendations == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    quantity=st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30),
        st.integers(min_value=-2, max_value=MAX_QUANTITY + 2),
        st.floats(allow_nan=True, allow_infinity=True),
    ),
    update=st.booleans(),
)
def test_any_quantity_is_taken_or_refused_naming_the_limit_never_crashing(
    store, picks, quantity, update
):
    tool = "cart_update_quantity" if update else "cart_add"
    low = 0 if update else 1
    messages = [call("cart_add", product_id=picks["plain"], quantity=1)] if update else []
    messages.append(call(tool, product_id=picks["plain"], quantity=quantity))
    outs, _ = _play(store, picks, *messages)
    out = outs[-1]
    whole = isinstance(quantity, int) or (math.isfinite(quantity) and quantity.is_integer())
    if not whole:
        assert out == {"error": "bad_arguments", "message": out["message"]}
        assert "must be integer" in out["message"]
    elif low <= quantity <= MAX_QUANTITY:
        # Inside the limits: the tool ran (stock may still refuse, not the limit).
        assert out.get("error") != "bad_arguments", out
    else:
        assert out["error"] == "bad_arguments"
        bound = f"minimum of {low}" if quantity < low else f"maximum of {MAX_QUANTITY}"
        assert bound in out["message"]


def _spec(annotation):
    def tool_fn(ctx, x) -> dict:
        """A tool.

        Args:
            x: a value.
        """
        return {}

    # Set after definition: this module's annotations are strings (``from __future__``).
    tool_fn.__annotations__ = {"x": annotation, "return": dict}
    return build_spec(tool_fn, "read")


@pytest.mark.parametrize(
    "annotation",
    [
        Annotated[str, Range(0, 3)],
        Annotated[int, Range()],
        Annotated[int, Range(5, 1)],
        Annotated[int, Items(0, 3)],
        Annotated[list[str], Items(4, 2)],
        Annotated[list[str], Items()],
        Annotated[list[str], MaxChars(3)],
    ],
)
def test_a_limit_that_does_not_fit_its_argument_is_a_definition_error(annotation):
    with pytest.raises(TypeError, match="needs"):
        _spec(annotation)


def test_open_ended_limits_state_only_their_end():
    low = _spec(Annotated[float, Range(low=0.5)]).params[0]
    assert low.schema == {
        "type": "number",
        "description": "a value. At least 0.5.",
        "minimum": 0.5,
    }
    high = _spec(Annotated[list[str] | None, Items(high=1)]).params[0]
    assert high.schema["maxItems"] == 1
    assert "minItems" not in high.schema
    assert high.schema["description"].endswith("At most 1 item.")
    assert high.required is False


def test_a_not_a_number_is_outside_every_range():
    spec = _spec(Annotated[float, Range(0, 1)])
    assert spec.validate({"x": 1}) == {"x": 1.0}
    with pytest.raises(ToolError, match="under the minimum of 0"):
        spec.validate({"x": float("nan")})


def test_loose_text_values_are_checked_after_conversion():
    spec = _spec(Annotated[int, Range(1, 9)])
    assert spec.validate({"x": " 9 "}, loose=True) == {"x": 9}
    with pytest.raises(ToolError, match="over the maximum of 9"):
        spec.validate({"x": "10"}, loose=True)
