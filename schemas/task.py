"""Task rows and trajectories: the records a task dataset stores and a trainer hands back.

A task row is what ``shopgen tasks`` writes and what ``ShopEnv.reset`` accepts (DESIGN §7-§8).
Free-form nested values (tool schemas, hidden goal, episode state, user script, oracle) are JSON
strings, because Parquet structs whose keys differ between rows read back with nulls
(DESIGN §10). ``theta`` has the same twelve keys in every row, so it stays a struct and can be
filtered on in DuckDB; ``messages`` is a list of ``{role, content}`` structs.

:meth:`TaskRow.from_row` accepts a row exactly as pyarrow's ``to_pylist()`` or Hugging Face
``datasets`` give it back: ``theta`` as a dict (or a JSON string), the JSON fields as strings
(or already-decoded values, which are re-encoded), messages as dicts.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant", "tool"]

#: The row fields that hold JSON text rather than structured values.
JSON_FIELDS: tuple[str, ...] = ("tools", "goal", "episode", "user_script", "oracle")


class ChatMessage(BaseModel):
    """One message of a task's opening: the system prompt or the customer's first message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role = Field(description="Who speaks: system, user, assistant or tool.")
    content: str = Field(description="The message text as the agent sees it.")


def _json_text(value: Any) -> str:
    """A JSON field as text: strings pass through, decoded values are re-encoded."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class TaskRow(BaseModel):
    """One task: the public opening, the hidden ground truth and the provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(description="Content hash of the task; stable across runs and batches.")
    env: str = Field(description="Environment name, e.g. 'cart' or 'returns'.")
    d: int = Field(ge=0, description="Difficulty level the task was generated at.")
    theta: dict[str, float | int] = Field(
        description="The twelve difficulty axes θ(d), after any overrides (DESIGN §5)."
    )
    seed: int = Field(description="Root seed of the generating run.")
    messages: list[ChatMessage] = Field(
        min_length=1,
        description="The opening the agent sees: system prompt and first user message.",
    )
    tools: str = Field(description="JSON list of the OpenAI function schemas this task offers.")
    goal: str = Field(description="JSON of the hidden goal; never shown to the agent.")
    episode: str = Field(
        description="JSON of the hidden initial episode state: customer, visit history, orders, "
        "stock overrides, today."
    )
    user_script: str = Field(description="JSON of the simulated user's slot values and switches.")
    oracle: str = Field(description="JSON of a solving trajectory, replayed at generation time.")
    shopgen_version: str = Field(description="shopgen version that generated the task.")
    catalog_id: str = Field(description="dataset_id of the catalog the task was drawn from.")
    verifier_version: str = Field(description="Version of the environment's verifier.")

    @field_validator("theta", mode="before")
    @classmethod
    def _theta_from_text(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    @field_validator(*JSON_FIELDS, mode="before")
    @classmethod
    def _json_fields(cls, value: Any) -> Any:
        return _json_text(value)

    @classmethod
    def from_row(cls, row: dict[str, Any] | TaskRow) -> TaskRow:
        """A task from a dataset row (pyarrow ``to_pylist()`` or ``datasets``), validated.

        Raises:
            pydantic.ValidationError: a field is missing, extra or of the wrong type.
        """
        if isinstance(row, cls):
            return row
        return cls.model_validate(row)

    def to_row(self) -> dict[str, Any]:
        """The row as written to Parquet: plain dicts, JSON fields as strings."""
        return self.model_dump()

    def decoded(self, field: str) -> Any:
        """One JSON field decoded (``tools``, ``goal``, ``episode``, ``user_script``, ``oracle``)."""
        if field not in JSON_FIELDS:
            raise KeyError(
                f"{field!r} is not a JSON field of a task row ({', '.join(JSON_FIELDS)})"
            )
        return json.loads(getattr(self, field))

    def axis(self, name: str) -> int:
        """An integer θ axis such as ``T_max`` or ``B_tool``."""
        return int(self.theta[name])


class Trajectory(BaseModel):
    """A played conversation in OpenAI chat format, as stored and scored (DESIGN §8)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The task this conversation plays.")
    messages: list[dict[str, Any]] = Field(
        description="OpenAI chat messages: assistant messages with tool_calls, tool results, "
        "user replies. Scoring re-executes the assistant's calls; tool and user messages stored "
        "here are never trusted."
    )


# -- hidden episode data and the user script (issue #6) ------------------------------------------
#
# The environment generators write these two JSON fields of a task row; the runtime reads them.
# Both models are the contract between the two: a generator builds them, dumps them with
# ``model_dump_json()``, and ``ShopEnv.reset`` reads them back with ``from_json``.

#: How a slot's value is written and whether typo noise may touch it (see gen.slots).
SlotKind = Literal[
    "text",
    "money",
    "rating",
    "days",
    "quantity",
    "count",
    "brand",
    "attr",
    "variant",
    "id",
    "order_ref",
    "date",
    "choice",
    "when",
    "preference",
]
StyleName = Literal["terse", "chatty", "polite", "impatient", "nonnative", "mobile"]


class EpisodeSpec(BaseModel):
    """The hidden initial state of an episode (the ``episode`` JSON of a task row).

    Unknown keys are kept (``extra="allow"``) so an environment can add its own without a schema
    change; the keys below are the ones the runtime's tools read.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    user_id: str | None = Field(
        None,
        description="The customer playing the episode (a users.user_id of the catalog). Order "
        "and return tools only ever show this customer's orders.",
    )
    today: str | None = Field(
        None,
        description="The simulated date of the episode (ISO YYYY-MM-DD); days since delivery "
        "are counted to the end of this day. Defaults to the catalog's own today.",
    )
    visit_history: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Recent views, newest first: {product_id, title, viewed_at}.",
    )
    stock_overrides: dict[str, int] = Field(
        default_factory=dict, description="product_id or variant_id → units in this episode."
    )
    out_of_stock: list[str] = Field(
        default_factory=list,
        description="Product or variant ids with no stock in this episode (wins over overrides).",
    )
    order_ids: list[str] | None = Field(
        None,
        description="The customer's order history as this episode shows it (H_orders orders); "
        "None shows every order the customer has in the catalog. Ids must be the customer's.",
    )
    item_condition: dict[str, Literal["unopened", "opened", "damaged"]] = Field(
        default_factory=dict,
        description="product_id → condition of the customer's item, as the return policy tests "
        "it; items not listed are unopened.",
    )


class ScriptSlot(BaseModel):
    """One fact the simulated customer knows and can state when asked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        description="Dotted slot name of the environment's vocabulary (gen.slots.VOCAB), e.g. "
        "'items.0.variant.color', 'order_ref', 'reason'; or a free fact name such as 'tier'."
    )
    value: str | int | float = Field(description="The value the customer states.")
    kind: SlotKind = Field(
        description="How the value is written (gen.slots.SlotKind). Kind 'id' is never said: "
        "customers do not know product ids."
    )
    label: str = Field(description="How the customer names it: 'colour', 'order number'.")
    keywords: list[str] = Field(
        default_factory=list,
        description="Extra words or phrases that ask about this slot, beyond those of its "
        "kind and label (e.g. ['waist', 'inseam'] for a trouser size).",
    )
    omitted: bool = Field(
        False,
        description="True when the first message left it out: revealing it is what ask_user "
        "is for (recorded as a revealed slot).",
    )


class ScriptSwitch(BaseModel):
    """A scheduled change of intent (gen.switches.Switch as a dict)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="gen.switches.SWITCH_KINDS: swap_item, change_variant, …")
    turn: int = Field(
        ge=1,
        description="The assistant turn after which the customer says it: in the ask_user "
        "reply of that turn or later, else as a user message after that turn's tool results.",
    )
    changes: list[tuple[str, str | int | float]] = Field(
        min_length=1, description="Slot name → new value; the goal already holds the new value."
    )


class UserScript(BaseModel):
    """What the simulated customer knows and how they talk (``user_script`` JSON of a row).

    ``ask_user(question)`` matches the question to ``slots`` by keywords and synonyms of each
    slot's kind, label and name; a question about none of them gets a "don't know".
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: StyleName = Field("polite", description="The customer's style (gen.render.STYLES).")
    p_noise: float = Field(0.0, ge=0.0, le=1.0, description="Typo rate of replies (θ.p_noise).")
    p_short: float = Field(0.0, ge=0.0, le=1.0, description="Shorthand rate of replies.")
    slots: list[ScriptSlot] = Field(
        default_factory=list,
        description="Every fact of the goal the customer can state (said and omitted), plus "
        "facts outside the goal they know (membership tier, item condition).",
    )
    switch: ScriptSwitch | None = Field(None, description="A scheduled change of intent.")
    never_say: list[str] = Field(
        default_factory=list,
        description="Strings the customer never says (target product ids, the answer); a slot "
        "whose value contains one is treated as unknown.",
    )
