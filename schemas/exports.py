"""Arrow schemas of the export datasets' ``data/`` rows, one per format (issue #8).

They live in the bottom layer, beside the catalog and task schemas, so that the exporters in
``shopgen.exports`` write with them and ``shopgen validate`` (in ``gen``) checks an export with
them without importing upward. An export's manifest says ``kind: export`` and
``config.format``; :func:`export_schema` turns that format into the schema its rows must have.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from shopgen.schemas.errors import DatasetError

#: ``{role, content}`` chat messages as a Parquet list of structs.
CHAT = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))

#: TRL: the conversational ``prompt`` plus what ``ShopgenEnvironment.reset`` reads.
TRL = pa.schema(
    [
        ("prompt", CHAT),
        ("task", pa.string()),
        ("environment", pa.string()),
        ("task_id", pa.string()),
        ("d", pa.int64()),
        ("verifier_version", pa.string()),
    ]
)

#: verifiers (``verifiers.v1``): prompt, answer, info and the task row.
VERIFIERS = pa.schema(
    [
        ("prompt", CHAT),
        ("answer", pa.string()),
        (
            "info",
            pa.struct(
                [
                    ("task_id", pa.string()),
                    ("env", pa.string()),
                    ("d", pa.int64()),
                    ("tools", pa.string()),
                    ("task_row", pa.string()),
                ]
            ),
        ),
        ("task", pa.string()),
    ]
)

#: jsonl: the OpenAI chat opening, tools as JSON text (their keys differ between tools).
JSONL = pa.schema(
    [
        ("task_id", pa.string()),
        ("env", pa.string()),
        ("d", pa.int64()),
        ("messages", CHAT),
        ("tools", pa.string()),
    ]
)

_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)

#: One message of an SFT transcript: any role, absent fields null.
SFT_MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(_CALL)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)

#: sft: the oracle's replayed conversation and its reward.
SFT = pa.schema(
    [
        ("task_id", pa.string()),
        ("env", pa.string()),
        ("d", pa.int64()),
        ("messages", pa.list_(SFT_MESSAGE)),
        ("tools", pa.string()),
        ("reward", pa.float64()),
    ]
)

_VERL_CREATE = pa.struct([("create_kwargs", pa.struct([("task", pa.string())]))])


def verl(tool_names: Sequence[str]) -> pa.Schema:
    """The rows of verl's RLHF dataset; ``extra_info.tools_kwargs`` has one field per tool any task offers."""
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", CHAT),
            ("ability", pa.string()),
            ("agent_name", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            (
                "extra_info",
                pa.struct(
                    [
                        ("split", pa.string()),
                        ("index", pa.int64()),
                        ("task_id", pa.string()),
                        ("env", pa.string()),
                        ("d", pa.int64()),
                        ("need_tools_kwargs", pa.bool_()),
                        ("tools_kwargs", pa.struct([(n, _VERL_CREATE) for n in tool_names])),
                        (
                            "interaction_kwargs",
                            pa.struct([("name", pa.string()), ("task", pa.string())]),
                        ),
                    ]
                ),
            ),
        ]
    )


def verl_tool_names(found: pa.Schema) -> list[str]:
    """The tools a verl file's rows carry kwargs for: its schema varies only by these names."""
    try:
        info = found.field("extra_info").type
        kwargs = info.field("tools_kwargs").type
    except (KeyError, AttributeError, TypeError):
        return []  # the comparison with verl([]) then names what is missing
    if not pa.types.is_struct(kwargs):
        return []
    return [kwargs.field(i).name for i in range(kwargs.num_fields)]


#: Export format → the fixed schema of its ``data/`` rows (verl's is built per file).
FIXED: dict[str, pa.Schema] = {"trl": TRL, "verifiers": VERIFIERS, "jsonl": JSONL, "sft": SFT}

#: Every format shopgen exports, in the CLI's order: each names the module under
#: ``shopgen.exports`` that writes it, and an export manifest may name no other.
FORMATS: tuple[str, ...] = ("trl", "verl", "verifiers", "jsonl", "sft")


def export_schema(fmt: str, found: pa.Schema) -> pa.Schema:
    """The schema the ``data/`` rows of a ``fmt`` export must have.

    Args:
        fmt: the manifest's ``config.format``.
        found: the schema of the file being checked; only verl reads it, for the tool names
            its ``tools_kwargs`` struct is keyed by (each must still have verl's shape).

    Raises:
        DatasetError: ``fmt`` is not an export format shopgen writes.
    """
    if fmt == "verl":
        return verl(verl_tool_names(found))
    if fmt not in FIXED:
        raise DatasetError(f"export format {fmt!r} is not one of {', '.join(FORMATS)}")
    return FIXED[fmt]
