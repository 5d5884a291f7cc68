"""The simulated customer: one episode's replies to ``ask_user`` (:class:`SimulatedUser`).

It answers from the compiled script (:mod:`.matching`), names what it states
(:mod:`.naming`), judges proposals it can check against the script, says a scheduled change
of mind at its turn, and renders each reply in the customer's style with the script's noise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, NamedTuple

from shopgen.env.user.matching import (
    _ITEM_FIELD,
    _YES_NO_FIRST,
    Answerable,
    CompiledScript,
    _Matcher,
    _named_subs,
    _of_named,
    _segments,
)
from shopgen.env.user.naming import (
    naming_items_apart,
    naming_steps_apart,
    naming_the_exchange,
    naming_the_item,
    naming_the_step,
    saying_when_seen,
)
from shopgen.env.user.words import _GENERIC_NOUNS, _SUBJECTS, _grams, _phrase, stems
from shopgen.gen.render import render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import Slot, make_slot, spec_for
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import ScriptSlot, UserScript

#: First words of a proposal put to the customer ("Is a $30 one OK?", "Would the black one
#: do?", "Can you go up to $60?"): a yes-or-no question's, and "would", "can"….
_PROPOSING_FIRST = _YES_NO_FIRST | frozenset(stems("would will can could should shall"))
#: A price a proposal names ("$30", "$29.99").
_PRICE = re.compile(r"\$\s*(\d[\d,]*(?:\.\d+)?)")
#: Slots that are a price's ceiling for one product: checkable against a proposed price.
_CEILINGS = frozenset({"price_max"})
#: Slots that cap what several products cost together (a bundle's): a price over one rejects
#: a proposal, a price under it says nothing (the rest must fit too).
_TOTALS = frozenset({"budget"})
#: Words of a proposal that ask nothing of their own ("Is a $30 one OK for you?").
_PROPOSAL_WORDS = frozenset(
    stems(
        "is are was would will can could should shall does do a an the one ones it this that "
        "ok okay fine alright "
        "good acceptable work be for you your me with at around about of price priced "
        "cost costing dollar usd then so"
    )
)


#: Words weighing a proposed price against the budget ("Is $30 too much?", "Is $45 a lot for
#: you?"): the customer states the budget, whichever way the question leans, where those with
#: no money word ("budget", "spend") got "I'm not sure".
_BUDGET_RELATION = frozenset(
    stems(
        "too much over above under below within affordable pricey spending pay paying limit "
        "max maximum high lot more less than exceed stretch beyond outside willing happy "
        "comfortable"
    )
)
#: Words of such a proposal that weigh nothing ("Can you go up to $60?" proposes it).
_BUDGET_FILLER = frozenset(stems("go up to want"))


@lru_cache(maxsize=1)
def axis_values() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Every value the store sells of each variant axis and enum attribute, as phrases.

    What a shopper knows of the world ("black is a colour"), read from the taxonomy: it
    lets the customer tell that "Is the black one OK?" proposes a colour.
    """
    from shopgen.gen.taxonomy import load_taxonomy
    from shopgen.schemas.taxonomy import EnumAttr

    tax = load_taxonomy()
    out: dict[str, set[tuple[str, ...]]] = {}
    for axis, values in tax.variant_axes.items():
        out.setdefault(axis, set()).update(_phrase(v) for v in values)
    for name, spec in tax.attributes.items():
        if isinstance(spec, EnumAttr):
            out.setdefault(name, set()).update(_phrase(v) for v in spec.values)
    for _, leaf in tax.leaves():
        for name in leaf.attributes:
            spec = tax.attribute(leaf, name)
            if isinstance(spec, EnumAttr):
                out.setdefault(name, set()).update(_phrase(v) for v in spec.values)
    return {k: tuple(sorted(p for p in v if p)) for k, v in out.items()}


@lru_cache(maxsize=1)
def _axis_longest() -> int:
    """Words in the longest value of :func:`axis_values` (the grams a proposal is read in)."""
    return max((len(p) for v in axis_values().values() for p in v), default=1)


class Verdict(NamedTuple):
    """What the customer can say of a proposal (:meth:`SimulatedUser._proposal`)."""

    kind: str  # "confirm", "correct" or "state" (the slots that answer it, said as facts)
    slots: tuple[ScriptSlot, ...] = ()  # a rejection's slots, or those stated


#: Words asking to add something to the cart ("Should I add it to your cart?"): both.
_ADDING = frozenset(stems("add put"))
_CARTS = frozenset(stems("cart basket"))
#: Words of such a question that ask nothing of their own ("Do you want me to add these?").
_ADDING_WORDS = frozenset(
    stems("add put to into in your my cart basket i we me want like these them those all both")
)


def _listed(matchers: list[_Matcher]) -> dict[str, list[ScriptSlot]]:
    """The list items (a cart's, a journey cart step's) of ``matchers``, each with its slots.

    Keyed by the item's name (``items.1``, ``steps.3.items.0``), in script order, its
    description first: the facts of what the customer wants added, which a question about
    adding "it" is answered with.
    """
    out: dict[str, list[ScriptSlot]] = {}
    for m in matchers:
        field_ = _ITEM_FIELD.match(m.slot.name)
        if field_ is None:
            continue
        slots = out.setdefault(field_["item"], [])
        if field_["field"] == "desc":
            slots.insert(0, m.slot)
        else:
            slots.append(m.slot)
    return out


#: The reply kind (``templates/user``) of a verdict that states slots.
_VERDICT_REPLY = {"correct": "correct", "state": "answer"}


def _number(text: Any) -> float | None:
    """``text`` as an amount ("1,250.5" → 1250.5), or None when it is none."""
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


@dataclass(slots=True)
class SimulatedUser:
    """One episode's customer: the script, the replies given so far, the switch's state.

    Args:
        compiled: the task's compiled user script.
        env: the environment (types slots a switch adds).
        seed: the task's root seed.
        task_id: the task id (keys the reply streams).
        opening: the customer's first message (read only to tell which facts are said).
    """

    compiled: CompiledScript
    env: str
    seed: int
    task_id: str
    replies: int = 0
    switch_said: bool = False
    revealed: list[str] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    #: The customer's first message: what it states is said (:meth:`_unanswered`).
    opening: str = ""
    #: Names of the slots the customer's replies have stated (any, omitted or not).
    said: set[str] = field(default_factory=set)

    @property
    def script(self) -> UserScript:
        """The parsed user script."""
        return self.compiled.script

    def values(self) -> dict[str, Any]:
        """Slot name → the value the customer holds now (after a said switch)."""
        return dict(self._current())

    def _current(self) -> dict[str, Any]:
        """:meth:`values`, shared with the compiled script: read it, never change it."""
        return self.compiled.switched if self.switch_said else self.compiled.values

    def reply(self, question: str, turn: int) -> dict[str, Any]:
        """Answer ``question`` asked at assistant turn ``turn``.

        Returns:
            ``{"reply": text}``; the question and the slots it revealed are recorded.
        """
        parts = []
        switch_text = self._switch_due(turn)
        if switch_text:
            parts.append(switch_text)
        asked = self.compiled.answerable(question, self.switch_said)
        answered, where, names, omitted, items = asked[:5]
        if answered:
            # A question naming one item: its values go unnamed, unless a said change of mind
            # replaced that item ("How many of the paper?" after "brush heads instead of the
            # paper" got "the quantity is 4": now "4 for the brush heads").
            one = len(items) == 1 and not (self.switch_said and items[0] in self.compiled.swapped)
            make = partial(self._answer_slots, answered, one)
            parts.append(self._render("answer", (where, one), make))
            if self._shares_nothing(asked):
                # "Which features must it share?" asks for requirements too ("feature"): the
                # facts it drew said nothing of what must be shared.
                parts.append(self._render("nothing", (), tuple))
            revealed = self.revealed
            for name in omitted:
                if name not in revealed:
                    revealed.append(name)
            self.said.update(names)
        elif not switch_text:
            kind = self._unanswered(asked)
            verdict = self._proposal(question, asked.items) if kind == "dont_know" else None
            if verdict is None:
                parts.append(self._render(kind, (), tuple))
            else:
                text, names = self._judged(verdict, len(asked.items) == 1)
                parts.append(text)
        self.questions.append({"turn": turn, "question": question, "answered": list(names)})
        return {"reply": " ".join(parts)}

    def _unanswered(self, asked: Answerable) -> str:
        """The reply kind to a question the script answers nothing of.

        Asked whether there is anything ("Is that all?", "Any particular colour?"), a
        customer who has said every fact in the question's scope (the items it names, or
        all) has nothing more: ``all_said``. A substitution customer asked which features
        the substitute must share, when the original's must share none, has ``nothing`` of
        the kind, whatever else they hold, and so when asked whether it must share one
        feature or what it must share ("Does it need the same fit?", "What must it have in
        common with the original?"), where they said "I'm not sure" and an agent could not
        tell "any fit will do" from "I forget which". Asked openly for more ("Any other
        details?") with facts left unsaid that the question reaches none of (a policy's, a
        cart's: asked for by name), they ask what the agent wants to know
        (``ask_specific``): "I don't know" told the agent there was nothing more, and 11 of 30
        cart tasks that left a detail out got it to "Anything else?" (5k products, d = 2–12).
        Otherwise they do not know: an unsaid fact may be what the question is after in other
        words.
        """
        if self._shares_nothing(asked):
            return "nothing"
        if not (asked.existential or asked.open_ask):
            return "dont_know"
        in_scope = asked.items
        for m in self.compiled.heard(self.switch_said):
            if (
                m.speakable
                and (not in_scope or m.item is None or m.item in in_scope)
                and not self._is_said(m.slot)
            ):
                return "ask_specific" if asked.open_ask else "dont_know"
        return "all_said"

    def _shares_nothing(self, asked: Answerable) -> bool:
        """``asked`` is what a substitute must share with the original, which must share none.

        Asked whether there is anything to share ("compatible with anything?") or whether one
        feature must be ("Does it need the same fit?"), or which, in a substitution task, or
        of a journey's substitution step the question names alone ("About <its goal>: …", as
        the journey oracle asks), where the same question got "I'm not sure".
        """
        shares = (asked.existential and asked.compat) or asked.shared
        if not shares:
            return False
        if self.env == "substitution":
            request = None
        elif len(asked.items) == 1 and asked.items[0] in self.compiled.replacing:
            request = asked.items[0]
        else:
            return False
        # Asked whether there is anything at all, a kind or audience the reply states is what
        # must be shared; asked which, or about one feature, it is said and nothing added.
        return request not in (self.compiled.same if asked.shared else self.compiled.compat)

    def _judged(self, verdict: Verdict, one: bool) -> tuple[str, tuple[str, ...]]:
        """The reply to a judged proposal and the names of the slots it states.

        A confirmation states nothing; a rejection states the slots the proposal breaks, and
        a statement the slots that answer it (the budget), as an answer does (named apart as
        an answer's are, ``one``: the question named one item), and records them as said and,
        when omitted, revealed.
        """
        if verdict.kind == "confirm":
            return self._render("confirm", (), tuple), ()
        heard = self.compiled.matchers
        where = tuple(next(i for i, m in enumerate(heard) if m.slot is s) for s in verdict.slots)
        make = partial(self._answer_slots, verdict.slots, one)
        text = self._render(_VERDICT_REPLY[verdict.kind], (where, one), make)
        names = tuple(s.name for s in verdict.slots)
        for s in verdict.slots:
            if s.omitted and s.name not in self.revealed:
                self.revealed.append(s.name)
        self.said.update(names)
        return text, names

    def _proposal(self, question: str, items: tuple[int, ...]) -> Verdict | None:
        """Whether the customer can confirm or reject what ``question`` proposes, and how.

        "Is a $30 one OK?" and "Is the black one OK?" got "I'm not sure" from a customer
        holding a $25 ceiling or a Navy colour. A proposal is checked against the script only
        where it is checkable: a price against a ceiling the customer holds, a value of an
        axis (one the store sells, :func:`axis_values`) against the value they hold for it,
        in the item the question names (or the only one). Only a question that says nothing
        but those parts and the item's own words is judged: "Is the $30 Acme kettle OK?"
        proposes a brand no ceiling vouches for, and "Is the black one the one you return?"
        asks about the item returned, not its exchange. Then a checked part that fails
        rejects it, said as a correction stating the slot ("No, that's not right: the budget
        is $25"), and it is confirmed when every part holds: a price under a product's ceiling,
        one value of an axis that is the customer's. A price under a bundle's budget, or two
        values offered as a choice, is never confirmed (the other products must fit too; one
        of the two may be theirs).
        A price weighed against the budget in other words ("Is $30 too much?", "Can you go up
        to $60?") gets the budget stated, which answers it whichever way it leans, as does a
        price under a bundle's budget (where they said "I'm not sure").
        Asked whether to add something to the cart ("Should I add it to your cart?", "Shall
        I add the black one to your cart?"), a customer with a list judges a variant of the one
        item named as above, and otherwise says what they want added of the items in scope
        (those named, or all): each one's description, variants, quantity and when it was
        seen, as answers state them (:func:`_listed`), where they said "I'm not sure".
        Anything else stays "I'm not sure". A journey's question routed to a step ("About the
        boots: is a $30 one OK?", as its oracle asks) proposes from what follows the colon.
        """
        words = stems(question)
        lead = stems(question.rpartition(":")[2])
        if not lead or lead[0] not in _PROPOSING_FIRST:
            return None
        said = set(words)
        heard = [m for m in self.compiled.heard(self.switch_said) if m.speakable]
        # The item a routed question's own words name, not every item of the step's goal.
        subs = _named_subs(self.compiled, set(lead)) or _named_subs(self.compiled, said)
        in_scope = _of_named(heard, compiled=self.compiled, named=set(items), subs=subs)
        listed = _listed(in_scope)
        adding = not _ADDING.isdisjoint(said) and not _CARTS.isdisjoint(said)
        facts = tuple(s for slots in listed.values() for s in slots)
        wanted = Verdict("state", facts) if adding and facts else None
        if (len(items) != 1 and len(self.compiled.item_words) > 1) or len(listed) > 1:
            return wanted  # several items or steps, not one named: which one is proposed?
        current = self._current()
        subject = {
            w
            for m in in_scope
            if _segments(m.slot.name)[0] in (*_SUBJECTS, "category", "project")
            for w in stems(str(current.get(m.slot.name, m.slot.value)))
        }
        for i in items or self.compiled.item_words:
            subject |= self.compiled.item_words.get(i, frozenset())
        explained = set(_PROPOSAL_WORDS) | subject | _GENERIC_NOUNS
        if adding:
            explained.update(_ADDING_WORDS)
        failing: list[ScriptSlot] = []
        held = unknown = False  # a checked part holds; a part cannot be vouched for
        budget: tuple[ScriptSlot, ...] = ()  # a price weighed so that the budget answers it
        axis = False  # a value of an axis is proposed
        price = _PRICE.search(question)
        if price:
            explained.update(stems(price.group(0)))
            explained.update(_BUDGET_RELATION | _BUDGET_FILLER)
            asked = _number(price.group(1))
            caps = {
                id(m): (m, _number(current.get(m.slot.name, m.slot.value)))
                for m in in_scope
                if _segments(m.slot.name)[0] in _CEILINGS | _TOTALS
            }
            if asked is None or not caps or any(c is None for _, c in caps.values()):
                return wanted  # no ceiling to check the price against (or none readable)
            over = [m.slot for m, c in caps.values() if asked > c]
            failing += over
            held = not over
            unknown = any(_segments(m.slot.name)[0] in _TOTALS for m, _ in caps.values())
            weighs = not _BUDGET_RELATION.isdisjoint(set(words) - subject)  # not "Max" of a title
            if weighs or (unknown and not over):
                budget = tuple(m.slot for m, _ in caps.values())
        values = axis_values()
        grams = _grams(words, _axis_longest())
        for m in in_scope:
            last = _segments(m.slot.name)[0]
            if m.slot.kind not in ("variant", "attr") or last not in values:
                continue
            named = [p for p in values[last] if p in grams and not set(p) <= subject]
            if not named:
                continue
            axis = True
            explained.update(w for p in named for w in p)
            if _phrase(str(current.get(m.slot.name, m.slot.value))) not in named:
                failing.append(m.slot)
            elif len(named) == 1:
                held = True
            else:
                unknown = True  # "the black or the navy one?" is a choice, not a proposal
        if not said <= explained:
            return wanted  # it proposes something unchecked too, or asks something else
        if budget:
            # Weighed against the budget, "too much?" and "OK?" lean opposite ways: the budget
            # stated answers both. Beside an axis value, a yes or no would judge both at once.
            return None if axis else Verdict("state", budget)
        if failing:
            unique = {id(slot): slot for slot in failing}  # (slots are not hashable)
            return Verdict("correct", tuple(unique.values()))
        return Verdict("confirm") if held and not unknown else wanted

    def _is_said(self, slot: ScriptSlot) -> bool:
        """Whether the customer has stated ``slot``: in a reply, or in the first message.

        Not "not omitted": a policy customer's state or a journey step's order total is not
        omitted, yet no first message says it (it is said when asked). A value is read in the
        first message as written (protected values are written whole); one that noise or a
        paraphrase changed counts as unsaid, so the customer then does not claim to be done.
        """
        if slot.name in self.said:
            return True
        if slot.omitted or not self.opening:
            return False
        current = self._current().get(slot.name, slot.value)
        if current != slot.value:
            return False  # changed by the switch, and the switch said it (it is in ``said``)
        text = self._slot(slot, current).display()
        return (
            re.search(rf"(?<!\w){re.escape(text)}(?!\w)", self.opening, re.IGNORECASE) is not None
        )

    def at_turn_end(self, turn: int) -> str | None:
        """The customer's unprompted message after assistant turn ``turn``: a due switch."""
        return self._switch_due(turn)

    def _switch_due(self, turn: int) -> str | None:
        sw = self.script.switch
        if sw is None or self.switch_said or turn < sw.turn:
            return None
        self.switch_said = True
        self.said.update(name for name, _ in sw.changes)
        return self._render("change_mind", (), self._switch_slots)

    def _answer_slots(self, answered: tuple[ScriptSlot, ...], one_named: bool) -> tuple[Slot, ...]:
        current = self._current()
        slots = tuple(self._slot(s, current[s.name]) for s in answered)
        slots = naming_items_apart(slots, current, one_named=one_named)
        slots = naming_the_exchange(slots, current)
        return saying_when_seen(naming_steps_apart(slots, current), current)

    def _switch_slots(self) -> tuple[Slot, ...]:
        sw = self.script.switch
        assert sw is not None  # only rendered when a switch is due
        by_name = {s.name: s for s in self.script.slots}
        slots = []
        for name, value in sw.changes:
            base = by_name.get(name)
            slot = self._slot(base, value) if base else self._added(name, value)
            slots.append(naming_the_step(naming_the_item(slot, by_name)))
        return saying_when_seen(tuple(slots), self.compiled.switched)

    def _slot(self, s: ScriptSlot, value: Any) -> Slot:
        return Slot(name=s.name, value=value, kind=s.kind, label=s.label)

    def _added(self, name: str, value: Any) -> Slot:
        """A slot a switch adds, labelled as the vocabulary labels its kind of slot.

        An added cart item's description is a kind of slot the vocabulary always requires:
        made as optional it was refused, and said as "the desc should be …".
        """
        try:
            spec, _ = spec_for(self.env, name)
            return make_slot(self.env, name, value, required=spec.always_required)
        except ConfigError:
            return Slot(name=name, value=value, kind="text", label=name.rsplit(".", 1)[-1])

    def _render(
        self, kind: str, where: tuple[Any, ...], make: Callable[[], tuple[Slot, ...]]
    ) -> str:
        """The next reply of ``kind`` stating ``make()``, the slots at script positions ``where``.

        ``where`` keys what ``make`` states: an answer's slot positions and whether the
        question named one item (:func:`naming_items_apart`). A reply is a pure function of
        the script and the key below (the slots' values follow from their positions and
        whether the switch was said), so it is remembered on the
        compiled script, and a replayed episode neither builds the slots nor renders again.
        """
        key = (self.env, self.seed, self.task_id, self.replies, kind, where, self.switch_said)
        self.replies += 1
        memo = self.compiled.rendered
        text = memo.get(key)
        if text is None:
            script = self.script
            text = render_user_reply(
                kind,
                make(),
                style=script.style,
                rng=stream(self.seed, "user", self.task_id, key[3]),
                p_noise=script.p_noise,
                p_short=script.p_short,
            ).text
            memo.put(key, text)
        return text
