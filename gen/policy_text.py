"""Policy text rendered from the rule engine: the documents the agent's policy search reads.

Every sentence is a rule's own ``says`` template filled with that rule's value through
:func:`shopgen.gen.policy.format_value`, so the text cannot state a number the engine does not
use (issue #3: the tools, the ground truth and the text move together).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import jinja2

from shopgen.schemas.policy import FACT_VALUES, FACTS, Ref

if TYPE_CHECKING:
    from shopgen.gen.policy import PolicyEngine
    from shopgen.schemas.policy import Clause, Rule


@dataclass(frozen=True)
class PolicyDoc:
    """One searchable policy document."""

    id: str
    title: str
    text: str


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


@lru_cache(maxsize=256)
def _compiled(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


#: Sentences already rendered, per engine (an engine's values never change once drawn).
_SENTENCES: WeakKeyDictionary[PolicyEngine, dict[str, str]] = WeakKeyDictionary()


def rule_sentence(engine: PolicyEngine, rule: Rule) -> str:
    """The rule's sentence with its value (and any referenced rules' values) filled in.

    Rendered once per (engine, rule): every policy decision quotes its rule, so the return
    tools and generators would otherwise render the same Jinja template thousands of times.
    """
    memo = _SENTENCES.get(engine)
    if memo is None:
        memo = _SENTENCES[engine] = {}
    key = rule.id + "\0" + rule.says
    text = memo.get(key)
    if text is None:
        text = memo[key] = _rule_sentence(engine, rule)
    return text


def _rule_sentence(engine: PolicyEngine, rule: Rule) -> str:
    from shopgen.gen.policy import format_value

    refs = {
        c.value.ref: _formatted(engine, engine.rules[c.value.ref])
        for c in rule.when
        if isinstance(c.value, Ref)
    }
    return _compiled(rule.says).render(value=_formatted(engine, rule), ref=refs).strip() or (
        format_value(engine.value(rule.id), rule.answer.unit, rule.answer.kind)
    )


def _formatted(engine: PolicyEngine, rule: Rule) -> str:
    from shopgen.gen.policy import format_value

    return format_value(engine.value(rule.id), rule.answer.unit, rule.answer.kind)


#: How a condition on a tag reads after "the item is" / "the item is not".
TAG_PHRASES = {
    "electronics": "electronic",
    "hygiene": "a hygiene or personal-care item",
    "perishable": "perishable",
    "final_sale": "a final-sale item",
    "apparel": "clothing or shoes",
    "large_item": "a large item",
    "hazmat": "hazardous",
    "media": "media",
    "personalised": "personalised",
    "jewelry": "jewelry or a watch",
}
#: Words of the string facts' values, completing the fact's subject below.
VALUE_PHRASES = {
    "tier": {"none": "not a member", "basic": "a Basic member", "premium": "a Premium member"},
    "item_condition": {"unopened": "unopened", "opened": "opened", "damaged": "damaged"},
    "reason": {
        "changed_mind": "you changed your mind",
        "defective": "it is defective",
        "wrong_item": "it is the wrong item",
        "damaged_in_transit": "it arrived damaged",
    },
    "return_method": {
        "mail": "by mail",
        "drop_off": "at a drop-off point",
        "pickup": "by scheduled pickup",
    },
    "ship_method": {
        "standard": "standard",
        "expedited": "expedited",
        "two_day": "two-day",
        "next_day": "next-day",
    },
    "state": {"AK": "Alaska", "HI": "Hawaii"},
}
#: A condition's subject by fact: "the item is opened", "you return it by mail".
_SUBJECTS = {
    "tier": "you are",
    "item_condition": "the item is",
    "reason": "you return it because",
    "return_method": "you return it",
    "ship_method": "you choose",
    "state": "the address is in",
    "category": "the item's category is",
    "department": "the item's department is",
    "order_total": "the order is",
    "price": "the item costs",
    "quantity": "you buy",
    "days_since_delivery": "it was delivered",
}
#: The same, negated ("the address is not in Alaska or Hawaii").
_NOT_SUBJECTS = {
    "tier": "you are not",
    "item_condition": "the item is not",
    "reason": "you do not return it because",
    "return_method": "you do not return it",
    "ship_method": "you do not choose",
    "state": "the address is not in",
    "category": "the item's category is not",
    "department": "the item's department is not",
}
_COMPARISONS = {
    "ge": "{} or more",
    "gt": "more than {}",
    "le": "{} or less",
    "lt": "under {}",
    "eq": "exactly {}",
    "ne": "other than {}",
}


def condition_phrase(engine: PolicyEngine, clause: Clause) -> str:
    """A clause as a reader's condition: "the item is a large item", "the order is $49.00 or more".

    The words of the sentences that say which of two rules applies (:func:`precedence_note`).
    """
    fact, op, value = clause.fact, clause.op, engine.literal(clause.value)
    if fact == "tags":
        return f"the item is {'not ' if op == 'lacks' else ''}{TAG_PHRASES.get(value, value)}"
    subject = _SUBJECTS.get(fact, f"the {fact.replace('_', ' ')} is")
    if FACTS[fact] == "num":
        unit = {"order_total": "USD", "price": "USD", "quantity": "units"}.get(fact, "days")
        amount = _number(value, unit)
        if fact == "days_since_delivery":
            amount += " ago"
        return f"{subject} {_COMPARISONS[op].format(amount)}"
    values = value if isinstance(value, list) else [value]
    negated = op in ("ne", "not_in")
    if fact == "tier" and len(values) == 2:  # "you are not a Premium member"
        values, negated = [v for v in FACT_VALUES["tier"] if v not in values], not negated
    words = [_value_words(engine, fact, v) for v in values]
    joined = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    if fact == "ship_method":
        joined += " shipping"
    if negated:
        if fact == "tier" and values == ["none"]:
            return "you are a member"
        return f"{_NOT_SUBJECTS.get(fact, f'the {fact} is not')} {joined}"
    return f"{subject} {joined}"


def _value_words(engine: PolicyEngine, fact: str, value: str) -> str:
    if fact in ("category", "department"):
        names = {c.id: c.name for _, c in engine.taxonomy.leaves()}
        names.update({d.id: d.name for d in engine.taxonomy.departments})
        return names.get(value, value.replace("_", " ")).lower()
    return VALUE_PHRASES.get(fact, {}).get(value, value.replace("_", " "))


def _number(value: float, unit: str) -> str:
    """A compared number in the documents' words ("$49.00", "10 units")."""
    from shopgen.gen.policy import format_value

    return format_value(value, unit, "number")


def precedence_note(engine: PolicyEngine, rule: Rule) -> str:
    """The sentence saying ``rule`` applies where another rule also holds, or "".

    Generated from :attr:`PolicyEngine.outranks` (the engine's own order), so the documents
    and the engine cannot disagree about which of two rules applies: "Electronics can be
    returned within 15 days of delivery. This applies even when the item is a large item."
    Each outranked rule contributes the conditions of its own that this rule does not imply.
    """
    cases: list[str] = []
    for loser_id in engine.outranks.get(rule.id, ()):
        loser = engine.rules[loser_id]
        own = [condition_phrase(engine, c) for c in loser.when if not engine.implied(rule.when, c)]
        case = " and ".join(own)
        if case and case not in cases:
            cases.append(case)
    if not cases:
        return ""
    return f"This applies even when {', or when '.join(cases)}."


def render_docs(engine: PolicyEngine) -> list[PolicyDoc]:
    """Every policy document of the store, one per ``doc`` named by the topics.

    A rule that applies where another also holds, without being the narrower of the two,
    says so (:func:`precedence_note`): the order of the list is not a rule a reader can know.
    """
    docs: dict[str, list[dict]] = {}
    for topic in engine.policies.topics:
        # General rule first, exceptions after: the order a person reads a policy page in.
        lines = [
            " ".join(filter(None, (rule_sentence(engine, r), precedence_note(engine, r))))
            for r in reversed(engine.rules_of(topic.id))
        ]
        docs.setdefault(topic.doc, []).append({"title": topic.question, "lines": lines})
    out = []
    for doc_id, sections in docs.items():
        source = (
            resources.files("shopgen.templates")
            .joinpath("policy", f"{doc_id}.md.j2")
            .read_text("utf-8")
        )
        text = _compiled(source).render(sections=sections)
        title = text.splitlines()[0].lstrip("# ").strip()
        out.append(PolicyDoc(id=doc_id, title=title, text=text))
    return out
