"""The words a question asks a customer's fact by: stems and the vocabularies.

Everything here is data or a pure function of text: :func:`stems` (Snowball's English stems,
the unit all matching works on), the phrases that ask for a slot by its name's last segment
(:data:`NAME_WORDS`), its kind (:data:`KIND_WORDS`), its label (:data:`LABEL_WORDS`), the weak
words that count only when nothing specific matched (:data:`WEAK_WORDS`), and the phrase sets
that make a question open, existential or a proposal. Each entry's comment names the asks it
was added for, so a table can be pruned without re-running the audits that grew it.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

from shopgen.gen.slots import COMPAT_WORDS

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


#: Words that ask about every item of a list, whichever one the question names.
_EACH = frozenset(stems("each every all both"))
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
    # A paraphrase bank of agents' questions written apart from the customer: "Do you only
    # need one of the lamps?", "One lamp, or more?", "Is one lamp sufficient?", "Would one
    # lamp do, or should I add more?" got "I don't know" (512 of 518 cart asks each).
    "only need one",
    "or more",
    "sufficient",
    "add more",
    "need several",
)
_COLOR = ("color", "colour", "shade", "hue", "tint")
#: Not "looking for": "Are you looking for a replacement or a refund?" got the item too.
#: "What did you order?" got the order number (196 of 440 returns and status asks, the
#: paraphrase bank).
_ITEM = (
    "which item",
    "what item",
    "which product",
    "what product",
    "what did you order",
    "what you ordered",
    "what did you buy",
)
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
    # "Could you describe the current state of the product?" (16 of 16, the second bank).
    "state of the item",
    "state of the product",
    "current state",
    "original state",
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
    # The paraphrase bank: "What would you like me to add to your cart?", "What should I put
    # in your cart?", "What did you need again?" got "I don't know" (225 of 225 cart asks).
    "add to your cart",
    "put in your cart",
    "like me to add",
    "did you need",
    # "What should I put in your shopping cart?", "What are you hoping to have in your
    # basket?" (40 of 40 cart asks each, the second bank).
    "put in your shopping cart",
    "have in your basket",
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
    # Longer than the days since delivery's "how many days": "Within how many days does this
    # need to be delivered?" got "I'm not sure" (47 of 47 asks, the second bank).
    "ship_days_max": (*_DAYS, *_URGENCY, "within how many days", "in how many days"),
    "brand": ("brand", "make", "manufacturer", "maker", "label"),
    "order_ref": (
        *_WHICH_ORDER,
        "order id",
        "order ref",
        "reference",
        "order no",
        "order confirmation",
        "confirmation number",
    ),
    "ref": (*_WHICH_ORDER, "order id", "order ref", "reference"),
    # A customer who tells their order by its day answers "Which order?" with it: "Which order
    # is it?" and "Do you have an order number?" got "I don't know" whenever the day was the
    # only way to tell it (22 of 52 status, returns and journey asks).
    "order_date": (
        "order date",
        "when did you order",
        "when did you place",
        # "When did you make this purchase?" (the paraphrase bank: 121 of 440 asks got "I'm
        # not sure").
        "when did you make",
        "when did you buy",
        "when did you purchase",
        # "Could you tell me roughly when you ordered it?" (31 of 31, the second bank).
        "when you ordered",
        "when you bought",
        "when you placed",
        "when you purchased",
        # Longer than the days since delivery's "how long ago": "About how long ago did you
        # buy this?" got "I don't know" (31 of 31 returns and status asks, the second bank).
        "how long ago did you buy",
        "how long ago did you order",
        "how long ago did you purchase",
        "how long ago did you place",
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
        # Not "happen" alone: "Do you happen to have the order number handy?" got the reason
        # too (156 of 156 returns asks, the paraphrase bank).
        "what happened",
        "what s happened",
        "what has happened",
        "made you",
        "prompt",
        "defective",
        "faulty",
        "broken",
        "not working",
        # Longer than the method's "send it back": "Why do you want to send it back?" got the
        # return method too (213 of 215 returns asks, the paraphrase bank).
        "why do you want to send it back",
        "why would you like to send it back",
        "why are you sending it back",
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
    # "What are you looking to send back?", "Which of your purchases is this return about?"
    # (40 of 40 returns asks each, the second bank).
    "item": (
        *_ITEM,
        "looking to send back",
        "looking to return",
        "what are you returning",
        "what are you sending back",
        "would you like to return",
        "return about",
    ),
    "product_title": _ITEM,
    # "Do you remember around what day you came across this product?" (18 of 18, the second
    # bank).
    "seen": (
        "when did you see",
        "when did you look",
        "viewed",
        "looked at",
        "saw",
        "came across",
        "what day you",
        "how long ago did you see",
        "how long ago did you look",
        "how long ago did you view",
    ),
    # "How many items should I suggest?" got the journey's items, not the count.
    "k_rec": (
        "how many option",
        "option",
        "choice",
        "suggestion",
        "suggest",
        "recommend",
        "shortlist",  # "How long a shortlist should I put together?" (80 of 80, the second bank)
    ),
    # The kind of product asked as "What's the item?": a policy customer said "I'm not sure"
    # to each of these (576 asks), a discovery one to "What are you buying?".
    "category": (
        "kind of",
        "type of",
        # "What sort of product are we talking about?" (the paraphrase bank: 257 of 257 policy
        # asks got "I'm not sure"); "What sort of membership …" is the tier's, a longer phrase.
        "sort of",
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
        # Not "purchasing" alone, whose stem is "purchase"'s: "How many did you purchase?" got
        # the category (257 of 257 policy asks, the paraphrase bank).
        "are you purchasing",
        # "What can I help you find?", "Product type?", "Which department would this item fall
        # under?" (40 of 40 asks each, the second bank).
        "help you find",
        "product type",
        "department",
        "fall under",
    ),
    # "What would you like to ask?" (the paraphrase bank: 257 of 257 policy asks got "I'm not
    # sure"). Not "like to know": in a journey, "What would you like to know about the
    # order?" got the policy step's question beside the order's.
    # "Which policy would you like to know about?", "What can I clarify regarding our
    # policies?", "… how the store handles things?" (40 of 40 asks each, the second bank).
    "topic": (
        "question",
        "topic",
        "want to know",
        "like to ask",
        "want to ask",
        "which policy",
        "what policy",
        "our policies",
        "our policy",
        "store handles",
    ),
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
        # "What are you putting together?", "… what the purchases are for?", "What's the
        # overall goal behind this shopping trip?" (40 of 40 bundle asks each, the second bank).
        "putting together",
        "purchases are for",
        "goal behind",
        "shopping trip",
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
        # "Items needed?", "Could you list the things you'll need?" (40 of 40, the second bank).
        "items needed",
        "things needed",
        "things you ll need",
        "list the things",
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
        # "Carrier too?", "Should I tell you the carrier as well?" (the paraphrase bank: 156
        # of 156 status asks got "I'm not sure"); "What info do you need?" (225 of 225).
        "carrier",
        "info",
        "details",
        "help with",
        "look up",
        # "What would you like to check on regarding this order?" (40 of 40, the second bank).
        "check on",
        "like to check",
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
        # "How would you prefer to return it?" (the paraphrase bank: 215 of 215 returns asks
        # got "I'm not sure").
        "prefer to return",
        "prefer to send",
        "prefer to ship",
        # "How do you plan to return the item?" got the item (105 of 105 asks).
        "plan to return",
        "get it back",
        "get the item back",
        # Not "return the item" alone: "Why are you returning the item?" got the method too
        # (47 of 47 returns asks, the second bank).
        "to return the item",
        "return option",
        "send it",
        # "How would you like to get the item to us?", "What's the most convenient way for you
        # to return it?" (47 of 47 returns asks each, the second bank).
        "get it to us",
        "get the item to us",
        "way to return",
        "way for you to return",
        "way to send",
    ),
    "order_total": ("total", "order total", "order value", "subtotal", "order come to"),
    # "What does that item sell for?" (16 of 16 policy asks, the second bank).
    "price": ("sell for", "selling for", "how much was it", "how much did it cost", "did you pay"),
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
        # Longer than the category's "kind of" (the paraphrase bank: "What sort of membership
        # or account do you have?" got the category too, 257 of 257).
        "kind of account",
        "sort of account",
        "type of account",
        "kind of membership",
        "sort of membership",
        "type of membership",
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
        # "Where are we shipping this order to?" got the shipping method or "I'm not sure"
        # (170 of 257 policy asks, the paraphrase bank).
        "where are we shipping",
        "where are you shipping",
        "where is it shipping",
        "where should we ship",
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
        # Longer than the category's "kind of": "What kind of shipping did you go with?" got
        # the category (203 of 257 policy asks, the paraphrase bank).
        "kind of shipping",
        "sort of shipping",
        "type of shipping",
        # Longer than the state's "being shipped": "How is it being shipped?" got the state.
        "how is it being shipped",
        "how s it being shipped",
        "how is it being delivered",
        "how s it being delivered",
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
        # A second bank of agents' questions written apart from the customer: "Which factor
        # should I prioritize?", "What's the deciding factor for you?", "What's your top
        # consideration?" got "I'm not sure" (80 of 80 discovery and substitution asks each).
        "factor",
        "prioritize",
        "prioritise",
        "top consideration",
        "main consideration",
        "biggest consideration",
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
            # "Is that all?", "Will that be all?", "Anything more I need to know?" got "No
            # idea" where "Is that everything?" got this (the paraphrase bank: 713 of 780 and
            # 532 of 780 asks).
            "is that all",
            "that be all",
            "anything more",
        ),
    )
)

#: The :data:`_OPEN` words that ask for requirements even beside a specific question
#: (:func:`match_slots`): "What's your budget, and any other requirements?". Not "other",
#: "anything else" or "specific", which qualify a specific word ("Any other colour?").
OPEN_PHRASES: Phrases = frozenset(
    map(stems, ("requirement", "criteria", "constraint", "must have", "feature", "spec"))
)

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
