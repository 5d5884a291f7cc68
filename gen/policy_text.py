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

from shopgen.schemas.policy import Ref

if TYPE_CHECKING:
    from shopgen.gen.policy import PolicyEngine
    from shopgen.schemas.policy import Rule


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


def render_docs(engine: PolicyEngine) -> list[PolicyDoc]:
    """Every policy document of the store, one per ``doc`` named by the topics."""
    docs: dict[str, list[dict]] = {}
    for topic in engine.policies.topics:
        # General rule first, exceptions after: the order a person reads a policy page in.
        lines = [rule_sentence(engine, r) for r in reversed(engine.rules_of(topic.id))]
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
