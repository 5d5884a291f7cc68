"""Input Python cannot read as it stands never crashes the runtime, the scorer or the server.

A fuzzing pass found each of these raising out of ``env.step`` (or ``play``): JSON numbers of
more than 4,300 digits (``ValueError``), nesting deeper than the recursion limit
(``RecursionError``), and ids holding a lone surrogate (``UnicodeEncodeError`` when the id
was looked up). A call Python cannot read is a parse error the agent sees; an id no product
can have names nothing.
"""

from __future__ import annotations

import json

import pytest

from shopgen.verifiers.replay import play
from shopgen.verifiers.score import score_lines

HUGE = "1" * 4301
DEEP = "[" * 1000


def _call(name: str, arguments: str) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def _qwen(body: str) -> dict:
    return {"role": "assistant", "content": f"<tool_call>{body}</tool_call>"}


UNREADABLE = [
    _call("cart_add", f'{{"product_id": "x", "quantity": {HUGE}}}'),
    _call("cart_add", DEEP),
    _qwen(f'{{"name": "cart_add", "arguments": {{"product_id": "x", "quantity": {HUGE}}}}}'),
    _qwen(DEEP),
]
LOOSE = _qwen(
    "\n<function=cart_add>\n<parameter=product_id>\nx\n</parameter>\n"
    f"<parameter=quantity>\n{HUGE}\n</parameter>\n</function>\n"
)


@pytest.fixture(scope="module")
def row(factory):
    return factory.make("cart", 4, 0).row


@pytest.mark.parametrize("message", UNREADABLE)
def test_an_unreadable_call_is_a_parse_error(shop_env, row, message):
    shop_env.reset(row)
    observation, *_ = shop_env.step(message)
    result = json.loads(observation["messages"][0]["content"])
    assert result["error"] == "parse"
    assert "too long or nesting too deep" in result["message"]
    assert play(shop_env, row, [message])[0] is not None


def test_a_number_too_long_in_a_parameter_block_is_a_bad_argument(shop_env, row):
    shop_env.reset(row)
    observation, *_ = shop_env.step(LOOSE)
    assert json.loads(observation["messages"][0]["content"])["error"] == "bad_arguments"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("cart_add", {"product_id": "\ud800", "quantity": 1}),
        ("catalog_get_variants", {"product_id": "\ud800"}),
    ],
)
def test_an_id_holding_a_lone_surrogate_names_nothing(shop_env, row, tool, arguments):
    shop_env.reset(row)
    observation, *_ = shop_env.step(_call(tool, json.dumps(arguments)))
    assert json.loads(observation["messages"][0]["content"])["error"] == "not_found"


def test_the_scorer_reports_a_bad_line_and_goes_on(shop_env, row):
    good = json.dumps({"task_id": row.task_id, "messages": json.loads(row.oracle)})
    lines = [
        json.dumps({"task_id": [row.task_id], "messages": []}),
        f'{{"task_id": "{row.task_id}", "messages": [{HUGE}]}}',
        '{"task_id": "x", "messages": ' + DEEP + "}",
        json.dumps({"task_id": row.task_id, "messages": [UNREADABLE[0]]}),
        good,
    ]
    results = list(score_lines(shop_env, {row.task_id: row}, lines))
    assert [r.error is not None for r in results] == [True, True, True, False, False]
    assert "task_id must be a string" in results[0].error
    assert results[3].reward is not None
    assert results[4].is_correct
