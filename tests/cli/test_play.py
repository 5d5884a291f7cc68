"""``shopgen play``: a person plays an episode through stdin (issue #6 §6)."""

import json

import pytest
from click.testing import CliRunner

from shopgen.cli import main
from shopgen.commands.play import as_message, play


def run(catalog_dir, stdin, *args):
    return CliRunner().invoke(
        play, ["--catalog", str(catalog_dir), *args], input=stdin, catch_exceptions=False
    )


@pytest.fixture(scope="module")
def catalog(indexed_catalog_dir):
    return indexed_catalog_dir


def test_play_cart_with_json_and_qwen_blocks(catalog):
    stdin = (
        '{"name": "user_get_visit_history", "arguments": {}}\n'
        "<tool_call>\n"
        '{"name": "ask_user", "arguments": {"question": "Which colour and how many?"}}\n'
        "</tool_call>\n"
        '{"name": "cart_add", "arguments": {"product_id": "NOPE123"}}\n'
        "All done, thanks!\n"
    )
    out = run(catalog, stdin, "--env", "cart", "--d", "3", "--seed", "1")
    assert out.exit_code == 0, out.output
    assert "customer: " in out.output
    assert "[user_get_visit_history]" in out.output
    assert '"visits"' in out.output
    assert '[ask_user] {"reply":' in out.output
    assert '"error":"not_found"' in out.output
    assert "episode over after 4 turn(s)" in out.output
    assert "errors: 1" in out.output


def test_play_returns_lists_orders_and_ends_at_eof(catalog):
    stdin = '{"name": "orders_list", "arguments": {}}\n'
    out = run(catalog, stdin, "--env", "returns", "--d", "2")
    assert out.exit_code == 0, out.output
    assert '[orders_list] {"orders":' in out.output
    assert "episode over after 2 turn(s)" in out.output


def test_play_unknown_catalog_is_one_line_error(tmp_path, capsys):
    code = main(["play", "--catalog", str(tmp_path / "missing")])
    assert code != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1


def test_as_message_reads_json_calls_and_keeps_text():
    msg = as_message('{"name": "cart_view", "arguments": {}}')
    assert msg["tool_calls"][0]["function"]["name"] == "cart_view"
    assert as_message("thanks, bye") == "thanks, bye"
    assert as_message("{not json") is None  # typed again, not sent as a final answer
    assert as_message('{"arguments": {}}') is None


def test_a_broken_call_is_typed_again_not_taken_as_the_answer(catalog):
    stdin = '{"name": "orders_list", "arguments": {\n{"name": "orders_list", "arguments": {}}\n'
    out = run(catalog, stdin, "--env", "returns", "--d", "2")
    assert out.exit_code == 0, out.output
    assert "not a tool call" in out.output
    assert '[orders_list] {"orders":' in out.output
    assert "episode over after 2 turn(s)" in out.output  # the call, then the end of input


def test_playing_the_oracle_scores_full_marks(catalog):
    from shopgen.env.episode import ShopEnv
    from shopgen.taskgen import TaskFactory

    row = TaskFactory(ShopEnv(catalog), seed=0).make("status", 2, 0).row
    lines = []
    for message in json.loads(row.oracle):
        if message.get("tool_calls"):
            calls = [
                {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                for c in message["tool_calls"]
            ]
            lines.append(json.dumps(calls))
        else:
            lines.append(message["content"])
    out = run(catalog, "\n".join(lines) + "\n", "--env", "status", "--d", "2")
    assert out.exit_code == 0, out.output
    assert "reward +0.900 (max 0.90) · correct True" in out.output
