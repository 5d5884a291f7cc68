"""The policy documents say which of two rules applies wherever the engine's order decides it.

Precedence is fixed at load (overrides, then more clauses, then priority), and the documents
list a topic's rules without saying so: a television is electronics and a large item, and
"Electronics can be returned within 15 days" next to "Large items … within 14 days" left an
honest reader unable to tell which window is its own. Rule file 2 held 18 such pairs.
"""

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shopgen.gen.policy import PolicyEngine, parse_policies_text
from shopgen.gen.policy_text import condition_phrase
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.policy import FACT_VALUES

_LEAF = ("category", "department", "tags")


def _situations(engine, topic):
    """Every combination of one real leaf and values on and around each tested bound."""
    rules = engine.rules_of(topic)
    tested = sorted({c.fact for r in rules for c in r.when})
    others = [f for f in tested if f not in _LEAF]
    values = []
    for fact in others:
        own = [c for r in rules for c in r.when if c.fact == fact]
        if fact in FACT_VALUES:
            values.append(FACT_VALUES[fact])
        elif fact == "state":
            values.append(["CA", "AK", "HI", "NY"])
        else:
            bounds = {float(engine.literal(c.value)) for c in own}
            values.append(sorted({b + d for b in bounds for d in (-1, 0, 1)} | {0.0}))
    named = {v for r in rules for c in r.when if c.fact in _LEAF for v in _listed(c.value)}
    leaves = {}  # one leaf per distinct set of named categories, departments and tags
    for cat, dept, tags in engine.leaves:
        key = (cat in named and cat, dept in named and dept, tags & named)
        leaves.setdefault(key, {"category": cat, "department": dept, "tags": sorted(tags)})
    for leaf in leaves.values() if set(tested) & set(_LEAF) else [{}]:
        for combo in itertools.product(*values):
            yield {**leaf, **dict(zip(others, combo, strict=True))}


def _listed(value):
    return value if isinstance(value, list) else [value]


def _lines(engine):
    return {
        line[2:]
        for doc in engine.render_text()
        for line in doc.text.splitlines()
        if line.startswith("- ")
    }


def _line_of(engine, rule_id, lines):
    from shopgen.gen.policy_text import rule_sentence

    own = rule_sentence(engine, engine.rules[rule_id])
    (line,) = [x for x in lines if x.startswith(own)]
    return line


@pytest.mark.parametrize("seed", [0, 7])
def test_every_tie_the_order_decides_is_stated_in_the_documents(seed):
    """Two rules with as many clauses both hold and one decides by its priority (or its place
    in the order): the decider's line names the other's condition. Overrides are left out,
    since an overriding rule's sentence says what it overrides ("even final-sale …"), and so
    are two numbers that are equal; a yes/no is not, as a refusal names its rule's reason."""
    engine = PolicyEngine.for_store(seed)
    lines = _lines(engine)
    decided = {}
    for topic in engine.order:
        for facts in _situations(engine, topic):
            first, *rest = engine.matching(topic, facts) or [None]
            for other in rest:
                w, loser = engine.rules[first], engine.rules[other]
                if len(w.when) != len(loser.when) or other in w.overrides:
                    continue
                if w.answer.kind == "number" and engine.value(first) == engine.value(other):
                    continue  # one answer whichever applies ($0.00 drop-off, $0.00 faulty)
                decided[first, other] = w
    assert len(decided) >= 10  # the television, Premium's 'most items', shipping over $49 …
    missing = []
    for (first, other), w in sorted(decided.items()):
        line = _line_of(engine, first, lines)
        tested = {(c.fact, c.value if c.fact == "tags" else None) for c in w.when}
        for clause in engine.rules[other].when:
            aspect = (clause.fact, clause.value if clause.fact == "tags" else None)
            if aspect in tested or engine.implied(w.when, clause):
                continue  # "25 or more units" needs no word on "10 or more"
            if condition_phrase(engine, clause) not in line:
                missing.append((first, other, condition_phrase(engine, clause)))
    assert missing == []


@pytest.mark.parametrize("seed", [0, 7])
def test_a_rule_deciding_with_a_broader_clause_on_the_same_fact_says_so(seed):
    """The decider tests the other rule's fact, but more broadly: "Members buying 50 or more
    units of an electronic item get 10%" (Basic or Premium) decides a Premium member's order
    over "Premium members buying 25 or more units … get 15%", and "Deliveries to Alaska and
    Hawaii take up to 12 business days" (three methods) over "Standard shipping arrives within
    6". Testing the same fact is not implying its clause: neither rule is the narrower, and the
    documents said nothing (4 of 260 policy tasks at d = 0–12 on 5k products hinged on it)."""
    engine = PolicyEngine.for_store(seed)
    lines = _lines(engine)
    missing = set()
    for topic in engine.order:
        for facts in _situations(engine, topic):
            first, *rest = engine.matching(topic, facts) or [None]
            for other in rest:
                w = engine.rules[first]
                if other in w.overrides:
                    continue
                if w.answer.kind == "number" and engine.value(first) == engine.value(other):
                    continue
                line = _line_of(engine, first, lines)
                for clause in engine.rules[other].when:
                    if engine.implied(w.when, clause):
                        continue
                    if condition_phrase(engine, clause) not in line:
                        missing.add((first, other, condition_phrase(engine, clause)))
    assert sorted(missing) == []


def test_a_television_reads_the_window_the_engine_gives():
    engine = PolicyEngine.for_store(0)
    facts = {"tags": ["electronics", "large_item"], "tier": "none"}
    assert engine.matching("return_window", facts)[:2] == [
        "return_window_electronics",
        "return_window_large_item",
    ]
    line = _line_of(engine, "return_window_electronics", _lines(engine))
    assert line.endswith("This applies even when the item is a large item.")
    large = _line_of(engine, "return_window_large_item", _lines(engine))
    assert "electronic" not in large  # the outranked rule says nothing it cannot keep


HEAD = """
version: 1
topics:
  - {id: t, doc: returns, kind: number, question: "Q"}
rules:
  - id: base
    topic: t
    answer: {kind: number, unit: days, value: 30}
    says: "Returns take {{ value }}."
  - id: a
    topic: t
    when: [{fact: tags, op: has, value: electronics}]
    priority: PA
    answer: {kind: number, unit: days, value: 15}
    says: "Electronics take {{ value }}."
  - id: b
    topic: t
    when: [{fact: tier, op: eq, value: premium}]
    priority: PB
    answer: {kind: number, unit: days, value: 90}
    says: "Premium members take {{ value }}."
"""


@pytest.mark.parametrize(("pa", "pb", "says"), [(1, 0, "a"), (0, 1, "b")])
def test_the_statement_follows_the_priority(pa, pb, says):
    """Swapping two priorities moves the sentence: it is the engine's order, not a text."""
    text = HEAD.replace("PA", str(pa)).replace("PB", str(pb))
    engine = PolicyEngine(parse_policies_text(text), seed=0, taxonomy=load_taxonomy())
    lines = _lines(engine)
    a, b = _line_of(engine, "a", lines), _line_of(engine, "b", lines)
    assert ("even when you are a Premium member" in a) == (says == "a")
    assert ("even when the item is electronic" in b) == (says == "b")
    assert "even" not in _line_of(engine, "base", lines)


_CLAUSES = [
    "{fact: tags, op: has, value: electronics}",
    "{fact: tags, op: has, value: large_item}",
    "{fact: tags, op: lacks, value: electronics}",
    "{fact: tier, op: eq, value: premium}",
    "{fact: tier, op: in, value: [none, basic]}",
    "{fact: item_condition, op: eq, value: opened}",
    "{fact: state, op: in, value: [AK, HI]}",
    "{fact: order_total, op: ge, value: 50}",
]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_CLAUSES), min_size=1, max_size=3, unique=True),
            st.integers(0, 3),
            st.integers(1, 90),
        ),
        min_size=2,
        max_size=4,
    )
)
def test_any_rule_file_states_every_order_that_decides(specs):
    """Whatever the rules, where one decides while another holds and it is not the narrower
    (the other has a condition it neither tests nor implies), its line names that condition."""
    rules = "".join(
        f"""  - id: r{i}
    topic: t
    when: [{", ".join(when)}]
    priority: {priority}
    answer: {{kind: number, unit: days, value: {value}}}
    says: "Case {i} takes {{{{ value }}}}."
"""
        for i, (when, priority, value) in enumerate(specs)
    )
    text = HEAD.split("rules:")[0] + "rules:\n" + rules
    try:
        engine = PolicyEngine(parse_policies_text(text), seed=0, taxonomy=load_taxonomy())
    except ConfigError:
        assume(False)  # tied precedence: a load error, not a document
    lines = _lines(engine)
    for facts in _situations(engine, "t"):
        first, *rest = engine.matching("t", facts) or [None]
        for other in rest:
            w, loser = engine.rules[first], engine.rules[other]
            if engine.value(first) == engine.value(other):
                continue
            tested = {(c.fact, c.value if c.fact == "tags" else None) for c in w.when}
            line = _line_of(engine, first, lines)
            for clause in loser.when:
                aspect = (clause.fact, clause.value if clause.fact == "tags" else None)
                if aspect not in tested and not engine.implied(w.when, clause):
                    assert condition_phrase(engine, clause) in line, (facts, first, other)
