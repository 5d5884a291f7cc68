import json

from hypothesis import given
from hypothesis import strategies as st

from shopgen.env.parsing import ParseIssue, ToolCall, parse_assistant


def test_openai_dict_with_string_and_dict_arguments():
    msg = {
        "role": "assistant",
        "content": "looking",
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {
                    "name": "cart_add",
                    "arguments": '{"product_id": "B1", "quantity": 2}',
                },
            },
            {"id": "b", "type": "function", "function": {"name": "cart_view", "arguments": {}}},
        ],
    }
    p = parse_assistant(msg)
    assert p.content == "looking"
    assert p.items == (
        ToolCall("cart_add", {"product_id": "B1", "quantity": 2}, "a"),
        ToolCall("cart_view", {}, "b"),
    )


def test_openai_dict_without_calls_is_final_and_content_parts_are_joined():
    p = parse_assistant(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "all "}, {"type": "text", "text": "done"}],
        }
    )
    assert p.content == "all done"
    assert not p.calls_attempted


def test_openai_dict_falls_back_to_qwen_blocks_in_content():
    p = parse_assistant(
        {
            "role": "assistant",
            "content": '<tool_call>{"name": "cart_view", "arguments": {}}</tool_call>',
        }
    )
    assert p.items == (ToolCall("cart_view", {}),)


def test_openai_malformed_arguments_become_issues_with_the_call_id():
    p = parse_assistant(
        {
            "tool_calls": [
                {
                    "id": "x",
                    "type": "function",
                    "function": {"name": "cart_add", "arguments": "{bad"},
                }
            ]
        }
    )
    (issue,) = p.items
    assert isinstance(issue, ParseIssue)
    assert issue.call_id == "x"
    assert issue.name == "cart_add"
    assert "malformed JSON" in issue.message


def test_qwen_text_with_think_and_two_blocks():
    text = (
        '<think>I should check {"name": "nope"}</think>Let me look.\n'
        '<tool_call>\n{"name": "catalog_get_variants", "arguments": {"product_id": "B07XK3M9QZ"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "cart_view", "arguments": {}}\n</tool_call>'
    )
    p = parse_assistant(text)
    assert p.content == "Let me look."
    assert [c.name for c in p.items] == ["catalog_get_variants", "cart_view"]
    assert p.items[0].arguments == {"product_id": "B07XK3M9QZ"}


def test_completion_that_starts_inside_think_drops_the_reasoning():
    p = parse_assistant('reasoning <tool_call>{"name": "x"}</tool_call></think>The answer.')
    assert p.content == "The answer."
    assert not p.calls_attempted


def test_arguments_may_be_a_json_string_or_missing():
    p = parse_assistant(
        '<tool_call>{"name": "cart_add", "arguments": "{\\"product_id\\": \\"B1\\"}"}</tool_call>'
        '<tool_call>{"name": "cart_view"}</tool_call>'
    )
    assert p.items == (ToolCall("cart_add", {"product_id": "B1"}), ToolCall("cart_view", {}))


def test_malformed_json_is_an_issue_not_an_exception():
    (issue,) = parse_assistant('<tool_call>{"name": "cart_view", "arguments": {</tool_call>').items
    assert isinstance(issue, ParseIssue)
    assert "malformed JSON" in issue.message


def test_several_calls_in_one_block_are_an_issue():
    both = '{"name": "a", "arguments": {}} {"name": "b", "arguments": {}}'
    listed = '[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]'
    for body in (both, listed):
        (issue,) = parse_assistant(f"<tool_call>{body}</tool_call>").items
        assert isinstance(issue, ParseIssue)
        assert "several calls" in issue.message


def test_unclosed_block_is_still_read():
    p = parse_assistant('ok <tool_call>{"name": "cart_view", "arguments": {}}')
    assert p.items == (ToolCall("cart_view", {}),)
    assert p.content == "ok"


def test_bad_call_objects_are_issues():
    for body in (
        '"just a string"',
        '{"arguments": {}}',
        '{"name": "a", "arguments": [1]}',
        '{"name": "a", "args": {}}',
        "",
    ):
        (item,) = parse_assistant(f"<tool_call>{body}</tool_call>").items
        assert isinstance(item, ParseIssue), body


def test_qwen_coder_function_format_gives_loose_text_values():
    text = (
        "<tool_call>\n<function=cart_add>\n<parameter=product_id>\nB07XK3M9QZ\n</parameter>\n"
        "<parameter=quantity>\n2\n</parameter>\n</function>\n</tool_call>"
    )
    (c,) = parse_assistant(text).items
    assert c == ToolCall(
        "cart_add", {"product_id": "B07XK3M9QZ", "quantity": "2"}, None, loose=True
    )


def test_qwen_coder_two_functions_in_one_block_and_repeated_parameter_are_issues():
    two = "<tool_call><function=a></function><function=b></function></tool_call>"
    twice = "<tool_call><function=a><parameter=x>1</parameter><parameter=x>2</parameter></function></tool_call>"
    for text in (two, twice):
        (item,) = parse_assistant(text).items
        assert isinstance(item, ParseIssue)


def test_unknown_shapes_are_issues():
    for message in (
        None,
        3,
        ["a"],
        {"tool_calls": "nope"},
        {"tool_calls": [{"type": "code"}]},
        {"tool_calls": [{"function": {}}]},
    ):
        p = parse_assistant(message)
        assert p.items
        assert all(isinstance(i, ParseIssue) for i in p.items)


@given(st.text())
def test_arbitrary_text_never_raises(text):
    p = parse_assistant(text)
    assert isinstance(p.content, str)


@given(
    st.lists(
        st.sampled_from(
            [
                "<tool_call>",
                "</tool_call>",
                "<think>",
                "</think>",
                "{",
                "}",
                '"name"',
                '"arguments"',
                ":",
                ",",
                '"',
                "a",
                "<function=f>",
                "<parameter=p>",
                "</parameter>",
                "</function>",
                "[",
                "]",
                " ",
                "\n",
            ]
        )
    ).map("".join)
)
def test_tag_soup_never_raises(text):
    p = parse_assistant(text)
    for item in p.items:
        assert isinstance(item, ToolCall | ParseIssue)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)


@given(
    st.dictionaries(
        st.sampled_from(["content", "tool_calls", "role", "function", "id"]), json_values
    )
)
def test_arbitrary_dicts_never_raise(message):
    parse_assistant(message)


@given(
    st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)
def test_well_formed_qwen_calls_round_trip(name, arguments):
    body = json.dumps({"name": name, "arguments": arguments})
    (c,) = parse_assistant(f"<tool_call>{body}</tool_call>").items
    assert c == ToolCall(name, arguments)
