"""The tool registry: one decorated function per tool, its OpenAI schema derived from it.

A tool is a plain function ``fn(ctx, **arguments) -> dict`` decorated with :func:`tool`. Its
type-annotated signature gives the JSON Schema types (``X | None`` or a default → not
required), and its Google docstring gives the description and each argument's text, so the
schema the agent sees cannot drift from the code that runs (STYLE §5, tau2's
``environment/tool.py``). An argument's limits are declared the same way, as annotations —
``Annotated[str, MaxChars(n)]``, ``Annotated[int, Range(low, high)]``,
``Annotated[list[str], Items(low, high)]``: the schema states each (its JSON Schema keyword and
a sentence of the description) and :meth:`ToolSpec.validate` enforces it, naming the limit, so
a limit cannot be enforced without being said. Tools raise :class:`ToolError`; :func:`invoke`
is the single boundary that turns every failure into an error result, records used and shown
ids, and never raises.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from shopgen.env.state import ErrorRecord
from shopgen.gen.store import BoundedCache

ToolKind = Literal["read", "write"]

#: Every registered tool, by name. Filled by importing the tool modules (see ``__init__``).
REGISTRY: dict[str, ToolSpec] = {}

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SECTION = re.compile(r"^(Args|Returns|Raises|Examples?|Note):\s*$")
_ARG_LINE = re.compile(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")
_INT_TEXT = re.compile(r"^[+-]?\d+$")
#: What :meth:`ToolSpec.validate` reads for an argument not given (None can be a value).
_ABSENT = object()
#: Arguments whose product ids count as used by the agent (DESIGN §9's hallucination record).
_ID_PARAMS = ("product_id", "product_ids")


@dataclass(frozen=True, slots=True)
class MaxChars:
    """A string argument's length limit, declared as ``Annotated[str, MaxChars(n)]``.

    ``ask_user`` refused a question over 500 characters while its schema said nothing of a
    limit: a model could not know why its long question failed, nor keep under it. Declared
    here, the limit is written into the schema (``maxLength`` and a sentence of the
    description) and checked by :meth:`ToolSpec.validate`, whose refusal says it.
    """

    limit: int

    def problem(self, base: Any) -> str | None:
        """Why this limit cannot be declared on an argument of type ``base`` (None: it can)."""
        return None if base is str and self.limit >= 1 else "a str argument and a limit >= 1"

    def keywords(self) -> dict[str, Any]:
        """The JSON Schema keywords that state the limit."""
        return {"maxLength": self.limit}

    def sentence(self) -> str:
        """The limit in words, appended to the argument's description."""
        return f"At most {self.limit} characters."

    def breach(self, value: Any) -> str | None:
        """How ``value`` (already converted) breaks the limit, or None when it keeps it."""
        if type(value) is str and len(value) > self.limit:
            return f"is {len(value)} characters long, over the limit of {self.limit}; shorten it"
        return None


@dataclass(frozen=True, slots=True)
class Range:
    """A number argument's bounds, declared as ``Annotated[int, Range(low, high)]``.

    ``cart_add`` refused a quantity over 99 while its schema said only "at least 1": the
    bound is stated here once, as ``minimum`` / ``maximum`` and a sentence of the
    description, and enforced by :meth:`ToolSpec.validate`. Either end may be None (open).
    """

    low: int | float | None = None
    high: int | float | None = None

    def problem(self, base: Any) -> str | None:
        """Why this limit cannot be declared on an argument of type ``base`` (None: it can)."""
        ends = [e for e in (self.low, self.high) if e is not None]
        if base not in (int, float) or not ends or (len(ends) == 2 and ends[0] > ends[1]):
            return "an int or float argument and low <= high, not both None"
        return None

    def keywords(self) -> dict[str, Any]:
        """The JSON Schema keywords that state the limit."""
        out: dict[str, Any] = {}
        if self.low is not None:
            out["minimum"] = self.low
        if self.high is not None:
            out["maximum"] = self.high
        return out

    def sentence(self) -> str:
        """The limit in words, appended to the argument's description."""
        if self.low is None:
            return f"At most {self.high}."
        if self.high is None:
            return f"At least {self.low}."
        return f"Between {self.low} and {self.high}."

    def breach(self, value: Any) -> str | None:
        """How ``value`` (already converted) breaks the limit, or None when it keeps it."""
        if type(value) is not int and type(value) is not float:
            return None
        # Written as "not inside" so that a NaN is outside every bound.
        if self.low is not None and not value >= self.low:
            return f"is {value}, under the minimum of {self.low}"
        if self.high is not None and not value <= self.high:
            return f"is {value}, over the maximum of {self.high}"
        return None


@dataclass(frozen=True, slots=True)
class Items:
    """A list argument's length bounds, declared as ``Annotated[list[str], Items(low, high)]``.

    ``recommend_products`` refused an empty list and one of over 20 ids while its schema said
    neither: stated here as ``minItems`` / ``maxItems`` and a sentence of the description,
    and enforced by :meth:`ToolSpec.validate`. ``high`` None is no upper bound.
    """

    low: int = 0
    high: int | None = None

    def problem(self, base: Any) -> str | None:
        """Why this limit cannot be declared on an argument of type ``base`` (None: it can)."""
        if typing.get_origin(base) is not list or self.low < 0:
            return "a list argument and low >= 0"
        empty = self.high is None and self.low == 0
        inverted = self.high is not None and self.high < self.low
        if empty or inverted:
            return "a list argument and low <= high, not an empty bound"
        return None

    def keywords(self) -> dict[str, Any]:
        """The JSON Schema keywords that state the limit."""
        out: dict[str, Any] = {}
        if self.low:
            out["minItems"] = self.low
        if self.high is not None:
            out["maxItems"] = self.high
        return out

    def sentence(self) -> str:
        """The limit in words, appended to the argument's description."""
        if self.high is None:
            return f"At least {self.low} {_items(self.low)}."
        if not self.low:
            return f"At most {self.high} {_items(self.high)}."
        return f"Between {self.low} and {self.high} items."

    def breach(self, value: Any) -> str | None:
        """How ``value`` (already converted) breaks the limit, or None when it keeps it."""
        if type(value) is not list:
            return None
        n = len(value)
        if n < self.low:
            return f"has {n} {_items(n)}, under the minimum of {self.low}"
        if self.high is not None and n > self.high:
            return f"has {n} {_items(n)}, over the limit of {self.high}"
        return None


def _items(n: int) -> str:
    return "item" if n == 1 else "items"


#: The annotations that declare an argument's limit (see the module docstring).
Limit = MaxChars | Range | Items
#: Every JSON Schema keyword a :data:`Limit` writes (adapters that cannot write them rely on
#: the description's sentence, which states the same limit).
LIMIT_KEYWORDS = ("maxLength", "minimum", "maximum", "minItems", "maxItems")


class ToolError(Exception):
    """A tool cannot do what was asked; the message is shown to the agent.

    Args:
        message: one short sentence the agent can act on.
        kind: an :data:`~shopgen.env.state.ErrorKind`, ``refused`` by default.
    """

    def __init__(self, message: str, kind: str = "refused") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Encoded:
    """A tool result already written as its JSON text, with the ids it shows.

    A tool whose result is large and made of immutable pieces (search cards) returns this
    instead of a dict, so the hot path neither re-encodes the pieces nor walks them for ids.
    ``text`` must be exactly the compact JSON a dict result would have given.
    """

    text: str
    product_ids: tuple[str, ...] = ()
    variant_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Param:
    """One argument: its name, annotation, whether it is required, and its schema."""

    name: str
    annotation: Any
    required: bool
    schema: dict[str, Any]
    #: Value types :func:`_convert` returns unchanged (``str | None`` → str and NoneType): a
    #: value of exactly one of them skips the walk over the annotation (the hot path).
    exact: tuple[type, ...] = ()
    #: The same for the items of a list argument (``list[str]`` → str): a list of only such
    #: items is copied as it is, without converting item by item.
    item_exact: tuple[type, ...] = ()
    #: The limits the argument declares (:data:`Limit`), checked in this order.
    limits: tuple[Limit, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A registered tool."""

    name: str
    kind: ToolKind
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    schema: dict[str, Any]
    names: frozenset[str] = frozenset()  # the params' names
    #: Of ``product_id`` and ``product_ids``, the params the tool has (the ids it is "used" on).
    id_params: tuple[str, ...] = ()

    def validate(self, arguments: dict[str, Any], *, loose: bool = False) -> dict[str, Any]:
        """Arguments checked against the signature, converted where ``loose``.

        Raises:
            ToolError: kind ``bad_arguments`` for a missing, extra or ill-typed argument.
        """
        if not arguments.keys() <= self.names:  # (issuperset would copy the keys to a set)
            extra = sorted(set(arguments) - self.names)
            allowed = ", ".join(sorted(self.names)) or "none"
            raise ToolError(
                f"{self.name} has no argument {extra[0]!r} (arguments: {allowed})", "bad_arguments"
            )
        out: dict[str, Any] = {}
        for p in self.params:
            name = p.name
            value = arguments.get(name, _ABSENT)
            if value is _ABSENT:
                if p.required:
                    raise ToolError(f"{self.name} needs argument {name!r}", "bad_arguments")
                continue
            kind = type(value)
            if kind in p.exact:
                out[name] = value
            elif kind is list and p.item_exact and all(type(v) in p.item_exact for v in value):
                out[name] = list(value)
            else:
                out[name] = _convert(self.name, name, value, p.annotation, loose)
            if p.limits:
                for limit in p.limits:
                    breach = limit.breach(out[name])
                    if breach is not None:
                        raise ToolError(f"{self.name}: argument {name!r} {breach}", "bad_arguments")
        return out


def tool(kind: ToolKind) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a tool named after it, tagged ``read`` or ``write``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        spec = build_spec(fn, kind)
        if spec.name in REGISTRY:
            raise ValueError(f"tool {spec.name!r} is registered twice")
        REGISTRY[spec.name] = spec
        return fn

    return register


def build_spec(fn: Callable[..., Any], kind: ToolKind) -> ToolSpec:
    """The spec of ``fn``: parameters after the first (the context), schema from the docstring."""
    hints = typing.get_type_hints(fn, include_extras=True)
    summary, arg_docs = parse_docstring(inspect.getdoc(fn) or "")
    params = []
    for name, parameter in list(inspect.signature(fn).parameters.items())[1:]:
        annotation, limits = _limits(fn.__name__, name, hints[name])
        optional = _is_optional(annotation)
        has_default = parameter.default is not inspect.Parameter.empty
        if name not in arg_docs:
            raise ValueError(f"tool {fn.__name__}: argument {name!r} has no docstring entry")
        schema = {**_json_schema(_strip_none(annotation)), "description": arg_docs[name]}
        for limit in limits:
            schema.update(limit.keywords())
            schema["description"] += f" {limit.sentence()}"
        target = _strip_none(annotation)
        items = _exact(typing.get_args(target)[0]) if typing.get_origin(target) is list else ()
        params.append(
            Param(
                name,
                annotation,
                not (optional or has_default),
                schema,
                _exact(annotation),
                items,
                limits,
            )
        )
    schema = {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": summary,
            "parameters": {
                "type": "object",
                "properties": {p.name: p.schema for p in params},
                "required": [p.name for p in params if p.required],
                "additionalProperties": False,
            },
        },
    }
    names = frozenset(p.name for p in params)
    id_params = tuple(n for n in _ID_PARAMS if n in names)
    return ToolSpec(fn.__name__, kind, fn, tuple(params), schema, names, id_params)


def _limits(tool_name: str, name: str, annotation: Any) -> tuple[Any, tuple[Limit, ...]]:
    """``annotation`` without its ``Annotated`` wrapper, and the limits (:data:`Limit`) it declares.

    Raises:
        TypeError: a limit does not fit the argument's type (a length on a number, a range
            on a string) or is empty or inverted.
    """
    if typing.get_origin(annotation) is not typing.Annotated:
        return annotation, ()
    base = annotation.__origin__
    limits = tuple(m for m in annotation.__metadata__ if isinstance(m, MaxChars | Range | Items))
    for limit in limits:
        problem = limit.problem(_strip_none(base))
        if problem is not None:
            raise TypeError(f"tool {tool_name}: {type(limit).__name__} needs {problem} ({name})")
    return base, limits


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A Google docstring's description (text before the sections) and its ``Args`` entries."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line.strip())
        if header and not line.startswith(" "):
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line.strip())
        elif section == "Args" and line.strip():
            match = _ARG_LINE.match(line.strip())
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current:
                args[current] = f"{args[current]} {line.strip()}"
    text = " ".join(" ".join(summary).split())
    return text, args


def _is_optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation) and _is_union(annotation)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _strip_none(annotation: Any) -> Any:
    if not _is_union(annotation):
        return annotation
    rest = [a for a in typing.get_args(annotation) if a is not type(None)]
    if len(rest) != 1:
        raise TypeError(f"unsupported union {annotation!r}")
    return rest[0]


def _exact(annotation: Any) -> tuple[type, ...]:
    """The types :func:`_convert` passes through unchanged for ``annotation`` (see ``Param``).

    ``int`` excludes bool (``type(True) is bool``), ``float`` accepts only floats (ints are
    converted), and lists are always walked item by item.
    """
    target = _strip_none(annotation)
    exact = (target,) if target in _JSON_TYPES else ()
    return (*exact, type(None)) if _is_optional(annotation) else exact


def _json_schema(annotation: Any) -> dict[str, Any]:
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return {"type": "array", "items": _json_schema(item)}
    raise TypeError(f"unsupported tool argument type {annotation!r}")


def _convert(tool_name: str, name: str, value: Any, annotation: Any, loose: bool) -> Any:
    """``value`` as ``annotation``, or a ToolError naming the argument and the expected type."""
    if value is None and _is_optional(annotation):
        return None
    target = _strip_none(annotation)
    if loose and isinstance(value, str) and target is not str:
        value = _from_text(value, target)
    if target is str and isinstance(value, str):
        return value
    if target is bool and isinstance(value, bool):
        return value
    if target is int and not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if target is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if typing.get_origin(target) is list and isinstance(value, list):
        (item,) = typing.get_args(target)
        return [_convert(tool_name, f"{name}[{i}]", v, item, loose) for i, v in enumerate(value)]
    expected = _json_schema(target)["type"]
    if expected == "array":
        expected = f"array of {_json_schema(target)['items']['type']}"
    raise ToolError(
        f"{tool_name}: argument {name!r} must be {expected}, got {_json_name(value)}",
        "bad_arguments",
    )


def _from_text(text: str, target: Any) -> Any:
    """A ``<parameter=…>`` value converted to the declared type; unchanged when it cannot be."""
    stripped = text.strip()
    if target is int and _INT_TEXT.match(stripped):
        try:
            return int(stripped)
        except ValueError:  # more digits than Python converts: left as text, rejected as such
            return text
    if target is bool and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if target is float:
        try:
            return float(stripped)
        except ValueError:
            return text
    if typing.get_origin(target) is list:
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):  # malformed, too long a number or too deep
            return text
    return text


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", int: "integer", float: "number", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building a new
#: encoder per call (``dumps`` does when given options): every tool result is encoded.
encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def error_result(kind: str, message: str) -> str:
    """The JSON text of an error result."""
    return encode_json({"error": kind, "message": message})


def encoded_object(**fields: Any) -> Encoded:
    """``encoded(dict(fields))``, reusing the text of fields that are already :class:`Encoded`.

    Compact JSON of an object is ``{`` + ``"key":value`` pairs joined by commas + ``}``, so a
    remembered part (a cart summary) is pasted in as it is, neither rebuilt nor re-encoded.
    """
    parts = []
    products: list[str] = []
    variants: list[str] = []
    for key, value in fields.items():
        part = value if type(value) is Encoded else encoded(value)
        parts.append(f"{encode_json(key)}:{part.text}")
        products += part.product_ids
        variants += part.variant_ids
    return Encoded("{" + ",".join(parts) + "}", tuple(products), tuple(variants))


def encoded(result: Any) -> Encoded:
    """``result`` written as the :class:`Encoded` that :func:`invoke` would make of it.

    For tools that memoise a result across episodes: the text and the ids are computed once.
    """
    products: set[str] = set()
    variants: set[str] = set()
    _collect_ids(result, products, variants)
    return Encoded(encode_json(result), tuple(products), tuple(variants))


def _collect_ids(value: Any, products: set[str], variants: set[str]) -> None:
    """Every ``product_id`` / ``variant_id`` / ``product_ids`` value anywhere in ``value``."""
    # Iterative, and only containers are pushed: this runs on every tool result (hot path).
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            for key, item in node.items():
                kind = type(item)
                if kind is str:
                    if key == "product_id":
                        products.add(item)
                    elif key == "variant_id":
                        variants.add(item)
                elif kind is list:
                    if key == "product_ids":
                        products.update(i for i in item if isinstance(i, str))
                    else:
                        push(item)
                elif kind is dict:
                    push(item)
        elif type(node) is list:
            for item in node:
                if type(item) is dict or type(item) is list:
                    push(item)


#: Shared argument dicts whose validation :func:`invoke` remembers (see its ``shared``).
_VALIDATED_LIMIT = 8192
_VALIDATED = BoundedCache(_VALIDATED_LIMIT)  # id(arguments) → (arguments, spec, loose, checked)


def _checked(
    spec: ToolSpec, arguments: dict[str, Any], loose: bool
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``spec.validate(arguments, loose=loose)`` and the product ids the call uses, in order.

    The ids are the values of the tool's ``product_id`` / ``product_ids`` arguments
    (:attr:`ToolSpec.id_params`), which :func:`invoke` records as used.

    Raises:
        ToolError: as :meth:`ToolSpec.validate`.
    """
    args = spec.validate(arguments, loose=loose)
    used: list[str] = []
    for key in spec.id_params:
        value = args.get(key)
        if isinstance(value, list):
            used += value
        elif value:
            used.append(value)
    return args, tuple(used)


def _validated(
    spec: ToolSpec, arguments: dict[str, Any], loose: bool
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """:func:`_checked`, remembered per shared ``arguments`` object.

    A shared parse hands the same, never-changed dict to every replay of a message, so its
    validation is a pure function of that object (held here, so its ``id`` is not reused
    while remembered), the tool and ``loose``. A failed validation raises again each time.
    """
    hit = _VALIDATED.data.get(id(arguments))
    if hit is not None and hit[0] is arguments and hit[1] is spec and hit[2] is loose:
        return hit[3]
    checked = _checked(spec, arguments, loose)
    _VALIDATED.put(id(arguments), (arguments, spec, loose, checked))
    return checked


def invoke(
    ctx: Any,
    name: str,
    arguments: dict[str, Any],
    offered: frozenset[str],
    *,
    loose: bool = False,
    shared: bool = False,
) -> tuple[str, ErrorRecord | None]:
    """Run one call against an episode; the only place tool failures become results.

    Args:
        ctx: the episode's :class:`~shopgen.env.tools.context.ToolContext`.
        name: the tool name the agent wrote.
        arguments: its arguments (from :mod:`shopgen.env.parsing`).
        offered: the tool names this episode offers.
        loose: argument values are raw text still to convert (the ``<parameter=…>`` format).
        shared: ``arguments`` belongs to a remembered parse (``ParsedMessage.shared``), never
            changed (:func:`~shopgen.env.parsing.parse_shared`'s contract), so its validated form is
            remembered (:func:`_validated`) and shared as well: tools never change their
            arguments, and ``state.tool_calls`` is a record, read and never changed.

    Returns:
        The result's JSON text, and the error record when the call failed (also appended to
        ``ctx.state.errors``).
    """
    state = ctx.state
    spec = REGISTRY.get(name)
    try:
        if spec is None:
            raise ToolError(
                f"there is no tool {name!r}; tools: {', '.join(sorted(offered))}", "unknown_tool"
            )
        if name not in offered:
            raise ToolError(
                f"{name} is not available here; tools: {', '.join(sorted(offered))}", "not_offered"
            )
        args, used = (_validated if shared else _checked)(spec, arguments, loose)
        for pid in used:
            state.note_used(pid)
        state.tool_calls.append((state.turns, name, args))
        result = spec.fn(ctx, **args)
    except ToolError as exc:
        record = ErrorRecord(state.turns, name, exc.kind, exc.message)
        state.errors.append(record)
        return error_result(exc.kind, exc.message), record
    if type(result) is Encoded:
        # Most remembered results (replies, carts, orders) show no ids: skip the empty updates.
        if result.product_ids:
            state.shown_ids.update(result.product_ids)
        if result.variant_ids:
            state.shown_variant_ids.update(result.variant_ids)
        return result.text, None
    products: set[str] = set()
    variants: set[str] = set()
    _collect_ids(result, products, variants)
    state.shown_ids.update(products)
    state.shown_variant_ids.update(variants)
    return encode_json(result), None
