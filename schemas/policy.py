"""The store-policy rule file's schema: facts, clauses, typed answers, precedence.

A rule says: *for this topic, when every clause holds, the answer is this*. Clauses test named
facts (the closed vocabulary :data:`FACTS`), so a rule that names an unknown fact or an operator
that does not fit the fact's type is rejected at load with the rule id, instead of silently
never matching. Categories and tags are the taxonomy's own ids (DESIGN §6: one vocabulary);
they are checked against the loaded taxonomy by :mod:`shopgen.gen.policy`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shopgen.schemas.errors import ConfigError

Slug = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]

#: Fact name → its type. ``tags`` is the only set-valued fact (a leaf carries several tags).
FACTS: dict[str, Literal["str", "num", "set"]] = {
    "category": "str",  # a leaf category id of the taxonomy
    "department": "str",  # a department id of the taxonomy
    "tags": "set",  # the leaf's policy tags
    "tier": "str",  # membership tier
    "days_since_delivery": "num",
    "item_condition": "str",
    "reason": "str",  # why the customer returns the item
    "return_method": "str",
    "ship_method": "str",
    "order_total": "num",  # merchandise subtotal in USD
    "price": "num",  # unit price of the item in USD
    "quantity": "num",
    "state": "str",  # US destination state, two letters
}

#: Closed value sets of string facts; a clause comparing to anything else is a typo.
FACT_VALUES: dict[str, tuple[str, ...]] = {
    "tier": ("none", "basic", "premium"),
    "item_condition": ("unopened", "opened", "damaged"),
    "reason": ("changed_mind", "defective", "wrong_item", "damaged_in_transit"),
    "return_method": ("mail", "drop_off", "pickup"),
    "ship_method": ("standard", "expedited", "two_day", "next_day"),
}

Op = Literal["eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "has", "lacks"]

#: Which operators each fact type accepts.
OPS_BY_TYPE: dict[str, frozenset[str]] = {
    "str": frozenset({"eq", "ne", "in", "not_in"}),
    "num": frozenset({"eq", "ne", "lt", "le", "gt", "ge"}),
    "set": frozenset({"has", "lacks"}),
}

Kind = Literal["number", "enum", "boolean", "text"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Ref(_Strict):
    """A clause value that is another rule's (drawn) number, e.g. a free-shipping threshold."""

    ref: Slug = Field(description="id of a rule whose answer is a number")


Scalar = str | float | int | bool


class Clause(_Strict):
    """One condition: ``fact op value``."""

    fact: str = Field(description="a name from FACTS")
    op: Op = Field(description="comparison operator")
    value: Scalar | list[str] | Ref = Field(description="literal, list (for in/not_in) or a ref")


class Range(_Strict):
    """A realistic range a store's concrete number is drawn from by the seed."""

    min: float
    max: float
    step: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.max < self.min:
            raise ValueError(f"range max={self.max} < min={self.min}")
        return self


class Answer(_Strict):
    """A typed answer: a fixed ``value``, a numeric ``range`` or enum ``choices`` drawn by seed."""

    kind: Kind = Field(description="number (with unit), enum, boolean or text")
    unit: str | None = Field(None, description="for numbers: days, months, USD, percent …")
    value: Scalar | None = Field(None, description="the answer when it is fixed")
    range: Range | None = Field(None, description="numbers: drawn from this range per store")
    choices: list[str] | None = Field(None, description="enums: one drawn per store")


class Rule(_Strict):
    """A policy rule of one topic."""

    id: Slug
    topic: Slug
    when: list[Clause] = Field(default_factory=list, description="all must hold (AND)")
    answer: Answer
    priority: int = Field(0, description="breaks ties between equally specific rules")
    overrides: list[Slug] = Field(
        default_factory=list, description="rules this one beats whatever their specificity"
    )
    says: str = Field(description="policy sentence (Jinja; sees `value` already formatted)")


class Topic(_Strict):
    """A policy topic: what it answers and which policy document it belongs to."""

    id: Slug
    question: str = Field(description="the question this topic answers, for docs and tasks")
    doc: Slug = Field(description="the policy document (template) that renders it")
    kind: Kind


class PolicyFile(_Strict):
    """The whole rule file."""

    version: int = Field(ge=1)
    topics: list[Topic] = Field(min_length=1)
    rules: list[Rule] = Field(min_length=1)


def parse_policy_file(raw: object, *, source: str) -> PolicyFile:
    """Validate a parsed rule document, turning pydantic's report into a ConfigError."""
    if isinstance(raw, dict):
        for i, rule in enumerate(raw.get("rules") or []):
            problem = _raw_rule_problem(rule, i)
            if problem:
                raise ConfigError(f"{source}: {problem}")
    try:
        return PolicyFile.model_validate(raw)
    except ValueError as exc:
        first = re.sub(r"\s+", " ", str(exc)).strip()
        raise ConfigError(f"{source}: invalid policy file: {first}") from None


def _raw_rule_problem(rule: object, index: int) -> str | None:
    # pydantic reports a bad rule by list position; name the rule id, which is what a user greps.
    if not isinstance(rule, dict):
        return f"rule #{index} is not a mapping"
    rid = rule.get("id", f"#{index}")
    answer = rule.get("answer")
    if not isinstance(answer, dict) or "kind" not in answer:
        return f"rule {rid!r}: missing answer type (answer.kind)"
    try:
        Rule.model_validate(rule)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"rule {rid!r}: {where}: {err['msg']}"
    return None
