"""The runtime's second-round scoring memos (issue #7) change nothing an episode shows.

``parse_shared`` hands every caller the same parse (and the same ``arguments`` dicts), the
simulated customer remembers rendered replies on its compiled script, and ``ask_user`` its
encoded result: each must equal the plain computation, and playing must never change a
remembered value.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.env import parsing
from shopgen.env.episode import ShopEnv
from shopgen.env.parsing import parse_assistant, parse_shared
from shopgen.env.tools import dialogue
from shopgen.env.user import SimulatedUser, compile_script, match_slots, stems
from shopgen.gen.store import BoundedCache
from shopgen.policies import POLICIES
from shopgen.policies import play as play_policy
from shopgen.schemas.envs import ENV_NAMES
from shopgen.taskgen import TaskFactory

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)
arguments = st.one_of(
    json_values,
    st.dictionaries(st.text(max_size=5), json_values, max_size=3).map(json.dumps),
    st.text(max_size=12),
)
calls = st.fixed_dictionaries(
    {},
    optional={
        "id": st.none() | st.text(max_size=4) | st.integers(),
        "type": st.sampled_from(["function", "code"]) | st.none(),
        "function": st.fixed_dictionaries(
            {}, optional={"name": st.text(max_size=6) | st.integers(), "arguments": arguments}
        )
        | json_values,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "content": st.none()
        | st.text(max_size=20)
        | st.lists(st.fixed_dictionaries({"text": st.text(max_size=5)}), max_size=2),
        "tool_calls": st.lists(calls | json_values, max_size=3) | json_values,
    },
)


@given(messages)
def test_shared_parse_of_a_dict_equals_the_plain_parse_cold_and_warm(message):
    plain = parse_assistant(message)
    assert parse_shared(message) == plain
    assert parse_shared(message) == plain  # now remembered


#: Calls whose every value is text or None: the messages a parse is remembered for.
text_calls = st.fixed_dictionaries(
    {
        "id": st.none() | st.text(max_size=3),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["cart_view", "ask_user", "x"]), "arguments": arguments}
        ),
    }
)
texts = st.none() | st.text(max_size=4)
_edits = st.one_of(
    st.tuples(st.just("content"), texts | json_values),
    st.tuples(st.just("tool_calls"), st.lists(text_calls | calls, max_size=3)),
    st.tuples(st.just("call"), st.integers(0, 2), st.sampled_from(["id", "type"]), texts),
    st.tuples(
        st.just("function"), st.integers(0, 2), st.sampled_from(["name", "arguments"]), arguments
    ),
    st.tuples(st.just("call"), st.integers(0, 2), st.sampled_from(["id", "type"]), json_values),
    st.tuples(st.just("same")),  # the content's text again, in a new object
)


def _edit(message: dict, edit: tuple) -> None:
    """Change ``message`` in place, as a caller reusing one dict might."""
    kind, *rest = edit
    found = message.get("tool_calls")
    calls_ = [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []
    if kind in ("content", "tool_calls"):
        message[kind] = rest[0]
    elif kind == "same" and isinstance(message.get("content"), str):
        message["content"] = "".join(list(message["content"]))
    elif kind == "call" and calls_:
        calls_[rest[0] % len(calls_)][rest[1]] = rest[2]
    elif kind == "function" and calls_:
        function = calls_[rest[0] % len(calls_)].get("function")
        if isinstance(function, dict):
            function[rest[1]] = rest[2]


@given(
    message=st.fixed_dictionaries(
        {"content": st.text(max_size=8), "tool_calls": st.lists(text_calls, min_size=1, max_size=3)}
    ),
    edits=st.lists(_edits, max_size=6),
)
def test_a_dict_read_again_and_changed_in_place_parses_as_it_now_reads(message, edits):
    """parse_shared remembers a dict read again as itself: a change in place is never missed."""
    for edit in [None, *edits]:
        if edit is not None:
            _edit(message, edit)
        plain = parse_assistant(message)
        for _ in range(3):  # first read, read again (remembered as itself), then the object's hit
            assert parse_shared(message) == plain


def test_a_replayed_dict_is_remembered_as_itself():
    message = {"content": "", "tool_calls": [_call(id="c1", name="cart_view", arguments="{}")]}
    first = parse_shared(message)
    assert parse_shared(message) is first
    assert parsing._SHARED_OBJECTS.data[id(message)][0] is message
    assert parse_shared(message) is first


@given(st.text(max_size=60) | st.just('<tool_call>{"name": "cart_view", "arguments": {}}'))
def test_shared_parse_of_text_equals_the_plain_parse(text):
    assert parse_shared(text) == parse_assistant(text)
    assert parse_shared(text) == parse_assistant(text)


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


def _transcripts(shop: ShopEnv, rows: list) -> list[str]:
    out = []
    for row in rows:
        for policy in POLICIES:
            score = play_policy(shop, row, policy)
            out.append(json.dumps([shop.transcript, repr(score)], sort_keys=True, default=repr))
    return out


def test_playing_never_changes_a_shared_parse_and_warm_replays_equal_cold_ones(shop):
    factory = TaskFactory(shop, seed=0)
    rows = [factory.make(name, d, 0).row for name in ENV_NAMES for d in (0, 6)]
    warm_before = _transcripts(shop, rows)
    # Every remembered parse still equals a fresh parse of its key: nothing changed them.
    for (content, *calls), parsed in parsing._SHARED_MESSAGES.items():
        message = {"content": content, "tool_calls": []}
        for k in range(0, len(calls), 4):
            call_id, kind, name, args = calls[k : k + 4]
            call = {"type": kind, "function": {"name": name, "arguments": args}}
            if call_id is not None:
                call["id"] = call_id
            message["tool_calls"].append(call)
        assert parsed == parse_assistant(message)
    for text, parsed in parsing._SHARED_TEXTS.items():
        assert parsed == parse_assistant(text)
    # Replaying on warm memos, then on cold ones, shows the same transcripts and scores.
    assert _transcripts(shop, rows) == warm_before
    parsing._SHARED_MESSAGES.clear()
    parsing._SHARED_TEXTS.clear()
    compile_script.cache_clear()
    dialogue._reply_result.cache_clear()
    shop._shared.memo.clear()  # catalog reads and cart results
    assert _transcripts(shop, rows) == warm_before


class _Forgetful(BoundedCache):
    """A memo that remembers nothing: the plain computation to compare against."""

    def __init__(self) -> None:
        super().__init__(limit=1)

    def put(self, key, value):
        return value


def test_remembered_replies_equal_replies_rendered_on_a_fresh_script(shop):
    factory = TaskFactory(shop, seed=0)
    for name in ("cart", "journey", "returns"):
        row = factory.make(name, 6, 0).row
        questions = ["How many do you need?", "Which colour?", "What is it for?", "Which size?"]
        questions += questions  # a repeated question is a new reply (its index is in the key)

        def ask(compiled, row=row, questions=questions) -> list[str]:
            user = SimulatedUser(compiled, row.env, row.seed, row.task_id)
            said = [user.reply(q, turn)["reply"] for turn, q in enumerate(questions, 1)]
            return [*said, user.at_turn_end(99) or ""]

        warm = compile_script(row.user_script)
        first = ask(warm)
        assert ask(warm) == first  # every reply from the memo
        plain = dataclasses.replace(warm, rendered=_Forgetful())
        assert ask(plain) == first  # every reply rendered anew


def _call(**fields):
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    return {**fields, "function": function}


@pytest.mark.parametrize(
    "values",
    [
        ({"type": 1}, {"type": True}, {"type": 1.0}),
        ({"id": 1, "type": 2}, {"id": True, "type": 2.0}),
        ({"arguments": {"q": 1}}, {"arguments": '{"q": 1}'}, {"arguments": None}),
        ({"name": None}, {"name": 0}, {"name": False}),
    ],
)
def test_shared_parses_of_equal_values_of_other_types_are_their_own(values):
    """Only text and None go into a message's memo key: 1, True and 1.0 are equal keys."""
    for fields in values:
        call = _call(**{"name": "cart_view", "arguments": "{}", **fields})
        message = {"content": "hi", "tool_calls": [call]}
        key = parsing._message_key(message)
        assert key is None or all(v is None or type(v) is str for v in key)
        assert parse_shared(message) == parse_assistant(message)
        assert parse_shared(message) == parse_assistant(message)


def _reference_answerable(compiled, question):
    """The slots a question gets answered, what reply recorded of them, and the items it names."""
    slots = tuple(s for s in match_slots(compiled, question) if s.name in compiled.speakable)
    where = tuple(next(i for i, m in enumerate(compiled.matchers) if m.slot is s) for s in slots)
    said = set(stems(question))
    items = tuple(sorted(i for i, words in compiled.item_words.items() if said & words))
    names = tuple(s.name for s in slots)
    existential = bool(said & set(stems("anything particular specific else all")))
    compat = bool(said & set(stems("compatible match same fit share keep")))
    shared = bool(said & set(stems("compatible match same share keep"))) and not said & set(
        stems("ok okay fine alright acceptable good")
    )
    omitted = tuple(s.name for s in slots if s.omitted)
    words = " ".join(stems(question))
    open_ask = bool(said & set(stems("else detail information everything requirement"))) or any(
        " ".join(stems(phrase)) in words for phrase in ("tell me more", "more about", "clarify")
    )
    return slots, where, names, omitted, items, existential, compat, shared, open_ask


@pytest.fixture(scope="module")
def scripts(shop):
    factory = TaskFactory(shop, seed=0)
    rows = [factory.make(name, d, 0).row for name in ("journey", "cart", "policy") for d in (3, 9)]
    return [row.user_script for row in rows]


@given(
    question=st.sampled_from(
        ["which colour?", "how many", "what size and color", "budget", "tell me more details"]
    )
)
def test_answerable_names_and_omitted_slots_are_the_slots_own(scripts, question):
    for text in scripts:
        compiled = compile_script(text)
        for asked in (question, f"About the order: {question}"):
            assert tuple(compiled.answerable(asked)) == _reference_answerable(compiled, asked)


def test_a_remembered_dict_whose_other_values_cannot_compare_is_read_anew():
    """A key the parse does not read may hold an array: replacing it must not make parsing raise."""
    import numpy as np

    call = _call(id="c1", name="cart_view", arguments="{}")
    message = {"logprobs": np.zeros(3), "content": "", "tool_calls": [call]}  # compared first
    for _ in range(3):
        parse_shared(message)
    message["logprobs"] = np.ones(3)
    call["function"]["name"] = "cart_add"
    assert parse_shared(message) == parse_assistant(message)
