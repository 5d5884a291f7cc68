"""Every environment's tasks through the real Qwen3 chat template and back (issue #7).

The template is the one the ``trl`` wheel ships (``trl/chat_templates/qwen3.jinja``, the
Qwen3 release template TRL matches tokenizers against), rendered by ``transformers``' own
function. Each oracle's assistant turns are cut out of the rendered text and replayed as raw
model output: if the template's tool-call syntax and shopgen's parser ever disagree, the replay
stops being correct.
"""

from __future__ import annotations

import json
import re

import pytest

from shopgen.env.episode import ShopEnv
from shopgen.integrations.chat_template import assistant_texts, oracle_conversation, render
from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory
from shopgen.verifiers.replay import play
from shopgen.verifiers.reward import MAX_REWARD

pytest.importorskip("transformers")
QWEN3 = pytest.importorskip("trl.chat_template_utils").qwen3_chat_template

_TOOLS_BLOCK = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)


@pytest.fixture(scope="module")
def env_factory(shop: ShopEnv) -> TaskFactory:
    return TaskFactory(shop, seed=0)


@pytest.fixture(scope="module", params=ENV_NAMES)
def env_tasks(request, env_factory: TaskFactory):
    """One environment's tasks at d=0 and d=4 (every environment, one test case each)."""
    return [env_factory.make(request.param, d, 0).row for d in (0, 4)]


@pytest.fixture(scope="module")
def cart_task(env_factory: TaskFactory):
    return env_factory.make("cart", 4, 0).row


def _roundtrip(shop: ShopEnv, task, *, dict_arguments: bool):
    conversation = oracle_conversation(shop, task, dict_arguments=dict_arguments)
    rendered = render(conversation, task.decoded("tools"), QWEN3)
    return conversation, rendered, assistant_texts(rendered)


@pytest.mark.parametrize("dict_arguments", [True, False], ids=["dict-args", "string-args"])
def test_oracle_replays_correct_from_the_rendered_text(env_tasks, shop, dict_arguments):
    for task in env_tasks:
        conversation, _, texts = _roundtrip(shop, task, dict_arguments=dict_arguments)
        assistant = [m for m in conversation if m["role"] == "assistant"]
        assert len(texts) == len(assistant), task.task_id
        calls = sum(len(m.get("tool_calls") or []) for m in assistant)
        assert sum(t.count("<tool_call>") for t in texts) == calls, task.task_id
        score, state = play(shop.spawn(), task, texts)
        assert score is not None, task.task_id
        assert score.is_correct, (task.task_id, score)
        assert score.reward == pytest.approx(MAX_REWARD)
        assert not state.errors, (task.task_id, state.errors)


def test_rendered_tools_are_the_task_schemas(env_tasks, shop):
    for task in env_tasks:
        _, rendered, _ = _roundtrip(shop, task, dict_arguments=True)
        block = _TOOLS_BLOCK.search(rendered)
        assert block is not None, task.task_id
        shown = [json.loads(line) for line in block.group(1).splitlines()]
        assert shown == task.decoded("tools")
        assert rendered.startswith("<|im_start|>system\n" + task.messages[0].content)


def test_template_layout_is_what_the_parser_was_written_for(cart_task, shop):
    """The last turn opens an empty reasoning block; earlier call turns are bare calls."""
    task = cart_task
    _, _, texts = _roundtrip(shop, task, dict_arguments=True)
    assert texts[-1].startswith("<think>\n\n</think>\n\n")
    assert "<tool_call>" not in texts[-1]
    assert texts[0].startswith('<tool_call>\n{"name": "')


def test_a_broken_call_in_the_text_is_not_correct(cart_task, shop):
    """The replay really reads the text: mangle one call's JSON and the episode fails."""
    task = cart_task
    _, _, texts = _roundtrip(shop, task, dict_arguments=True)
    first = next(i for i, t in enumerate(texts) if "<tool_call>" in t)
    texts[first] = texts[first].replace('"arguments": {', '"arguments": {{', 1)
    score, state = play(shop.spawn(), task, texts)
    assert score is not None
    assert not score.is_correct
    assert state.errors
