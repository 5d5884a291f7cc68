"""The simulated customer: answers ``ask_user`` from the task's hidden user script (issue #6 §4).

The customer knows the facts in :class:`~shopgen.schemas.task.UserScript` ``slots`` and nothing
else. A question is matched to slots by words: each slot is asked about by the synonyms of its
name's last segment (``color`` → colour, shade…), of its kind (``money`` → budget, price,
spend…), of its label, and by the script's own keywords. Matching works on word stems
(lower case, punctuation dropped, Snowball's English stems), phrase by phrase, so paraphrases
such as "What shade?", "which colours" or "how many do you need" all land. *Weak* words
("item", "order", "when") count only when no specific word matched, so "what size is the
item?" answers the size, not the item; the preference (kind ``preference``, asked by "how
much does price matter", "favourite brands", "how important"…) is no specific word, so
"anything else that matters?" also gets what an open question gets. With several cart
items, a question naming one item's words narrows the answer to that item.

Replies are rendered by :func:`shopgen.gen.render.render_user_reply` in the customer's style
with the script's noise, from ``stream(task.seed, "user", task.task_id, reply_index)``: the
same questions in the same order give byte-identical replies in any process.

The customer never says a product id (slots of kind ``id`` are unknown to them) nor any string
in ``never_say``; a scheduled switch is said once, at its turn (:meth:`SimulatedUser.reply` and
:meth:`SimulatedUser.at_turn_end`), after which answers give the new values. A switch that
changes one item of a list names the item (:func:`naming_the_item`). What a switch adds (an
item, a must-have) is known from then on, and not before, nor is the added item's quantity
(:attr:`CompiledScript.early`).

Asked whether there is anything ("Is that all?", "Any particular colour?"), a customer who has
said every fact in the question's scope says "Nothing else, that's all"; a substitution
customer asked about shared features the original has none of says "nothing in particular"
(:meth:`SimulatedUser._unanswered`). Such a question, and a yes-or-no one, never gets the
request's own item for an answer because it said "item" or "product" (:func:`_echo`).

A proposal the customer would otherwise not know about ("Is a $30 one OK?", "Is the black
one OK?") is confirmed or rejected where the script can check it — a price against a ceiling
held, a value of an axis against the one held, in the one item named — and says nothing
else (:meth:`SimulatedUser._proposal`); a rejection states the slot, as a correction. A price
weighed against the budget in other words ("Is $30 too much?") gets the budget stated, which
answers it whichever way the question leans. Asked whether to add something to the cart, a
customer with a list says what they want added, unless a variant proposed can be judged.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any, NamedTuple

import snowballstemmer

from shopgen.gen.render import render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ACTIONS, COMPAT_WORDS, Slot, make_slot, slot_label, spec_for
from shopgen.gen.store import BoundedCache
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import ScriptSlot, UserScript

_WORD = re.compile(r"[a-z0-9]+")


def stems(text: str) -> tuple[str, ...]:
    """Lower-case word tokens reduced to their Snowball stems: the words the customer matches.

    A question and the phrases it is matched against meet on stems, so one listed form
    answers the others: "How urgently?" and "urgent", "Are you waiting?" and "wait", "well
    reviewed" and "review", "dropping it off" and "drop it off" each failed on every ask of
    a held-out audit while only a plural "s" was stripped.
    """
    return tuple(_stem(w) for w in _WORD.findall(text.lower()))


_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer keeps its word in the object


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(word)


#: A slot of one item of a list (a cart's, or a journey cart step's): the item, the field.
_ITEM_FIELD = re.compile(r"^(?P<item>(?:.+\.)?items\.\d+)\.(?P<field>desc|qty|seen|variant\..+)$")
#: A project's must-have (bundle; a journey's are labelled "extra must-have" already).
_MUST_HAVE = re.compile(r"^must\.\d+$")
#: Words that ask about every item of a list, whichever one the question names.
_EACH = frozenset(stems("each every all both"))
#: A journey cart step's item (``steps.<i>.items.<j>.…``).
_STEP_ITEM = re.compile(r"^steps\.\d+\.items\.(?P<item>\d+)\.")
#: A journey returns step's replacement value (``steps.<i>.exchange.<axis>``).
_EXCHANGE_FIELD = re.compile(r"^steps\.(?P<step>\d+)\.exchange\.[^.]+$")
#: Rendered replies one compiled script remembers before it starts over.
_REPLIES_LIMIT = 1024

_MONEY = (
    "budget",
    "price",
    "spend",
    "cost",
    "afford",
    "how much",
    "maximum price",
    "expensive",
    # How much in other words: each got "I don't know" from a customer holding a budget on
    # every discovery, substitution, journey and bundle task that left it out (447 asks).
    "to pay",
    "did you pay",
    "you paid",
    "pay for it",
    "spending",
    "your max",
    "the most you",
    "keep it under",
    "stay under",
    "stay within",
    "under a certain",
    "exceed",
    "highest",
    "dollar",
)
_DAYS = (
    "delivery",
    "shipping",
    "arrive",
    "how soon",
    "how fast",
    "deliver",
    "ship",
    "days",
    # "Do you have a deadline?", "What's your timeline?", "How long can you wait?": "I'm not
    # sure" from a customer holding a delivery limit (364 of 364 asks).
    "deadline",
    "timeline",
    "time frame",
    "timeframe",
    "wait",
    "when do you need",
)
#: How soon, asked of the customer's need rather than of delivery: "Do you need it fast?" got
#: "I'm not sure" from a customer whose delivery limit or preference said how fast.
_URGENCY = (
    "need it fast",
    "need it quickly",
    "need it soon",
    "need it by",
    "how quickly",
    "in a hurry",
    "urgent",
    "by when",
    "rush",
    "date you need",
)
_RATING = ("rating", "star", "review", "rated", "score")
_QTY = (
    "quantity",
    "how many",
    "qty",
    "number of",
    "units",
    "pieces",
    "amount",
    "count",
    # Proposed counts: "Just one of each?" got "I'm not sure" from a cart customer wanting 4.
    "one of each",
    "one or more",
    "more than one",
    # "Do you want just one of the desk lamps?", "Is one enough?": "I don't know" (512 of
    # 518 cart and journey asks, a customer audit).
    "just one",
    "only one",
    "single one",
    "enough",
    # Longer than the number of options' "how many": "How many units are you ordering?" and
    # "How many of each?" got a journey discovery step's count of options (48 of 101 each).
    "how many units",
    "how many of each",
)
_COLOR = ("color", "colour", "shade", "hue", "tint")
#: Not "looking for": "Are you looking for a replacement or a refund?" got the item too.
_ITEM = ("which item", "what item", "which product", "what product")
#: An item's condition: "Is it still sealed?" and "What state is the item in?" got "I'm not
#: sure" or the item (38 and 52 of 52 asks). "State" alone is the delivery state's: "Which
#: state is it shipping to?" got the item's condition (48 of 48 policy tasks holding one).
_CONDITION = (
    "condition",
    "opened",
    "unopened",
    "damaged",
    "used",
    "sealed",
    "packaging",
    "in the box",
    "unused",
    "state is the item in",
    "state is it in",
)
#: Words asking for the whole list of what the customer wants: "Can you list everything
#: again?" and "What do you need?" got "I'm not sure" from a cart customer (a bundle's
#: must-haves answer "need" already). A journey's requests answer the first ones only: its
#: steps' own "what do you need" is their items or must-haves.
_EVERYTHING = (
    "list everything",
    "list all",
    "full list",
    "everything again",
    "everything you need",
    "everything you want",
)
_LIST = (
    *_EVERYTHING,
    "list the item",
    "list them",
    "shopping list",
    "what do you need",
    "what you need",
)
#: Words asking which of the customer's orders they mean, whatever they tell it by.
_WHICH_ORDER = (
    "order number",
    "which order",
    "which purchase",
    "which of your order",
    "order do you mean",
    "order are you",
    "order is it",
    "identify the order",
    "right order",
    "about the order",
    "several order",
    "multiple order",
    "more than one order",
    # "Can you help me find the order? Anything like a date or the total?" got "I'm not sure"
    # from 110 of 156 returns customers and 73 of 156 status ones holding a detail of it.
    "find the order",
    "find your order",
    "locate the order",
    "locate your order",
    "tell them apart",
)
#: A label's head word → its other spelling ("Which flavour?" for a "coffee flavor").
_SPELLED = {"flavor": ("flavour",), "flavour": ("flavor",), "color": ("colour",)}

#: Slot name's last segment → words that ask about it (specific words).
NAME_WORDS: dict[str, tuple[str, ...]] = {
    "color": _COLOR,
    "colour": _COLOR,
    "size": ("size", "fit", "sizing", "measurement"),
    "qty": _QTY,
    "quantity": _QTY,
    "price_max": _MONEY,
    "budget": _MONEY,
    "rating_min": _RATING,
    "ship_days_max": (*_DAYS, *_URGENCY),
    "brand": ("brand", "make", "manufacturer", "maker", "label"),
    "order_ref": (*_WHICH_ORDER, "order id", "order ref", "reference", "order no"),
    "ref": (*_WHICH_ORDER, "order id", "order ref", "reference"),
    # A customer who tells their order by its day answers "Which order?" with it: "Which order
    # is it?" and "Do you have an order number?" got "I don't know" whenever the day was the
    # only way to tell it (22 of 52 status, returns and journey asks).
    "order_date": (
        "order date",
        "when did you order",
        "when did you place",
        "placed",
        "date",
        *_WHICH_ORDER,
    ),
    "reason": (
        "reason",
        "why",
        "wrong",
        "problem",
        "issue",
        # "What happened?" and "Is it defective?" got "I'm not sure" (30 of 30 returns asks).
        "happened",
        "made you",
        "prompt",
        "defective",
        "faulty",
        "broken",
        "not working",
    ),
    "action": (
        "return or exchange",
        "exchange",
        "refund",
        "replace",
        "replacement",
        "money back",
        # "What would you like to do with it?" got "I'm not sure" (28 of 28 returns asks).
        "do with it",
        "like me to do",
        "want me to do",
        "outcome",
        "resolve",
        "resolution",
        "proceed",
        "swap",
        "set up a return",
    ),
    "desc": (*_ITEM, *_LIST),
    "item": _ITEM,
    "product_title": _ITEM,
    "seen": ("when did you see", "when did you look", "viewed", "looked at", "saw"),
    # "How many items should I suggest?" got the journey's items, not the count.
    "k_rec": ("how many option", "option", "choice", "suggestion", "suggest", "recommend"),
    # The kind of product asked as "What's the item?": a policy customer said "I'm not sure"
    # to each of these (576 asks), a discovery one to "What are you buying?".
    "category": (
        "kind of",
        "type of",
        "category",
        "what item",
        "which item",
        "what product",
        "which product",
        "what is the item",
        "what s the item",
        "what is the product",
        "what s the product",
        "item is it",
        "product is it",
        "product is this",
        "item are you",
        "are you buying",
        "purchasing",
    ),
    "topic": ("question", "topic", "want to know"),
    # "What's it for?" reads "what s it for": "what for" never matched (44 of 44 bundle asks).
    "project": (
        "project",
        "what for",
        "it for",
        "this for",
        "occasion",
        "purpose",
        "shopping for",
        "working on",
        "setting up",
    ),
    # A project's list: "What's on your list?", "Which items should I get?" and "What should I
    # add?" got "I'm not sure" (74 of 74 bundle and journey asks each).
    "must": (
        "must have",
        # What is needed, not whether or when: "need" alone answered "When do you need it
        # by?" and "Do you need it gift-wrapped?" with the must-haves (130 of 130 bundle tasks).
        "else do you need",
        "things you need",
        "items you need",
        "do you need for",
        "need for the",
        "need for your",
        "need to buy",
        "need to get",
        "essential",
        "required",
        *_LIST,
        "your list",
        "which item",
        "which product",
        "what item",
        "what product",
        "should i get",
        "should i add",
        "should i find",
        "find for you",
        "include",
        "in the bundle",
        "looking for",
        "component",
        "contain",
    ),
    # "What would you like to know about it?" got "I'm not sure" on every status task.
    "want": (
        "what do you need",
        "what do you want",
        "tracking",
        "status",
        "like to know",
        "want to know",
        "need to know",
        "find out",
        # "What information do you need?", "What can I check for you?" (31 of 31 status asks).
        "information",
        "check for you",
        "exactly do you need",
        "details",
        "help with",
        "look up",
    ),
    # A journey's requests: "Can you list everything again?" listed its cart's and bundle's
    # items alone, and a policy question or a replacement to find went unsaid (28 of 28
    # journeys at d = 0-12 on 5k products); "What can I help you with?" got "I'm not sure".
    "goal": (*_EVERYTHING, "help you with", "looking for", "how can i help"),
    "days": ("how long ago", "how many days", "days since", "delivered"),
    "method": (
        "refund method",
        "store credit",
        "return method",
        "send it back",
        "send the item back",
        "ship it back",
        "by mail",
        "drop off",
        "drop-off",
        "pickup",
        # The method in everyday words: each of these got "I'm not sure" (honest-agent audit).
        "mail",
        "drop it off",
        "pick up",
        "pick it up",
        "picked up",
        "courier",
        "post it",
        "how will you return",
        "how would you like to return",
        "how do you want to return",
        "how will you send",
        "how would you like to send",
        "how do you want to send",
        "how are you returning",
        "how are you sending",
        # "How do you plan to return the item?" got the item (105 of 105 asks).
        "plan to return",
        "get it back",
        "get the item back",
        "return the item",
        "return option",
        "send it",
    ),
    "order_total": ("total", "order total", "order value", "subtotal", "order come to"),
    # "Do you have a paid plan?", "Which plan are you on?": "No idea" (75 of 75 asks each).
    "tier": (
        "membership",
        "tier",
        "member",
        "paid plan",
        "which plan",
        "your plan",
        "plan are you",
        "subscription",
        "subscribed",
        "account type",
        "status with us",
        "premium",
        "account level",
        "level is your account",
        # "What kind of account do you have with us?" got the product category (139 of 156).
        "account",
    ),
    # The policy documents test "Alaska and Hawaii" and "the contiguous US": an agent asks
    # in those words, or for where the customer is, rather than for a "state".
    "state": (
        "state",
        "alaska",
        "hawaii",
        "contiguous",
        "address",
        "located",
        "location",
        "where do you live",
        "where are you",
        "live in",
        "ship to",
        "shipping to",
        "shipped to",
        "sent to",
        "deliver to",
        "delivered to",
        # "Where is the order being delivered?": "I'm not sure" (81 of 156 policy asks).
        "being delivered",
        "being shipped",
        "where is the order",
        "where is it being",
        # "Where should it be shipped?", "What's your zip code?" (54 of 54 asks each).
        "where should it be",
        "where will it be",
        "where is it going",
        "zip",
        "postcode",
        "postal code",
    ),
    "item_condition": _CONDITION,
    "condition": _CONDITION,
    # "How do you want it shipped?", "Which delivery option?" (18 of 22 asks each).
    "ship_method": (
        "want it shipped",
        "delivery option",
        "shipping option",
        "shipping method",
        "shipping speed",
        "delivery method",
    ),
    # "How big is the item?" (92 of 92 asks): the policy's own words ask "large", "bulky"…
    "large_item": ("how big", "how large", "size of the item", "size is the item", "dimension"),
}

#: Slot kind → words that ask about it (specific words).
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "money": _MONEY,
    "rating": _RATING,
    "days": (*_DAYS, *_URGENCY),
    "quantity": _QTY,
    "count": ("how many",),
    "brand": NAME_WORDS["brand"],
    "order_ref": NAME_WORDS["order_ref"],
    "date": ("date", "when did you"),
    "preference": (
        # Favourite brands are part of the preference: "Do you have a preferred brand?" and
        # "Any particular brand?" got "I'm not sure" from a customer with two (31 of 31
        # discovery and substitution tasks at d = 0-12 on 5k products whose favourites count
        # and brand is no constraint). How fast they need it is part of it too.
        "preferred brand",
        "particular brand",
        "specific brand",
        "brand in mind",
        "any brand",
        *_URGENCY,
        "brand preference",
        "prefer a brand",
        "prefer any brand",
        "prefer a particular brand",
        "brand you prefer",
        "brand do you prefer",
        "brand you like",
        "matter",
        "important",
        "importance",
        "weigh",
        "favourite",
        "favorite",
        "care",
        "rank",
        "ranking",
    ),
}

#: An open question about a product search's requirements ("Any other requirements?"). The
#: agent cannot know an attribute's name (cards show "Black", not "tea type"), so a customer
#: asked openly states every requirement of that kind they have, as a shopper would; before,
#: they answered "I don't know" and kept the one the task hinged on. Only the constraints of a
#: product search answer it: a policy question's facts must still be asked for by name.
_OPEN = (
    "requirement",
    "else",
    "everything",
    "tell me more",
    "information",
    "clarify",
    "specification",
    "other",
    "specific",
    "feature",
    "spec",
    "detail",
    "criteria",
    "constraint",
    "must have",
)

#: Words that ask about every value of an exchange's replacement (slots ``exchange.<axis>``),
#: whatever its axis: "What would you like to exchange it for?" was answered with the action
#: alone ("the return or exchange is exchange"), and "What would you like instead?" with "I
#: don't know", so only the axis's own name ("which storage?") got the value wanted.
EXCHANGE_WORDS = (
    "instead",
    "replaced with",
    "for the exchange",
    "exchange it for",
    "exchange them for",
    "exchange this for",
    "exchange for",
    "swap",
    "replacement",
    "replace it with",
    "new one",
    "rather have",
    "variant",
)

#: Words that ask about a slot only when nothing more specific matched.
WEAK_WORDS: dict[str, tuple[str, ...]] = {
    # "How many did you buy?" got the product category (123 of 156 policy asks): what was
    # bought is its kind only when nothing more specific is asked.
    "category": ("did you buy", "you bought"),
    # A bare "method" asks the return method only when no other method is named: "What
    # shipping method did you choose?" got the return method.
    "method": ("method",),
    "desc": ("item", "product"),
    "item": ("item", "product"),
    "product_title": ("item", "product"),
    # "Which one do you mean?" of the customer's orders (52 of 52 asks got "I don't know").
    "order_ref": ("order", "which one"),
    "ref": ("order", "which one"),
    "order_date": ("when", "which one"),
    "seen": ("when",),
    "attr": ("variant", "option", "which one", "version", "style", *_OPEN),
    "price_max": _OPEN,
    "rating_min": _OPEN,
    "ship_days_max": _OPEN,
    "brand": _OPEN,
    # A customer with no brand or delivery limit still has favourite brands and a view on
    # speed in their priorities: "Which brand do you want?" and "How soon do you need it
    # delivered?" got "I'm not sure" (123 and 48 of 130 discovery tasks, 5k, d = 0–12).
    "preference": ("brand", "make", "manufacturer", "maker", *_DAYS),
    # "What kind of toothbrush?" got "I don't know" (63 of 64 cart asks).
    "variant": (
        "variant",
        "option",
        "which one",
        "version",
        "style",
        "kind of",
        "type of",
        "model",
        "configuration",
    ),
}

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "for",
        "to",
        "in",
        "on",
        "is",
        "are",
        "it",
        "its",
        "my",
        "your",
        "you",
        "i",
        "me",
        "do",
        "does",
        "what",
        "which",
        "how",
        "with",
        "that",
        "this",
        "be",
        "would",
        "like",
        "want",
        "need",
        "please",
        "can",
        "could",
    ]
)


#: Words that name no item in particular: a journey step "how long I have to return an item"
#: was taken as named by every question about "items" ("Which items do you need for back to
#: school?" got that step's topic as an answer too), and a "comforter set" in a cart step by
#: "What items do you need in the set?", asked of a bundle step's must-haves.
_GENERIC_NOUNS = frozenset(stems("item product order thing one set"))

#: Words of a journey step's goal (``steps.<i>.goal``) that name no step either: the
#: question words of policy topics ("how much shipping costs", "how long I have to return
#: an item", "whether …") and the four factors the system prompt tells the agent to ask
#: about. "How much does price matter to you?" was taken as naming a "how much shipping
#: costs" step alone, and the customer answered a discovery step's preference question with
#: the policy step's order total.
_NOT_NAMING = frozenset(
    stems("much many long whether have if after ask use take back about get price rating")
    + stems("delivery brand")
    # A history item's own words ("the sneakers I looked at three days ago") name no step:
    # on stems, "looked" would meet "What are you looking for?".
    + stems("look see saw seen view ago day week yesterday today morning")
)


@lru_cache(maxsize=8192)
def _phrase(text: str) -> tuple[str, ...]:
    """:func:`stems` of a question word or label: the vocabulary repeats across scripts."""
    return stems(text)


def _grams(words: tuple[str, ...], longest: int) -> frozenset[tuple[str, ...]]:
    """Every run of 1…``longest`` consecutive words: phrase tests become set lookups."""
    return frozenset(
        words[i : i + n] for n in range(1, longest + 1) for i in range(len(words) - n + 1)
    )


#: A set of question phrases, each a tuple of :func:`stems`.
Phrases = frozenset[tuple[str, ...]]

#: Words asking whether there is something at all ("Does it need to be compatible with
#: anything?", "Any particular colour?", "Is that all?"): a customer with nothing of the kind
#: says so (:meth:`SimulatedUser._unanswered`), where they echoed the request ("the product
#: is …": the bare noun matched its label) or said "I'm not sure".
EXISTENTIAL: Phrases = frozenset(
    map(
        stems,
        (
            "anything",
            "something else",
            "any other",
            "any particular",
            "any specific",
            "in particular",
            "any more",
            "any additional",
            "any further",
            "any requirement",
            "is that all",
            "is that everything",
            "is that it",
            "that's all",
            "that's everything",
            "that's it",
            "nothing else",
        ),
    )
)

#: The request's own subject (the item, the product, a journey step's goal): named by a bare
#: noun ("product"), it is what an existential question is about, not a fact it asks for.
_SUBJECTS = frozenset({"desc", "item", "product_title", "goal"})
_NOUN_PHRASES: Phrases = frozenset({stems("item"), stems("product")})

#: How a substitute's shared features are asked about (``compat.*`` slots carry these as
#: keywords): asked so, a substitution customer whose original has none says "nothing in
#: particular" (:meth:`SimulatedUser._unanswered`).
COMPAT_PHRASES: Phrases = frozenset(map(stems, COMPAT_WORDS))

#: Of those, the words that ask whether the substitute must share something with the original
#: even without "anything" ("Does it need the same fit?", "What must it have in common?"): not
#: "fit" alone, which names a garment's fit ("Does it need a relaxed fit?").
SHARED_PHRASES: Phrases = COMPAT_PHRASES - {("fit",)}

#: Slot name segments of what a substitute must share: a feature, its kind, its audience.
_SAME = frozenset({"compat", "kind", "audience"})

#: Words that make a question a proposal ("Is the same one fine?"): "No, nothing in
#: particular" would read as a refusal of it.
_ACCEPTING: Phrases = frozenset(
    map(stems, ("ok", "okay", "fine", "alright", "acceptable", "good", "work for"))
)

#: Words of a question that asks openly for more ("Any other details?", "What else should I
#: know?"): a customer with facts left unsaid that it does not reach asks what is wanted
#: (``ask_specific``), not "I don't know", which would tell the agent there is nothing to know.
OPEN_ASK: Phrases = frozenset(
    map(
        stems,
        (
            "else",
            "detail",
            "information",
            "everything",
            "tell me more",
            "more about",
            "requirement",
            "clarify",
        ),
    )
)

#: The :data:`_OPEN` words that ask for requirements even beside a specific question
#: (:func:`match_slots`): "What's your budget, and any other requirements?". Not "other",
#: "anything else" or "specific", which qualify a specific word ("Any other colour?").
OPEN_PHRASES: Phrases = frozenset(
    map(stems, ("requirement", "criteria", "constraint", "must have", "feature", "spec"))
)


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


#: A label → more words that ask about its slot, whatever its name.
LABEL_WORDS: dict[str, tuple[str, ...]] = {
    # Discovery's category: "What are you looking for?" got "I'm not sure" on every task.
    "kind of product": (
        "looking for",
        "shopping for",
        "searching for",
        "what do you need",
        "what do you want",
        "what product",
        "what item",
    ),
}


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


#: A length axis's words: its size, and its length asked in so many words.
_LENGTH = (
    "size",
    "length",
    "how long should",
    "how long do you",
    "how long would you",
    "long do you need",
    "long do you want",
)

#: A variant axis → more words a shopper is asked it in. A count's head word "count" is a
#: quantity word too: "Which pack size?" and "Which bottle size?" got "I don't know", and
#: "How many tablets should the bottle have?" got the number of bottles. Single words take a
#: "how many" from the quantity (:func:`_generic_only_elsewhere`), so "pack" is said in
#: phrases only: "How many packs?" asks the quantity.
_AXIS_WORDS: dict[str, tuple[str, ...]] = {
    "pack_count": (
        "size",
        "pack size",
        "size pack",
        "per pack",
        "in a pack",
        "in each pack",
        "which pack",
    ),
    # A furniture finish (Oak, Walnut, Black) and a lipstick's or foundation's shade are
    # their colour to a shopper: "Which colour for the cocktail table?" got no answer.
    "finish": _COLOR,
    "shade": _COLOR,
    "makeup_shade": _COLOR,
    "tablet_count": (
        "size",
        "bottle size",
        "size bottle",
        "per bottle",
        "in a bottle",
        "in each bottle",
        "tablet",
        "capsule",
        "caplet",
        "softgel",
        "gummies",
    ),
    # A tumbler's capacity, a cable's or a wiper's length, a tablet's storage, a dumbbell's
    # weight and a trouser's length are its size to a shopper: "What size do you want?" got
    # "I'm not sure" (12 of 234 cart, journey and returns tasks at d = 0-12 on 5k products
    # held such an axis unanswered), and beside a shirt's size only the shirt's was said.
    "capacity": ("size", "how big", "volume", "hold", "ounce", "oz"),
    "storage": ("size", "how big", "capacity", "how much storage", "memory", "gb"),
    "cable_length": _LENGTH,
    "wiper_length": _LENGTH,
    "inseam": _LENGTH,
    "womens_inseam": _LENGTH,
    "dumbbell_weight": ("size", "how heavy", "heavy"),
    "fragrance_size": ("how big", "volume", "bottle size"),
    "screen_size": ("how big",),
    "rug_size": ("how big", "dimension"),
}


def _axis_words(axis: str) -> list[str]:
    """More ways to ask about a variant axis than its name and label.

    The axis's last word ("format" of ``book_format``, "inseam" of ``womens_inseam``): the
    agent reads the axis from catalog_get_variants and asks "which format?", which matched
    nothing and got "it doesn't matter to me". A counted axis adds its pack's or bottle's
    words, a finish or shade the colour words (:data:`_AXIS_WORDS`).
    """
    return [w for w in axis.split("_") if w != "us"][-1:] + list(_AXIS_WORDS.get(axis, ()))


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
    longest = max((m.longest for m in matchers), default=1)
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


#: Words that only make a phrase a question: "what item" asks for the item as "item" does,
#: "brand preference" for the brand as "brand" does, "kind of" for the kind as "kind" does.
_ASKING_ONLY = frozenset(
    stems("what which who how when where is are was do does did you your the a s it i any")
    + stems("prefer preference like want need of for to in on at with")
)


def _outmatched(m: _Matcher, grams: frozenset[tuple[str, ...]]) -> bool:
    """Each of ``m``'s phrases in the question lies inside a longer one asking for another fact.

    "When did you look at it?", asked of a cart item seen nowhere, got a journey returns
    step's order date by "when did you" (91 of 182 asks); "How many days ago did it arrive?"
    a quantity by "how many" (93 of 123).
    """
    own = grams & m.strong
    longer = [q for q in grams & _LONG_PHRASES if q not in m.strong]
    return all(
        any(
            len(q) > len(p) and _positions(q, p) and not _ASKING_ONLY.issuperset(set(q) - set(p))
            for q in longer
        )
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
    outmatched = [m for m in hits if _outmatched(m, grams)]
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


def naming_the_item(slot: Slot, script: dict[str, ScriptSlot]) -> Slot:
    """A change of mind about one item of a list, as said so that the item is known.

    Said by its label alone, "the item should be X" read the same for an item swapped for X
    and for X added, and "the color should be Blue" fitted any item sold in colours: no
    agent could know which the customer meant. So a new description names the one it
    replaces ("X instead of the desk lamp"), an added item is said as extra ("the extra item
    should be X as well", as is a project's added must-have: "the must-have is now sleeping
    bag" read as a swap for one of the four said), and a variant value names its item ("Blue
    for the desk lamp");
    the value stays first, so a reply that states values only ("make it …") says them too.
    Other slots, and those whose label names the item already (a journey's "size for the
    desk lamp"), are said as they are.
    """
    if _MUST_HAVE.match(slot.name) and slot.name not in script:
        return replace(slot, label=f"extra {slot.label}", value=f"{slot.value} as well")
    m = _ITEM_FIELD.match(slot.name)
    if m is None or m["field"] == "qty":
        return slot
    item = script.get(f"{m['item']}.desc")
    if item is not None and str(item.value).lower() in slot.label.lower():
        return slot
    if m["field"] != "desc":
        return slot if item is None else replace(slot, value=f"{slot.value} for the {item.value}")
    if item is not None:
        return replace(slot, value=f"{slot.value} instead of the {item.value}")
    label = slot.label if "extra" in slot.label else f"extra {slot.label}"
    return replace(slot, label=label, value=f"{slot.value} as well")


def naming_items_apart(
    slots: tuple[Slot, ...], values: dict[str, Any], *, one_named: bool = True
) -> tuple[Slot, ...]:
    """An answer's slots, each item's quantity and variants naming the item when it states several.

    "Which colours?" about two items was answered "the color is Navy and the color is Red",
    and a journey's cart step gave every item's quantity to a question about one: nothing
    said whose value was whose. So when an answer states the quantities or variant values of
    more than one item, each names its item by the description the customer holds
    (``values``, after a said switch): "Navy for the wool socks", "2 for the desk lamp". The
    value stays first and is written out whole (a protected ``attr``: typo noise leaves the
    number and the name intact), so a reply stating values only says the items too. An
    answer about one item is said as before when the question named that one alone
    (``one_named``); to a question naming several items or none, in a list of several, it
    names its item too: "Which colour for the cocktail table and the swimsuit?" got
    "Black.", the swimsuit's, which an agent could read as the table's. An item the customer
    has not described yet is said as before.
    """
    fields = [_ITEM_FIELD.match(s.name) for s in slots]
    fields = [m if m and m["field"] != "desc" else None for m in fields]
    items = {m["item"] for m in fields if m}
    if len(items) < 2 and (one_named or not items or _described(values) < 2):
        return slots
    out = []
    for s, m in zip(slots, fields, strict=True):
        desc = values.get(f"{m['item']}.desc") if m else None
        if desc is not None and str(desc).lower() in s.label.lower():
            desc = None  # the label names the item already ("size for the desk lamp")
        out.append(
            s if desc is None else replace(s, value=f"{s.display()} for the {desc}", kind="attr")
        )
    return tuple(out)


def _described(values: dict[str, Any]) -> int:
    """How many list items the customer has described (a ``….desc`` they hold)."""
    return sum(1 for name in values if name.endswith(".desc") and _ITEM_FIELD.match(name))


def naming_the_exchange(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """An answer's slots, a journey exchange's replacement values naming the item exchanged.

    A question naming no request ("Which one would you like instead?") was answered "the
    scent is Vanilla" in a journey whose cart step also holds items sold in scents: nothing
    said the value was the exchange's. So a value of a returns step's replacement names its
    item by the step's goal (``values``): "Vanilla for the exchange of the air freshener".
    The value stays first and is written out whole (a protected ``attr``), as
    :func:`naming_items_apart` does. A label naming the exchange already (a switched step's
    "color for the desk lamp exchange") is said as it is.
    """
    out = []
    for s in slots:
        m = _EXCHANGE_FIELD.match(s.name)
        item = values.get(f"steps.{m['step']}.goal") if m else None
        if item is None or "exchange" in s.label:
            out.append(s)
            continue
        item = str(item)
        if not item.lower().startswith(("the ", "my ")):
            item = f"the {item}"
        out.append(replace(s, value=f"{s.display()} for the exchange of {item}", kind="attr"))
    return tuple(out)


#: A journey step's slot (``steps.<i>.<field>``).
_STEP_FIELD = re.compile(r"^steps\.(?P<step>\d+)\.(?P<field>[^.]+)")
#: Where the step's own words sit in an answer, and slots said by their item or exchange.
_STEP_SELF = ("verb", "goal", "items", "exchange")
#: A journey step's goal words that already say what they are about.
_SAID_SUBJECT = ("the ", "my ", "how ", "what ", "whether ", "when ", "which ", "if ")


def step_subject(step: str, values: dict[str, Any]) -> str | None:
    """How the customer names journey step ``step``: its goal ("the stem toys"), or None."""
    goal = values.get(f"steps.{step}.goal")
    if goal is None:
        return None
    goal = str(goal)
    if "replacement" in str(values.get(f"steps.{step}.verb", "")):
        return f"the {goal} replacement"
    return goal if goal.lower().startswith(_SAID_SUBJECT) else f"the {goal}"


#: How a reply says a visit-history time: a noun phrase for "the <label> is <value>".
SEEN_LABEL = "one I mean"


def saying_when_seen(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """A reply's slots, a visit-history time said as the item it picks out.

    Replies say a slot as "the <label> is <value>", and every label but one reads there as
    a noun phrase: the history time's, "when I looked at it", which matches questions ("When
    did you look at it?") but was said "the when I looked at it is two days ago for the body
    wash" (21 of 52 cart tasks at d = 0-12, 4 per d, on 5k products). So the time is said as the
    cart request says it, naming the item it picks out: "the one I mean is the body wash I
    looked at two days ago" ("the one I looked at …" for an item not described), written out
    whole (a protected ``attr``). Applied after the naming functions: the item is named here
    whatever they decided, and their " for the …" is not repeated.
    """
    out = []
    for s in slots:
        m = _ITEM_FIELD.match(s.name)
        if m is None or m["field"] != "seen" or s.name not in values:
            out.append(s)
            continue
        desc = values.get(f"{m['item']}.desc")
        item = f"the {desc}" if desc is not None else "the one"
        said = f"{item} I looked at {values[s.name]}"
        out.append(replace(s, label=SEEN_LABEL, value=said, kind="attr"))
    return tuple(out)


def naming_steps_apart(slots: tuple[Slot, ...], values: dict[str, Any]) -> tuple[Slot, ...]:
    """An answer's slots, each naming its journey step when the answer states several steps'.

    "How much do price, rating, delivery and brand matter to you?" names no step, and was
    answered "the budget is $23, …, the budget is $30, …, the priority order is … and the
    priority order is …": three budgets and two rankings, none said to be whose (21 of 60
    journeys at d = 8/11/12 on 5k products hold two rankings). So when an answer states the
    details of more than one step, each names its step by the customer's words for it
    (``values``): "$23 for the stem toys". Item and exchange values name their item already
    (:func:`naming_items_apart`, :func:`naming_the_exchange`), a step's own words need no
    naming, and a label naming its request already ("budget for the bike helmets") stays.
    """
    fields = [_STEP_FIELD.match(s.name) for s in slots]
    fields = [m if m and m["field"] not in _STEP_SELF else None for m in fields]
    if len({m["step"] for m in fields if m}) < 2:
        return slots
    out = []
    for s, m in zip(slots, fields, strict=True):
        subject = step_subject(m["step"], values) if m else None
        if subject is None or subject.lower().removeprefix("the ") in s.label.lower():
            out.append(s)
            continue
        out.append(replace(s, value=f"{s.display()} for {subject}", kind="attr"))
    return tuple(out)


def naming_the_step(slot: Slot) -> Slot:
    """A journey's change of mind, its value naming the request it is about.

    A journey labels a changed slot by its request ("budget for the bike helmets"), but a
    reply stating values only said "actually make it $190": in a journey with several
    budgets no agent could tell whose. So the request moves from the label to the value,
    as :func:`naming_the_item` says an item's ("$190 for the bike helmets"); the value is
    written out whole (a protected ``attr``). Other slots are said as they are.
    """
    if not slot.name.startswith("steps.") or _ITEM_FIELD.match(slot.name):
        return slot
    label, sep, subject = slot.label.partition(" for ")
    if not sep:
        return slot
    return replace(slot, label=label, value=f"{slot.display()} for {subject}", kind="attr")


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
