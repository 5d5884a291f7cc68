"""Which of a script's slots a question asks about (:func:`match_slots`).

A script is compiled once per distinct text (:func:`compile_script`): each slot becomes a
:class:`_Matcher` holding its strong and weak phrases (:mod:`.words`). A question is reduced to
its stem n-grams and matched phrase by phrase, then narrowed: to the items or journey steps it
names, past facts it asks for that the script does not hold, past phrases inside longer ones
asking for another fact, and to weak words only where no specific word matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, NamedTuple

from shopgen.env.user.words import (
    _ACCEPTING,
    _EACH,
    _GENERIC_NOUNS,
    _NOT_NAMING,
    _NOUN_PHRASES,
    _SAME,
    _SPELLED,
    _STOP,
    _SUBJECTS,
    COMPAT_PHRASES,
    EXCHANGE_WORDS,
    EXISTENTIAL,
    KIND_WORDS,
    LABEL_WORDS,
    NAME_WORDS,
    OPEN_ASK,
    OPEN_PHRASES,
    SHARED_PHRASES,
    WEAK_WORDS,
    Phrases,
    _axis_words,
    _grams,
    _phrase,
    stems,
)
from shopgen.gen.slots import ACTIONS, slot_label
from shopgen.gen.store import BoundedCache
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import ScriptSlot, UserScript

#: A slot of one item of a list (a cart's, or a journey cart step's): the item, the field.
_ITEM_FIELD = re.compile(r"^(?P<item>(?:.+\.)?items\.\d+)\.(?P<field>desc|qty|seen|variant\..+)$")
#: A project's must-have (bundle; a journey's are labelled "extra must-have" already).
_MUST_HAVE = re.compile(r"^must\.\d+$")
#: A journey cart step's item (``steps.<i>.items.<j>.…``).
_STEP_ITEM = re.compile(r"^steps\.\d+\.items\.(?P<item>\d+)\.")
#: A journey returns step's replacement value (``steps.<i>.exchange.<axis>``).
_EXCHANGE_FIELD = re.compile(r"^steps\.(?P<step>\d+)\.exchange\.[^.]+$")
#: Rendered replies one compiled script remembers before it starts over.
_REPLIES_LIMIT = 1024


@dataclass(frozen=True, slots=True)
class _Matcher:
    """One slot's compiled question words.

    The phrases are sets, not lists: a question is matched by ``grams.isdisjoint(phrases)``,
    which then probes with the hashes the sets keep instead of hashing every phrase again.
    """

    slot: ScriptSlot
    strong: Phrases
    weak: Phrases
    longest: int  # words in its longest phrase (1 when it has none)
    item: int | None  # the cart/journey item index the slot belongs to
    speakable: bool
    #: A cart variant's own value ("Olive"): asked by listing options, tried after ``strong``.
    values: Phrases = frozenset()
    #: A journey cart step's item index (``steps.0.items.2.…`` → 2; ``item`` is the step's).
    sub: int | None = None
    #: A cart variant's one-letter size ("M"), asked in a list of size codes (:func:`_sizes`).
    letter: str = ""


@lru_cache(maxsize=8192)
def _segments(name: str) -> tuple[str | None, int | None]:
    """The name's meaningful last segment and its item index (``items.1.variant.color``).

    Remembered: slot names repeat across scripts.
    """
    parts = name.split(".")
    index = next((int(p) for p in parts if p.isdigit()), None)
    words = [p for p in parts if not p.isdigit()]
    return (words[-1] if words else None), index


def _is_exchange(name: str) -> bool:
    """The slot is a value of an exchange's replacement (``exchange.color``, a journey's too)."""
    return "exchange" in name.split(".")[:-1]


@lru_cache(maxsize=8192)
def _words(
    last: str | None, kind: str, label: str, keywords: tuple[str, ...], exchange: bool = False
) -> tuple[Phrases, Phrases, int]:
    """A slot's strong and weak question phrases and the longest one's length in words.

    Remembered: scripts repeat the same few (name, kind, label) combinations with new values,
    and building the phrase lists was most of a script's compile (a new one per episode).
    ``exchange``: the slot is a value of an exchange's replacement (:data:`EXCHANGE_WORDS`).
    """
    strong = list(NAME_WORDS.get(last or "", ()))
    strong += KIND_WORDS.get(kind, ())
    strong += [label, *keywords, *LABEL_WORDS.get(label, ())]
    if exchange:
        strong += EXCHANGE_WORDS
    if kind in ("attr", "variant") and last:
        strong.append(last.replace("_", " "))
        # "book format" is asked for as "Which format?": only the whole label matched, and
        # the customer said "it doesn't matter to me" of a format they required. The label's
        # head word, not the name's ("shoe_size_us" is labelled "size").
        head = label.rsplit(" ", 1)[-1]
        strong += [head, *_SPELLED.get(head, ())]
    if kind == "variant" and last:
        # An exchange's replacement too: "What size do you want?" of a tumbler exchanged for
        # another capacity got "I don't know" (its label "capacity" was the only word).
        strong += _axis_words(last)
    weak = list(WEAK_WORDS.get(last or "", ())) + list(WEAK_WORDS.get(kind, ()))
    strong_set = frozenset(t for t in map(_phrase, strong) if t)
    weak_set = frozenset(t for t in map(_phrase, weak) if t)
    return strong_set, weak_set, max(map(len, strong_set | weak_set), default=1)


def _compile(slot: ScriptSlot, never_say: tuple[str, ...]) -> _Matcher:
    last, index = _segments(slot.name)
    exchange = _is_exchange(slot.name)
    strong, weak, longest = _words(last, slot.kind, slot.label, tuple(slot.keywords), exchange)
    text = str(slot.value)
    values: Phrases = frozenset()
    if slot.kind == "variant" and not exchange and last:
        values = _option_phrases(text)
        longest = max([longest, *map(len, values)])
    speakable = slot.kind != "id" and not any(s and s in text for s in never_say)
    nested = _STEP_ITEM.match(slot.name)
    sub = int(nested["item"]) if nested else None
    letter = ""
    if slot.kind == "variant" and not exchange and _SIZE_CODE.fullmatch(text) and len(text) == 1:
        letter = text
    return _Matcher(slot, strong, weak, longest, index, speakable, values, sub, letter)


@lru_cache(maxsize=8192)
def _option_phrases(value: str) -> Phrases:
    """A variant's own value as an option a question may list ("Gray, Olive or White?").

    A shopper whose colour is Olive answers it. A value of one letter ("M") is left out: it
    would match stray letters of other questions (:func:`_sizes` reads those).
    """
    said = _phrase(value)
    if not said or (len(said) == 1 and len(said[0]) == 1) or set(said) <= _STOP:
        return frozenset()
    return frozenset([said])


#: Distinct questions whose matched slots one compiled script remembers.
_ASKED_LIMIT = 256


@dataclass(frozen=True, slots=True)
class CompiledScript:
    """A user script parsed and its slot matchers compiled (shared across episodes).

    Immutable but for its memos, of pure functions of the script: ``asked`` and ``answers``
    (:func:`match_slots` of a question) and ``rendered`` (replies, see
    :meth:`SimulatedUser._render`): a replayed episode asks the same questions again.
    """

    script: UserScript
    #: Every slot's matcher: the script's, in order, then those of the slots a change of mind
    #: adds (:func:`_added_slot`); a reply's ``where`` indexes this tuple.
    matchers: tuple[_Matcher, ...]
    item_words: dict[int, frozenset[str]]
    longest: int  # words in the longest phrase of any matcher
    speakable: frozenset[str] = frozenset()  # names of the slots the customer may say
    values: dict[str, Any] = field(default_factory=dict)  # slot name → value, before a switch
    switched: dict[str, Any] = field(default_factory=dict)  # the same after the switch
    #: A journey cart step's items' words, by (step, item): what ``item_words`` is to a cart's.
    sub_words: dict[tuple[int, int], frozenset[str]] = field(default_factory=dict)
    #: The matchers of what the customer knows before a change of mind is said: ``matchers``
    #: less the added slots and the slots of an added item (None when that is all of them).
    early: tuple[_Matcher, ...] | None = None
    #: The requests whose substitute must share a feature with the original (a ``compat.*``
    #: slot): None for the script's own, a journey step's index for the step's.
    compat: frozenset[int | None] = frozenset()
    #: Those whose substitute must share anything: a feature, its kind or its audience.
    same: frozenset[int | None] = frozenset()
    #: A journey's substitution steps (by their ``steps.<i>.verb``, :data:`ACTIONS`).
    replacing: frozenset[int | None] = frozenset()
    #: The items (list items, or a journey's steps) whose description the switch replaces.
    swapped: frozenset[int | None] = frozenset()
    asked: BoundedCache = field(default_factory=lambda: BoundedCache(_ASKED_LIMIT))
    answers: BoundedCache = field(default_factory=lambda: BoundedCache(_ASKED_LIMIT))
    rendered: BoundedCache = field(default_factory=lambda: BoundedCache(_REPLIES_LIMIT))

    def heard(self, switched: bool) -> tuple[_Matcher, ...]:
        """The matchers of what the customer knows, before or after the change of mind."""
        return self.matchers if switched or self.early is None else self.early

    def _key(self, question: str, switched: bool) -> str | tuple[str, bool]:
        """A memo key of ``question``: the switch is part of it only where it adds slots."""
        return (question, True) if switched and self.early is not None else question

    def slots_asked(self, question: str, switched: bool = False) -> tuple[ScriptSlot, ...]:
        """:func:`match_slots` of ``question``, remembered."""
        return self.asked.remember(
            self._key(question, switched), lambda: tuple(match_slots(self, question, switched))
        )

    def answerable(self, question: str, switched: bool = False) -> Answerable:
        """The speakable slots ``question`` asks about, with what a reply records of them.

        Remembered per question (and switch, where it adds slots): a replayed episode asks
        the same questions again.
        """
        key = self._key(question, switched)
        hit = self.answers.get(key)
        if hit is None:
            asked = self.slots_asked(question, switched)
            slots = tuple(s for s in asked if s.name in self.speakable)
            grams = _question(question, self.longest)[1]
            where = tuple(
                next(i for i, m in enumerate(self.matchers) if m.slot is s) for s in slots
            )
            names = tuple(s.name for s in slots)
            omitted = tuple(s.name for s in slots if s.omitted)
            items = named_items(self, question)
            existential = not grams.isdisjoint(EXISTENTIAL)
            compat = not grams.isdisjoint(COMPAT_PHRASES)
            shared = not grams.isdisjoint(SHARED_PHRASES) and grams.isdisjoint(_ACCEPTING)
            open_ask = not grams.isdisjoint(OPEN_ASK)
            hit = self.answers.put(
                key,
                Answerable(
                    slots, where, names, omitted, items, existential, compat, shared, open_ask
                ),
            )
        return hit


class Answerable(NamedTuple):
    """What :meth:`CompiledScript.answerable` finds for a question: a pure function of it."""

    slots: tuple[ScriptSlot, ...]  # the speakable slots asked about, in script order
    where: tuple[int, ...]  # their positions in the script (a reply's memo key; names repeat)
    names: tuple[str, ...]  # their names, as the question's record lists them
    omitted: tuple[str, ...]  # the names of those the first message left out
    items: tuple[int, ...] = ()  # the list items the question names (:func:`named_items`)
    #: The question asks whether there is anything (:data:`EXISTENTIAL`).
    existential: bool = False
    #: The question asks about a substitute's shared features (:data:`COMPAT_PHRASES`).
    compat: bool = False
    #: It asks whether one must be shared, or which, and proposes nothing
    #: (:data:`SHARED_PHRASES`, not :data:`_ACCEPTING`).
    shared: bool = False
    #: It asks openly for more (:data:`OPEN_ASK`).
    open_ask: bool = False


@lru_cache(maxsize=8192)
def compile_script(text: str) -> CompiledScript:
    """Parse a row's ``user_script`` JSON once per distinct text.

    Raises:
        ConfigError: the text is not a valid :class:`UserScript`.
    """
    try:
        script = UserScript.model_validate_json(text or "{}")
    except ValueError as exc:
        first = str(exc).splitlines()
        raise ConfigError(f"invalid user_script: {' '.join(first[:3])}") from None
    never = tuple(script.never_say)
    changed = script.switch.changes if script.switch is not None else []
    known = {s.name for s in script.slots}
    added = tuple(_added_slot(n, v, script.slots) for n, v in changed if n not in known)
    asked_as = _goal_words(script.slots)
    matchers = tuple(_compile(asked_as.get(s.name, s), never) for s in (*script.slots, *added))
    early = _early(matchers, len(script.slots), added)
    # An item swapped in or added by a change of mind is named by its new words too: "How
    # many knife sets and how many video games?" named the game alone, and the knife set
    # that replaced a thermometer got no answer.
    named = [(m.slot.name, m.slot.value) for m in matchers if m.speakable]
    item_words: dict[int, set[str]] = {}
    sub_words: dict[tuple[int, int], set[str]] = {}
    for name, value in [*named, *changed]:
        last, index = _segments(name)
        if index is not None and last == "verb":
            item_words.setdefault(index, set()).update(_VERB_NAMES.get(value, ()))
        if index is not None and last in ("desc", "goal", "item"):
            naming = {
                w
                for w in stems(str(value))
                if len(w) > 1  # a possessive's "s" ("women's") names nothing
                and w not in _STOP
                and w not in _GENERIC_NOUNS
                and (last != "goal" or w not in _NOT_NAMING)
            }
            item_words.setdefault(index, set()).update(naming)
            nested = _STEP_ITEM.match(name)
            if nested:
                sub_words.setdefault((index, int(nested["item"])), set()).update(naming)
    # Every phrase that asks for another fact is looked for too, whatever the script holds:
    # within such a phrase a shorter one asks nothing (:func:`_outmatched`), so a script
    # holding only short phrases read "How is it being shipped?" as asking where, and one
    # holding a long one as asking how.
    longest = max([_LONGEST_ASK, *(m.longest for m in matchers)])
    values = {s.name: s.value for s in script.slots}
    return CompiledScript(
        script,
        matchers,
        {k: frozenset(v) for k, v in item_words.items()},
        longest,
        frozenset(m.slot.name for m in matchers if m.speakable),
        values,
        {**values, **dict(script.switch.changes)} if script.switch is not None else values,
        sub_words={k: frozenset(v) for k, v in sub_words.items()},
        early=early,
        compat=_holding(script.slots, {"compat"}),
        same=_holding(script.slots, _SAME),
        replacing=frozenset(
            _segments(s.name)[1]
            for s in script.slots
            if _STEP_VERB.match(s.name) and s.value == ACTIONS["substitution"]
        ),
        swapped=frozenset(
            _segments(name)[1]
            for name, value in changed
            if name.endswith(".desc") and name in values and values[name] != value
        ),
    )


#: What a journey step's goal is asked as and called, by its verb: the policy step's question
#: ("What's your question?" got "I don't know" on 101 of 101 journeys holding one) and what the
#: status step wants to know of the order ("What would you like to know about the order?" got
#: the order number on 53 of 69), as their own environments' topic and want slots are asked.
#: Labelled "item", every goal answered "What item did you order?" and "How big is the item?"
#: ("the item is how much shipping costs": 101 of 101 journeys holding a policy step).
_GOAL_WORDS = {
    ACTIONS["policy"]: ("topic", "question"),
    ACTIONS["status"]: ("want", "order I'm asking about"),
    # Its label only: the project's "it for" would take "What would you like to exchange it
    # for?" as asking for it.
    ACTIONS["bundle"]: ((), "project"),
}


def _goal_words(slots: list[ScriptSlot]) -> dict[str, ScriptSlot]:
    """Journey goal slots (``steps.<i>.goal``) asked and called as their step kind's."""
    verbs = {s.name: s.value for s in slots if _STEP_VERB.match(s.name)}
    out = {}
    for s in slots:
        if s.name.endswith(".goal"):
            kind = _GOAL_WORDS.get(verbs.get(s.name[: -len("goal")] + "verb", ""))
            if kind is not None:
                words, label = kind
                asked = NAME_WORDS[words] if words else ()
                update = {"keywords": [*s.keywords, *asked], "label": label}
                out[s.name] = s.model_copy(update=update)
    return out


#: The words a journey step's verb names it by: "Would you like a return or an exchange?"
#: named only a policy step asking "what sending a return back costs", and the customer,
#: asked about that step alone, did not know (20 of 89 journeys' returns steps, 5k products).
#: "Which items should I add to the cart?" got another step's goal besides the cart's items.
_VERB_NAMES = {
    ACTIONS["returns"]: frozenset(stems("return")),
    ACTIONS["substitution"]: frozenset(stems("replacement substitute")),
    ACTIONS["cart"]: frozenset(stems("cart")),
}
#: A journey step's verb slot (``steps.<i>.verb``): which environment the step is.
_STEP_VERB = re.compile(r"^steps\.\d+\.verb$")


def _holding(slots: list[ScriptSlot], segments: set[str] | frozenset[str]) -> frozenset[int | None]:
    """The requests (None: the script's own; a journey step's index) with a slot so named."""
    return frozenset(
        _segments(s.name)[1] for s in slots if segments.intersection(s.name.split("."))
    )


#: Any run of digits of a slot name: names of one shape (``items.#.desc``) share kind and label.
_INDEX = re.compile(r"\d+")


def _added_slot(name: str, value: Any, slots: list[ScriptSlot]) -> ScriptSlot:
    """A slot a change of mind adds, as the customer knows it once they have said it.

    Made like the script's slots of its shape (an added ``items.2.desc`` as ``items.0.desc``,
    an added ``must.3`` as ``must.0``): kind and label, so it is asked for by the same words.
    Items added this way were never answered: "What items do you need?" and "Can you list
    everything again?" left out the item the customer had just added.
    """
    shape = _INDEX.sub("#", name)
    like = next((s for s in slots if _INDEX.sub("#", s.name) == shape), None)
    if like is not None:
        return ScriptSlot(name=name, value=value, kind=like.kind, label=like.label)
    last = name.rsplit(".", 1)[-1]
    kind = "variant" if ".variant." in name or ".exchange." in name else "text"
    return ScriptSlot(name=name, value=value, kind=kind, label=slot_label(last))


def _early(
    matchers: tuple[_Matcher, ...], scripted: int, added: tuple[ScriptSlot, ...]
) -> tuple[_Matcher, ...] | None:
    """The matchers of what the customer knows before the change of mind: None for all.

    Leaves out the added slots (the first ``scripted`` matchers are the script's) and every
    slot of a list item the change of mind adds: the script holds an added item's quantity
    from the start, and "How many of each?" before the switch got "… and the quantity is 1",
    a quantity of an item the customer had not mentioned.
    """
    new_items = {
        m["item"] for s in added if (m := _ITEM_FIELD.match(s.name)) and m["field"] == "desc"
    }

    def later(i: int, m: _Matcher) -> bool:
        field_ = _ITEM_FIELD.match(m.slot.name)
        return i >= scripted or (field_ is not None and field_["item"] in new_items)

    kept = tuple(m for i, m in enumerate(matchers) if not later(i, m))
    return None if len(kept) == len(matchers) else kept


#: Phrases that only say "a number of something": "how many stars" asks about the rating.
GENERIC: frozenset[tuple[str, ...]] = frozenset(
    # "What kind of account do you have?" asks the tier, not the product category.
    map(stems, ("how many", "how much", "number of", "kind of", "type of"))
)


def _positions(words: tuple[str, ...], phrase: tuple[str, ...]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(words) - n + 1) if words[i : i + n] == phrase]


#: Words asking for a fact of the customer's own that not every script holds.
_FACT_PHRASES: Phrases = frozenset(
    stems(w)
    for kind in ("condition", "order_total", "tier", "state", "quantity", "ship_method")
    for w in (*NAME_WORDS.get(kind, ()), *KIND_WORDS.get(kind, ()))
    if stems(w)
)
#: Every phrase of several words that asks for a fact of some kind: within one, a shorter
#: phrase asks for nothing of its own ("When did you look at it?" holds "when did you").
_LONG_PHRASES: Phrases = frozenset(
    t
    for table in (NAME_WORDS, KIND_WORDS)
    for words in table.values()
    for t in map(stems, words)
    if len(t) > 1
)
#: Words in the longest of them: every question is read in phrases up to this long.
_LONGEST_ASK = max(map(len, _LONG_PHRASES))


#: Words that only make a phrase a question: "what item" asks for the item as "item" does,
#: "brand preference" for the brand as "brand" does, "kind of" for the kind as "kind" does.
#: "How", "when" and "where" are not among them: they say which fact is asked. "How is it
#: being shipped?" got the delivery state by "being shipped" (36 of 60 policy tasks), and
#: "When did you make the order?" a journey's brand by "make".
_ASKING_ONLY = frozenset(
    stems("what which who is are was do does did you your the a s it i any")
    + stems("prefer preference like want need of for to in on at with")
)
#: An asking word that, right after a shorter phrase, is its preposition: "shipping to" asks
#: where, not how ("What state is it shipping to?" got the shipping method by "shipping").
_PREPOSITIONS = frozenset(stems("to"))


def _adds_meaning(longer: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """Whether ``longer``, holding ``phrase``, asks for something ``phrase`` alone does not."""
    if not _ASKING_ONLY.issuperset(set(longer) - set(phrase)):
        return True
    after = [i + len(phrase) for i in _positions(longer, phrase)]
    return any(i < len(longer) and longer[i] in _PREPOSITIONS for i in after)


def _outmatched(m: _Matcher, grams: frozenset[tuple[str, ...]], long: Phrases) -> bool:
    """Each of ``m``'s phrases in the question lies inside a longer one asking for another fact.

    ``long``: the question's phrases of :data:`_LONG_PHRASES`. "When did you look at it?",
    asked of a cart item seen nowhere, got a journey returns step's order date by "when did
    you" (91 of 182 asks); "How many days ago did it arrive?" a quantity by "how many" (93 of
    123).
    """
    own = grams & m.strong
    longer = [q for q in long if q not in m.strong]
    return all(
        any(len(q) > len(p) and bool(_positions(q, p)) and _adds_meaning(q, p) for q in longer)
        for p in own
    )


#: A slot's words that only name the thing asked about ("the item", "the order").
_NAMING_NOUNS: Phrases = frozenset(map(stems, ("item", "items", "product", "order", "thing")))


def _named_only(m: _Matcher, grams: frozenset[tuple[str, ...]]) -> bool:
    """``m`` matched only through words that name the thing asked about ("the item")."""
    return all(p in _NAMING_NOUNS for p in m.strong if p in grams)


def _generic_only_elsewhere(
    m: _Matcher, words: tuple[str, ...], grams: frozenset[tuple[str, ...]], others: list[_Matcher]
) -> bool:
    """Whether ``m`` matched only through a generic phrase that qualifies another slot's word."""
    found = [p for p in m.strong if p in grams]
    if not found or any(p not in GENERIC for p in found):
        return False
    other_words = {p[0] for o in others if o is not m for p in o.strong if len(p) == 1}
    return all(
        set(words[i + len(p) : i + len(p) + 2]) & other_words
        for p in found
        for i in _positions(words, p)
    )


#: An apparel size code as a question lists it, in capitals ("S", "XL", "2XL").
_SIZE_CODE = re.compile(r"X{0,3}S|M|X{0,3}L|[2-5]XL")
_SIZE_CODES = re.compile(rf"\b(?:{_SIZE_CODE.pattern})\b")


@lru_cache(maxsize=4096)
def _sizes(question: str) -> frozenset[str]:
    """The size codes ``question`` lists, when it lists two or more ("S, M or L?").

    A one-letter size is left out of the options a question can list by value
    (:func:`_option_phrases`): "m" of "I'm" would match it. Written in capitals, two or more
    codes are a list of sizes, and the customer whose size is one of them answers.
    """
    codes = frozenset(_SIZE_CODES.findall(question))
    return codes if len(codes) >= 2 else frozenset()


@lru_cache(maxsize=4096)
def _question(
    question: str, longest: int
) -> tuple[tuple[str, ...], frozenset[tuple[str, ...]], frozenset[str]]:
    """A question's words, its :func:`_grams` up to ``longest`` words, and its set of words.

    Remembered: an oracle asks the same few questions of every task's new script.
    """
    words = stems(question)
    return words, _grams(words, longest), frozenset(words)


def named_items(compiled: CompiledScript, question: str) -> tuple[int, ...]:
    """The indices of the list items (cart items, journey steps) ``question`` names."""
    said = _question(question, compiled.longest)[2]
    return tuple(sorted(i for i, ws in compiled.item_words.items() if not ws.isdisjoint(said)))


def match_slots(
    compiled: CompiledScript, question: str, switched: bool = False
) -> list[ScriptSlot]:
    """The slots ``question`` asks about (speakable or not), in script order.

    ``switched``: the change of mind has been said, so the slots it adds are known too.

    A question naming an item or a journey step asks about that one's slots only, and the
    weak words stand in when none of its slots matched a specific one: "For the laptop bags:
    what features do you need?" matched a bundle step's must-haves by "need", which the
    named step then dropped, and the weak "feature" was never tried ("I don't know").
    """
    words, grams, said = _question(question, compiled.longest)
    of_named = partial(
        _of_named,
        compiled=compiled,
        named=set(named_items(compiled, question)),
        subs=_named_subs(compiled, said),
        grams=grams if _asks_several(compiled, question, said) else None,
    )
    heard = compiled.heard(switched)
    hits = [m for m in heard if not grams.isdisjoint(m.strong)]
    long = grams & _LONG_PHRASES
    outmatched = [m for m in hits if long and _outmatched(m, grams, long)]
    hits = [m for m in hits if m not in outmatched]
    # A question asking for a fact the script holds no slot for (an item's condition, an
    # order total, a quantity, a fact a longer phrase asks for) is no question about the item
    # it names: "What condition is the item in?" got the item, "How many did you buy?" the
    # product category; nor do its weak words ask: "How many days ago did it arrive?" got a
    # discovery step's priorities by "day".
    foreign = bool(outmatched) or any(
        all(p not in m.strong for m in heard) for p in grams & _FACT_PHRASES
    )
    if foreign:
        hits = [m for m in hits if not _named_only(m, grams)]
    # Nor is one asking for a fact of it the script holds: "What condition is the item in?"
    # got "the item is earrings and the item condition is opened" (25 of 25 returns holding
    # one; in a journey, of the same step).
    asked_of = {m.item for m in hits if not _subject(m) and not _named_only(m, grams)}
    hits = [m for m in hits if not (m.item in asked_of and _subject(m) and _named_only(m, grams))]
    # Whether there is anything about the item, or whether it is so, is no question about
    # which item it is.
    existential = not grams.isdisjoint(EXISTENTIAL) or _yes_no(words)
    if existential:
        hits = [m for m in hits if not _echo(m, grams)]
    hits = of_named([m for m in hits if not _generic_only_elsewhere(m, words, grams, hits)])
    if not hits:
        # Options listed without the axis's name ("Gray, Olive or White?"), when they are of
        # the item the question names: "White" of a "White Studio speaker" asks no colour.
        sizes = _sizes(question)
        hits = of_named(
            [
                m
                for m in heard
                if (m.values and not grams.isdisjoint(m.values)) or (m.letter and m.letter in sizes)
            ]
        )
    # Weak words count when no specific word matched ("anything else that matters to you?"
    # asks for the preference and openly: the preference is no specific requirement). Words
    # asking for requirements always count: "What's your budget, and any other
    # requirements?" got the budget alone, "How many options, and any other …?" the count.
    weak = (
        grams
        if all(m.slot.kind == "preference" for m in hits) and not foreign
        else grams & OPEN_PHRASES
    )
    if weak:
        strong = {id(m) for m in hits}
        hits = of_named(
            [
                m
                for m in heard
                if id(m) in strong
                or (not weak.isdisjoint(m.weak) and not (existential and _subject(m)))
            ]
        )
    return [m.slot for m in _without_restated_goals(hits)]


#: A journey step's own slots that its goal restates (gen.tasks.journey writes the goal from
#: them): the cart step's item descriptions, the discovery step's category, …
_GOAL_SAYS = frozenset({"desc", "category", "product_title", "item", "topic", "want", "project"})


def _without_restated_goals(hits: list[_Matcher]) -> list[_Matcher]:
    """``hits`` less the journey goals whose own step's restated slots are among them.

    "Which items should I add to the cart?" got "the item is the Garcia Tiny swaddle blankets
    and the item is Garcia Tiny swaddle blankets": the cart step's goal and its one item
    (69 of 69 journeys holding a cart step).
    """
    restated = {m.item for m in hits if _segments(m.slot.name)[0] in _GOAL_SAYS}
    return [m for m in hits if not (m.item in restated and m.slot.name.endswith(".goal"))]


def _named_subs(compiled: CompiledScript, said: frozenset[str] | set[str]) -> set[tuple[int, int]]:
    """The journey cart steps' items (step, item) named by the words ``said``.

    A journey cart step's items are told apart as a cart's are: "What size for the tumbler?"
    was answered with the bra's size, the only "size" of the step. A question about "each"
    (every, all, both) item asks about them all, whichever it names: none is named.
    """
    if not said.isdisjoint(_EACH):
        return set()
    return {k for k, ws in compiled.sub_words.items() if not ws.isdisjoint(said)}


#: Words joining two asks in one question ("What's your tier, and why are you returning it?").
_JOINING = frozenset(stems("and also plus"))


def _asks_several(compiled: CompiledScript, question: str, said: frozenset[str]) -> bool:
    """Whether ``question`` joins two or more asks not all routed to the items it names.

    Two question marks or a joining word join asks; a naming head before a colon ("About the
    car seats: …?") routes all of them. Only such a question asks, besides what it names,
    for what no named item or step has: "For the school backpack, which colour do you
    prefer?" asks no discovery step's priorities, however "prefer" reads, and "About the car
    seats: what matters to you? Do you have a budget?" no bundle step's budget.
    """
    if question.count("?") < 2 and said.isdisjoint(_JOINING):
        return False
    head, colon, _ = question.partition(":")
    return not (colon and named_items(compiled, head))


def _of_named(
    ms: list[_Matcher],
    *,
    compiled: CompiledScript,
    named: set[int],
    subs: set[tuple[int, int]],
    grams: frozenset[tuple[str, ...]] | None = None,
) -> list[_Matcher]:
    """``ms`` narrowed to what a question names: its items or steps, its journey cart items.

    The slots of list items or journey steps other than those ``named`` go (where there are
    several), and of a journey cart step's items other than those named (``subs``). Given the
    ``grams`` of a question joining several asks (:func:`_asks_several`), a slot of another
    item stays when a phrase asking for it asks for nothing of the named ones. "What's your
    membership tier, and why are you returning it?" named a journey's returns step alone (by
    "return"), and the policy step's tier went unsaid: merged questions about two journey
    steps were answered in full in 237 of 305 (5k products, d = 2–12), 295 now.
    """
    if named and len(compiled.item_words) > 1:
        inside = [m for m in ms if m.item is None or m.item in named]
        if grams is None:
            ms = inside
        else:
            # Phrases asking for the named ones' slots, or made of the words naming them
            # ("For the tape measure replacement, …" asks no return-or-exchange).
            naming = set().union(*(compiled.item_words[i] for i in named))
            claimed = set().union(*(grams & m.strong for m in inside))
            claimed |= {p for p in grams if naming.issuperset(p)}
            # Only another journey step's: another item of one list is what the question's
            # other ask is not about ("Which lounge set do you mean? When did you look at
            # it?" got when the body wash was looked at: 94 of 336 cart asks).
            ms = [
                m
                for m in ms
                if m.item is None
                or m.item in named
                or (m.slot.name.startswith("steps.") and not (grams & m.strong) <= claimed)
            ]
    if subs:
        steps = {i for i, _ in subs}
        ms = [m for m in ms if m.sub is None or m.item not in steps or (m.item, m.sub) in subs]
    return ms


#: First words of a question answered by yes or no ("Is the item unopened?").
_YES_NO_FIRST = frozenset(stems("is are was were does do did has have"))
#: Words that make such a question ask for something after all ("Do you know which item?").
_ASKING_WHICH = frozenset(stems("which what tell name describe"))


def _yes_no(words: tuple[str, ...]) -> bool:
    """``words`` are a yes-or-no question: "Is the item unopened?", not "Is it which one?".

    Asked so, the customer said "Yes, the item is sports bottle" (the bare noun matched the
    item's label), which reads as a yes: 34 of 39 returns tasks at d = 0-12 on 5k products.
    """
    return bool(words) and words[0] in _YES_NO_FIRST and _ASKING_WHICH.isdisjoint(words)


def _subject(m: _Matcher) -> bool:
    """``m`` is of the request's subject: the item, the product (:data:`_SUBJECTS`)."""
    return _segments(m.slot.name)[0] in _SUBJECTS


def _echo(m: _Matcher, grams: frozenset[tuple[str, ...]]) -> bool:
    """``m`` is the request's subject, asked by no word but "item" or "product" (an echo).

    Its label ("product") is one of its words: "Does the replacement product need to be
    compatible with anything?" matched the original's name by it, and the customer said
    "the product is <the original>" for an answer.
    """
    return _subject(m) and grams & m.strong <= _NOUN_PHRASES
