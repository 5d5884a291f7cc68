"""Turning an assistant message into tool calls, whatever shape the trainer hands it over in.

Three shapes are read (DESIGN §8, issue #6):

- an OpenAI-style dict: ``{"content": …, "tool_calls": [{"id", "type": "function",
  "function": {"name", "arguments"}}]}`` with ``arguments`` a JSON string or a dict;
- raw Qwen3 text: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks, with any
  ``<think>…</think>`` reasoning ignored;
- the later-Qwen (Qwen3-Coder) block: ``<tool_call><function=name><parameter=p>value
  </parameter></function></tool_call>``, whose values arrive as text and are converted to the
  tool's declared types by the tool registry (``ToolCall.loose``).

Nothing here raises on bad input: a block that cannot be read becomes a :class:`ParseIssue` in
its place, which the runtime answers with an error result so the agent can recover. An
assistant message with at least one block (readable or not) is a tool-calling turn; a message
with none ends the episode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from shopgen.gen.store import BoundedCache

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]*)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]*)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One readable call.

    Attributes:
        name: the tool name as written.
        arguments: argument name → value.
        call_id: the id the model gave (OpenAI format), or None for raw text.
        loose: values are raw text (the ``<parameter=…>`` format) and still need converting
            to the declared types.
    """

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None
    loose: bool = False


@dataclass(frozen=True, slots=True)
class ParseIssue:
    """A call-shaped part of the message that could not be read as one call.

    Attributes:
        message: a short reason the agent can act on.
        name: the tool name, when it could be recovered.
        call_id: the id the model gave, when there was one.
    """

    message: str
    name: str | None = None
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """An assistant message split into visible text and calls, in the order written.

    ``shared`` marks a parse :func:`parse_shared` remembers: every message with the same
    text gets this object, its argument dicts included, so the runtime may remember what it
    derives from them by identity (``registry.invoke``'s ``shared``).
    """

    content: str
    items: tuple[ToolCall | ParseIssue, ...] = field(default_factory=tuple)
    shared: bool = field(default=False, compare=False)

    @property
    def calls_attempted(self) -> bool:
        """Whether the message tried to call a tool (a turn that does not end the episode)."""
        return bool(self.items)


def parse_assistant(message: object) -> ParsedMessage:
    """Read an assistant message in any supported shape; never raises.

    >>> p = parse_assistant('<think>hm</think>ok <tool_call>{"name": "cart_view", "arguments": {}}</tool_call>')
    >>> p.content, p.items[0].name
    ('ok', 'cart_view')
    """
    if isinstance(message, str):
        return parse_text(message)
    if isinstance(message, dict):
        return _parse_openai(message)
    return ParsedMessage(
        "", (ParseIssue(f"cannot read an assistant message of type {type(message).__name__}"),)
    )


#: The parse of an empty message (immutable, so one is enough).
_NOTHING = ParsedMessage("")
#: Distinct texts and messages :func:`parse_shared` remembers before it starts over.
_SHARED_LIMIT = 8192
_SHARED_TEXTS = BoundedCache(_SHARED_LIMIT)  # text → ParsedMessage
#: (content, id, type, name, arguments, id, …) → ParsedMessage; see :func:`_message_key`.
_SHARED_MESSAGES = BoundedCache(_SHARED_LIMIT)
#: id(message) → (message, its copy, ParsedMessage) for a message dict read again (a replayed
#: transcript hands the runtime the same dicts every time): a hit needs the very object
#: (held, so its id is not reused) and its content equal to the copy (:func:`_copied`).
#: Equal content is the same parse: the key's values were text or None, and an unchanged
#: one is the same object; a changed value equals text only if it is that text (a value
#: that claims to equal any text, such as ``mock.ANY``, is not one a message holds).
_SHARED_OBJECTS = BoundedCache(_SHARED_LIMIT)


def parse_shared(message: object) -> ParsedMessage:
    """:func:`parse_assistant`, remembered per identical text and per identical message.

    For the runtime, which only reads the parse: the result, and each call's ``arguments``
    dict, is shared by every message with the same text (a replayed transcript, a trainer's
    group of rollouts of one task), so a caller must never change it. Raw text is remembered
    whole; an OpenAI dict, which cannot be a key, by everything the parse reads of it
    (:func:`_message_key`), which spares decoding the arguments and building the parse; a
    dict read again is remembered as itself (:data:`_SHARED_OBJECTS`), which spares building
    and hashing its key (most of a replayed message's cost).
    """
    if isinstance(message, str):
        return _shared_text(message)
    if isinstance(message, dict):
        hit = _SHARED_OBJECTS.data.get(id(message))
        if hit is not None and hit[0] is message and _unchanged(hit[1], message):
            return hit[2]
        key = _message_key(message)
        if key is None:
            return _parse_openai(message, read_text=_shared_text)
        if len(key) == 1:
            return _shared_text(key[0])
        parsed = _SHARED_MESSAGES.get(key)
        if parsed is None:
            return _SHARED_MESSAGES.put(key, _remembered(_parse_openai(message)))
        # Read before: most likely a replay of this very dict, remembered as itself from now on.
        _SHARED_OBJECTS.put(id(message), (message, _copied(message), parsed))
        return parsed
    return parse_assistant(message)


def _unchanged(copy: dict[str, Any], message: dict[str, Any]) -> bool:
    """Whether ``message`` still equals its remembered ``copy`` (see :data:`_SHARED_OBJECTS`).

    A value of a key the parse does not read may be anything: one whose comparison fails (an
    array replaced in place) counts as a change, so the message is read anew.
    """
    try:
        return copy == message
    except Exception:  # any failing comparison: read the message anew
        return False


def _copied(message: dict[str, Any]) -> dict[str, Any]:
    """A message with calls (a :func:`_message_key`), copied down to its calls' functions.

    What :data:`_SHARED_OBJECTS` compares the message with later: the texts themselves are
    shared, not copied (immutable), so an unchanged message compares equal in one C-level pass
    that meets the very same objects and never reads a text.
    """
    calls = [{**c, "function": {**c["function"]}} for c in message["tool_calls"]]
    return {**message, "tool_calls": calls}


def _shared_text(text: str) -> ParsedMessage:
    return _SHARED_TEXTS.remember(text, lambda: _remembered(parse_text(text)))


def _remembered(parsed: ParsedMessage) -> ParsedMessage:
    return replace(parsed, shared=True)


def _message_key(message: dict[str, Any]) -> tuple[Any, ...] | None:
    """Everything :func:`_parse_openai` reads of a message, or None when it is not all text.

    The content text (None reads as empty), then each call's id, type, name and arguments,
    defaults filled in as the parse fills them, in one flat tuple (cheaper to hash than one
    per call); the content alone when there are no calls (the parse then reads only it).
    Content given as parts, a call or function that is not a dict, ``tool_calls`` that is
    not a list, or a value that is neither text nor None (such as arguments given as a dict)
    gives None. Text and None compare equal only to themselves, so equal keys are equal
    values and the parse, a function of them, is the same: the values' types are checked once,
    all together, after the loop.
    """
    content = message.get("content")
    if content is None:
        content = ""
    elif type(content) is not str:
        return None
    calls = message.get("tool_calls")
    if not calls:
        return (content,)
    if type(calls) is not list:
        return None
    key = [content]
    for call in calls:
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict:
            return None
        key += (
            call.get("id"),
            call.get("type", "function"),
            function.get("name"),
            function.get("arguments", {}),
        )
    return tuple(key) if _TEXT_TYPES.issuperset(map(type, key)) else None


#: The value types a message key may hold (see :func:`_message_key`).
_TEXT_TYPES = frozenset({str, type(None)})


def parse_text(text: str) -> ParsedMessage:
    """Read raw model text with Qwen3 ``<tool_call>`` blocks."""
    if "</think>" in text and "<think>" not in text.split("</think>", 1)[0]:
        # The chat template opened <think> in the prompt, so the completion starts inside it.
        text = text.split("</think>", 1)[1]
    text = _THINK.sub("", text)
    items = tuple(_parse_block(m.group(1)) for m in _BLOCK.finditer(text))
    content = _BLOCK.sub("", text).strip()
    return ParsedMessage(content, items)


#: Why JSON that is well formed can still be unreadable: Python refuses integers of more than
#: 4,300 digits (``ValueError``) and nesting deeper than its recursion limit.
_UNREADABLE = "a number too long or nesting too deep"


def _parse_block(body: str) -> ToolCall | ParseIssue:
    body = body.strip()
    if body.startswith("<function="):
        return _parse_function_block(body)
    if not body:
        return ParseIssue("empty <tool_call> block")
    decoder = json.JSONDecoder()
    try:
        value, end = decoder.raw_decode(body)
    except json.JSONDecodeError as exc:
        return ParseIssue(f"malformed JSON in <tool_call>: {exc.msg} at char {exc.pos}")
    except (ValueError, RecursionError):
        return ParseIssue(f"unreadable JSON in <tool_call>: {_UNREADABLE}")
    rest = body[end:].strip()
    if isinstance(value, list) or (rest and rest[0] in "{["):
        return ParseIssue("several calls in one <tool_call> block; write one block per call")
    if rest:
        return ParseIssue("unexpected text after the JSON object in <tool_call>")
    return _call_from_object(value, call_id=None)


def _call_from_object(value: object, call_id: str | None) -> ToolCall | ParseIssue:
    if not isinstance(value, dict):
        return ParseIssue('a tool call must be a JSON object {"name": …, "arguments": {…}}')
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return ParseIssue('a tool call needs a "name" string', call_id=call_id)
    extra = sorted(set(value) - {"name", "arguments"})
    if extra:
        return ParseIssue(
            f"unexpected key {extra[0]!r} in the call; use name and arguments", name, call_id
        )
    return _with_arguments(name, value.get("arguments", {}), call_id)


def _with_arguments(name: str, arguments: object, call_id: str | None) -> ToolCall | ParseIssue:
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                return ParseIssue(
                    f"malformed JSON in arguments: {exc.msg} at char {exc.pos}", name, call_id
                )
            except (ValueError, RecursionError):
                return ParseIssue(f"unreadable JSON in arguments: {_UNREADABLE}", name, call_id)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ParseIssue("arguments must be a JSON object", name, call_id)
    return ToolCall(name, arguments, call_id)


def _parse_function_block(body: str) -> ToolCall | ParseIssue:
    functions = _FUNCTION.findall(body)
    if len(functions) != 1:
        return ParseIssue("several calls in one <tool_call> block; write one block per call")
    name, inner = functions[0]
    if not name:
        return ParseIssue("<function=…> needs a tool name")
    arguments: dict[str, Any] = {}
    for key, value in _PARAMETER.findall(inner):
        if not key:
            return ParseIssue("<parameter=…> needs a parameter name", name)
        if key in arguments:
            return ParseIssue(f"parameter {key!r} given twice", name)
        # The template writes "\nvalue\n"; one newline each side is layout, not value.
        arguments[key] = value.removeprefix("\n").removesuffix("\n")
    return ToolCall(name, arguments, None, loose=True)


def _content_text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _parse_openai(
    message: dict[str, Any], read_text: Callable[[str], ParsedMessage] = parse_text
) -> ParsedMessage:
    """An OpenAI-style message, its text read by ``read_text`` (plain or remembered)."""
    text = _content_text(message.get("content"))
    calls = message.get("tool_calls")
    if not calls:
        # A server without a tool parser leaves Qwen's blocks in the content.
        return read_text(text)
    visible = read_text(text) if text else _NOTHING
    if not isinstance(calls, list):
        return ParsedMessage(visible.content, (ParseIssue("tool_calls must be a list"),))
    items = [_parse_openai_call(call) for call in calls]
    return ParsedMessage(visible.content, (*items, *visible.items))


def _parse_openai_call(call: object) -> ToolCall | ParseIssue:
    if not isinstance(call, dict):
        return ParseIssue("each entry of tool_calls must be an object")
    call_id = call.get("id") if isinstance(call.get("id"), str) else None
    if call.get("type", "function") != "function":
        return ParseIssue(f"unsupported tool call type {call.get('type')!r}", call_id=call_id)
    function = call.get("function")
    if not isinstance(function, dict):
        return ParseIssue('a tool call needs a "function" object', call_id=call_id)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return ParseIssue('a tool call needs a "name" string', call_id=call_id)
    return _with_arguments(name, function.get("arguments", {}), call_id)
