"""Heuristic agent for ``policy``: look the rule up, ask for the facts it tests, state its value.

The agent reads the policy passage as a list of rules, one per sentence: each sentence names
the conditions it applies under (a membership tier, a state, an order amount, a method, a kind
of item, the item's condition or the reason for a return) and one value. It asks the customer
for every fact the passage's sentences test that the first message did not state, then picks
the most specific sentence whose conditions all hold and answers with just its value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.common import overlap, reply_text

Facts = dict[str, Any]
Condition = Callable[[Facts], bool | None]

_SENTENCE = re.compile(r"(?<=\.)\s+(?=[A-Z])")
#: The documents' word on which of two rules applies ("… This applies even when the item is a
#: large item."): it names the other rule's condition, not one of its own, and the baseline
#: already reads a later line as the one that applies, which is the engine's order.
_PRECEDENCE_NOTE = "This applies even when "
_AMOUNT = r"\$(\d+(?:,\d{3})*(?:\.\d+)?)"

#: Words of a category name that say which kind of item it is (a store bot's product table).
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "large_item": (
        "bed frame", "bike", "bookcase", "car batter", "cat tree", "coffee table", "crib",
        "desk", "dining set", "dog crate", "dresser", "chair", "grill", "ladder", "mower",
        "mattress", "fridge", "nightstand", "patio", "sofa", "couch", "stroller", "tv stand",
        "television", "treadmill",
    ),
    "electronics": (
        "air fryer", "purifier", "monitor", "blender", "speaker", "calculator", "camera",
        "charger", "mice", "mouse", "controller", "dash cam", "computer", "kettle", "shaver",
        "toothbrush", "hard drive", "flat iron", "headset", "keyboard", "hdmi", "hair dryer",
        "gaming pc", "flashlight", "headlamp", "headphone", "batter", "jump starter",
        "label maker", "laptop", "memory card", "microwave", "lens", "string light",
        "shredder", "power bank", "printer", "remote control", "sewing machine", "coffee maker",
        "smartphone", "smartwatch", "detector", "soundbar", "space heater", "mixer",
        "streaming", "tablet", "television", "thermometer", "inflator", "toaster",
        "treadmill", "usb", "vr ", "vacuum", "webcam", "router", "earbud",
    ),
    "jewelry": ("bracelet", "charm", "earring", "watch", "necklace", "jewelry", "ring"),
    "apparel": (
        "belt", "bra", "coat", "jacket", "shirt", "dress", "hoodie", "jean", "pajama", "pant",
        "sneaker", "sock", "swim", "underwear", "legging", "boot", "shoe", "short", "slipper",
        "sweater", "cardigan", "top", "tee", "flat", "sandal", "uniform",
    ),
    "perishable": ("bread", "egg", "fruit", "milk", "food", "flower", "live plant"),
    "hazmat": ("batter", "jump starter", "motor oil", "nail polish", "perfume", "power bank"),
    "final_sale": ("fabric", "personalized"),
    "personalised": ("personalized", "personalised", "custom"),
    "hygiene": (
        "baby bottle", "wipe", "body wash", "bra", "conditioner", "deodorant", "diaper",
        "earring", "shaver", "toothbrush", "eyeshadow", "moisturizer", "cleanser",
        "foundation", "swim", "underwear", "lipstick", "mascara", "nail polish", "pacifier",
        "pain reliever", "panties", "perfume", "razor", "brush head", "shampoo", "sunscreen",
        "thermometer", "toothpaste", "vr headset", "vitamin",
    ),
}  # fmt: skip

#: The question to ask per fact, in the customer's vocabulary.
_QUESTION: dict[str, str] = {
    "tier": "membership tier",
    "category": "product category",
    "days": "days since delivery",
    "rmethod": "return method",
    "ship": "shipping method",
    "total": "order total",
    "condition": "item condition",
    "reason": "reason for the return",
    "price": "item price",
    "qty": "quantity",
    "state": "delivery state",
}


def heuristic(task: PublicTask) -> Oracle:
    """Play a policy task from the public view only."""
    question = _topic_words(task.user)
    found = yield [call("policy_search", query=question[:200])]
    passages = [d for r in found for d in r.get("results", []) if isinstance(d, dict)]
    if not passages:
        yield "Sorry, I could not find that policy."
        return
    passage = max(passages, key=lambda d: overlap(question, str(d.get("section", ""))))
    threshold = "amount for free" in task.user.lower()
    facts = read_facts(task.user)
    rules = [parse_sentence(s, threshold) for s in _sentences(passage.get("text", ""))]
    tested = {name for conds, _ in rules for name in conds}
    if tested & {"tags"}:
        tested.add("category")
    missing = [name for name in _QUESTION if name in tested and name not in facts]
    if missing:
        labels = ", ".join(_QUESTION[m] for m in missing)
        results = yield [call("ask_user", question=f"Could you tell me your {labels}?")]
        facts = {**read_facts(reply_text(results)), **facts}
    if "category" in facts:
        facts["tags"] = kinds_of(facts["category"])
    yield answer(passage.get("text", ""), facts, boolean=_is_yes_no(task.user), threshold=threshold)


#: Words of a first message that carry no topic (greetings, manners, the situation's lead-in).
_FILLER = frozenset(
    [
        "hi",
        "hey",
        "hello",
        "good",
        "day",
        "afternoon",
        "okay",
        "so",
        "quick",
        "question",
        "about",
        "please",
        "could",
        "you",
        "explain",
        "your",
        "policy",
        "on",
        "the",
        "i",
        "hope",
        "don't",
        "dont",
        "mind",
        "a",
        "an",
        "what's",
        "whats",
        "deal",
        "with",
        "need",
        "straight",
        "answer",
        "rule",
        "for",
        "is",
        "tell",
        "me",
        "how",
        "does",
        "it",
        "work",
        "for",
        "me",
        "want",
        "to",
        "understand",
        "before",
        "do",
        "anything",
        "was",
        "reading",
        "fine",
        "print",
        "and",
        "got",
        "confused",
        "q",
        "abt",
        "hows",
        "not",
        "understand",
        "can",
        "thx",
        "thank",
    ]
)


def _sentences(text: str) -> list[str]:
    """A passage's rule sentences, without the notes on which of two rules applies."""
    return [s for s in _SENTENCE.split(text) if s and not s.startswith(_PRECEDENCE_NOTE)]


def _topic_words(text: str) -> str:
    """The first sentence of the message that says more than a greeting, without filler words."""
    for sentence in re.split(r"[.?!]+\s", text):
        kept = [w for w in re.findall(r"[A-Za-z0-9'-]+", sentence) if w.lower() not in _FILLER]
        if kept:
            return " ".join(kept)
    return text


def answer_found(found: list[dict[str, Any]], text: str) -> str:
    """Answer from a policy_search turn's results with only the facts ``text`` states."""
    passages = [d for r in found for d in r.get("results", []) if isinstance(d, dict)]
    if not passages:
        return "Sorry, I could not find that policy."
    question = _topic_words(text)
    passage = max(passages, key=lambda d: overlap(question, str(d.get("section", ""))))
    facts = read_facts(text)
    if "category" in facts:
        facts["tags"] = kinds_of(facts["category"])
    threshold = "amount for free" in text.lower()
    return answer(passage.get("text", ""), facts, boolean=_is_yes_no(text), threshold=threshold)


def _is_yes_no(text: str) -> bool:
    low = text.lower()
    return "whether" in low or "can i" in low or "do you adjust" in low


def kinds_of(category: str) -> set[str]:
    """The kinds of item (tags) a category name suggests."""
    low = f" {category.lower()} "
    return {tag for tag, ws in KIND_WORDS.items() if any(w in low for w in ws)}


def read_facts(text: str) -> Facts:
    """The policy facts a customer's message states."""
    low = text.lower()
    out: Facts = {}
    if "premium" in low:
        out["tier"] = "premium"
    elif "basic" in low:
        out["tier"] = "basic"
    elif re.search(r"free-tier|no paid|no membership|regular|not a member|without a member", low):
        out["tier"] = "none"
    m = re.search(r"(?:it'?s for|category is|category:) ([a-z0-9&' -]+?)(?:[,.;!?]| and |$)", low)
    if m:
        out["category"] = m.group(1).strip()
    m = re.search(r"(\d+)\s+days?\s+(?:ago|since)", low) or re.search(
        r"delivered\s+(\d+)\s+days?", low
    )
    if m:
        out["days"] = int(m.group(1))
    m = re.search(r"(?:order total|total)\D{0,20}" + _AMOUNT, low)
    if m:
        out["total"] = float(m.group(1).replace(",", ""))
    m = re.search(r"(?:item price|price|priced|costs?)\D{0,20}" + _AMOUNT, low)
    if m:
        out["price"] = float(m.group(1).replace(",", ""))
    for key, words in (
        ("next_day", ("next-day", "next day")),
        ("two_day", ("two-day", "two day", "2-day")),
        ("expedited", ("expedited",)),
        ("standard", ("standard shipping", "standard")),
    ):
        if any(w in low for w in words):
            out["ship"] = key
            break
    for key, words in (
        ("drop_off", ("drop-off", "drop off")),
        ("pickup", ("pickup", "pick-up", "pick up")),
        ("mail", ("mail",)),
    ):
        if any(w in low for w in words):
            out["rmethod"] = key
            break
    for key in ("unopened", "opened", "damaged"):
        if re.search(rf"\b{key}\b", low):
            out["condition"] = key
            break
    for key, words in (
        ("changed_mind", ("changed my mind",)),
        ("defective", ("defective",)),
        ("wrong_item", ("wrong item",)),
        ("damaged_in_transit", ("arrived damaged",)),
    ):
        if any(w in low for w in words):
            out["reason"] = key
            break
    m = (
        re.search(r"\b(ak|hi|ca|ny|tx|wa)\b", text.lower())
        if re.search(r"\b(AK|HI|CA|NY|TX|WA)\b", text)
        else None
    )
    if m:
        out["state"] = m.group(1).upper()
    elif "alaska" in low:
        out["state"] = "AK"
    elif "hawaii" in low:
        out["state"] = "HI"
    m = re.search(r"(?:quantity|units?|buying)\D{0,12}(\d+)", low) or re.search(
        r"(\d+)\s+(?:units?|of them|pieces)", low
    )
    if m:
        out["qty"] = int(m.group(1))
    return out


def _num(facts: Facts, name: str, test: Callable[[float], bool]) -> bool | None:
    value = facts.get(name)
    return None if value is None else test(float(value))


def parse_sentence(sentence: str, threshold: bool = False) -> tuple[dict[str, Condition], str]:
    """A sentence's conditions (fact → test) and the sentence with condition phrases removed.

    When the question asks for a threshold (``threshold``), an order amount is the answer,
    not a condition.
    """
    low = sentence.lower()
    conds: dict[str, Condition] = {}
    if re.search(r"without premium|unless you are a premium", low):
        conds["tier"] = lambda f: f.get("tier") != "premium" if "tier" in f else None
    elif "premium" in low:
        conds["tier"] = lambda f: f.get("tier") == "premium" if "tier" in f else None
    elif "basic member" in low:
        conds["tier"] = lambda f: f.get("tier") == "basic" if "tier" in f else None
    elif "without a membership" in low:
        conds["tier"] = lambda f: f.get("tier") == "none" if "tier" in f else None
    if "alaska" in low:
        conds["state"] = lambda f: f["state"] in ("AK", "HI") if "state" in f else None
    elif "contiguous" in low:
        conds["state"] = lambda f: f["state"] not in ("AK", "HI") if "state" in f else None
    rest = low
    m = None if threshold else re.search(r"orders of " + _AMOUNT + " or more", low)
    if m:
        x = float(m.group(1).replace(",", ""))
        conds["total"] = lambda f, x=x: _num(f, "total", lambda v: v >= x)
        rest = rest.replace(m.group(0), "")
    m = re.search(r"orders under " + _AMOUNT, low)
    if m:
        x = float(m.group(1).replace(",", ""))
        conds["total"] = lambda f, x=x: _num(f, "total", lambda v: v < x)
        rest = rest.replace(m.group(0), "")
    m = re.search(r"priced " + _AMOUNT + " or more", low)
    if m:
        x = float(m.group(1).replace(",", ""))
        conds["price"] = lambda f, x=x: _num(f, "price", lambda v: v >= x)
        rest = rest.replace(m.group(0), "")
    m = re.search(r"priced " + _AMOUNT + " or less", low)
    if m:
        x = float(m.group(1).replace(",", ""))
        conds["price"] = lambda f, x=x: _num(f, "price", lambda v: v <= x)
        rest = rest.replace(m.group(0), "")
    m = re.search(r"buying (\d+) or more units", low)
    if m:
        q = int(m.group(1))
        conds["qty"] = lambda f, q=q: _num(f, "qty", lambda v: v >= q)
        rest = rest.replace(m.group(0), "")
    m = re.search(r"\bup to (\d+) ", low)
    if m:
        q = int(m.group(1))
        conds["qty"] = lambda f, q=q: _num(f, "qty", lambda v: v <= q)
        rest = rest.replace(m.group(0), "")
    named = _named_categories(low)
    if named:
        conds["category"] = lambda f, ns=named: (
            any(_same_noun(n, f["category"]) for n in ns) if "category" in f else None
        )
    ships = [k for k, w in (("standard", "standard"), ("expedited", "expedited"),
                            ("two_day", "two-day"), ("next_day", "next-day")) if w in low]  # fmt: skip
    if len(ships) == 1 and "standard policies" not in low:
        conds["ship"] = lambda f, s=ships[0]: f["ship"] == s if "ship" in f else None
    rms = [k for k, w in (("mail", "mail"), ("drop_off", "drop-off"), ("pickup", "pickup")) if w in low]  # fmt: skip
    if len(rms) == 1:
        conds["rmethod"] = lambda f, r=rms[0]: f["rmethod"] == r if "rmethod" in f else None
    if "unopened" in low:
        conds["condition"] = lambda f: (
            f.get("condition") == "unopened" if "condition" in f else None
        )
    elif "opened" in low and "opened hygiene" not in low:
        conds["condition"] = lambda f: f.get("condition") == "opened" if "condition" in f else None
    if "changed your mind" in low or "changed their mind" in low:
        conds["reason"] = lambda f: f.get("reason") == "changed_mind" if "reason" in f else None
    elif re.search(r"defective, damaged or (wrong|not as ordered)", low):
        conds["reason"] = lambda f: (
            f.get("reason") != "changed_mind" or f.get("condition") == "damaged"
            if "reason" in f or "condition" in f
            else None
        )
    left_out = {_LEFT_OUT[m.group(1)] for m in _EXCEPT.finditer(low)}
    kinds = _EXCEPT.sub(" ", low)
    tags = [t for t, ws in _SENTENCE_KINDS.items() if any(w in kinds for w in ws)]
    if tags or left_out:
        conds["tags"] = lambda f, ts=tuple(tags), no=tuple(left_out): (
            all(t in f["tags"] for t in ts) and not any(t in f["tags"] for t in no)
            if "tags" in f
            else None
        )
    return conds, rest


#: A kind of item a sentence leaves out ("large items other than electronics", "a
#: non-electronic item", "orders without large items"), by the words that name it.
_EXCEPT = re.compile(
    r"(?:other than |non-|without )(electronics|electronic|large items|hazardous items)"
)
_LEFT_OUT = {
    "electronics": "electronics",
    "electronic": "electronics",
    "large items": "large_item",
    "hazardous items": "hazmat",
}
#: A list of product kinds a sentence is limited to ("on up to 2 unopened laptops or desktop
#: computers priced …", "units of pens, notebooks, copy paper or desk organizers priced …").
_NAMED = re.compile(
    r"\b(?:units of|on)(?: up to \d+)?(?: unopened| opened)? ([a-z][a-z ,&]*? (?:or|and) [a-z &]+?) priced"
)


def _named_categories(low: str) -> tuple[str, ...]:
    """The product kinds a sentence names as a list, unless they are kinds of item (tags)."""
    m = _NAMED.search(low)
    if not m:
        return ()
    names = tuple(n.strip() for n in re.split(r",\s*|\s+(?:or|and)\s+", m.group(1)) if n.strip())
    words = {w for ws in _SENTENCE_KINDS.values() for w in ws} | {"watches", "shoes", "items"}
    if any(n in words or any(w in n for w in words) for n in names):
        return ()
    return names


def _same_noun(a: str, b: str) -> bool:
    """Whether two product-kind names are the same kind, singular or plural."""
    a, b = a.lower().strip(), b.lower().strip()
    return a.rstrip("s") == b.rstrip("s") or a in b or b in a


#: How passage sentences name kinds of item.
_SENTENCE_KINDS: dict[str, tuple[str, ...]] = {
    "large_item": ("large item", "large electronics"),
    "electronics": ("electronics", "electronic item"),
    "jewelry": ("jewelry",),
    "apparel": ("clothing",),
    "perishable": ("perishable",),
    "hazmat": ("hazardous",),
    "final_sale": ("final-sale",),
    "personalised": ("personalised",),
    "hygiene": ("hygiene",),
}


def _value(rest: str, boolean: bool) -> str | None:
    if boolean:
        negative = re.search(r"\b(cannot|not|no)\b", rest)
        return "No." if negative else "Yes."
    m = re.search(_AMOUNT, rest)
    if m:
        return f"${m.group(1)}"
    m = re.search(r"(\d+(?:\.\d+)?)%", rest)
    if m:
        return f"{m.group(1)}%"
    m = re.search(r"(\d+)\s+(business days?|days?|months?)", rest)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    return None


def answer(text: str, facts: Facts, boolean: bool = False, threshold: bool = False) -> str:
    """The value of the most specific passage sentence whose conditions all hold for ``facts``.

    A condition on a fact the customer could not tell is taken to hold (they were asked; a
    fact that decides would be known) but does not make the sentence more specific.
    """
    best: tuple[int, int, str] | None = None
    for i, sentence in enumerate(_sentences(text)):
        conds, rest = parse_sentence(sentence, threshold)
        held = [test(facts) for test in conds.values()]
        if any(h is False for h in held):
            continue
        value = _value(rest, boolean)
        if value is None:
            continue
        strength = sum(h is True for h in held) + (
            10 if re.search(r"\b(always|never|whatever)\b", rest) else 0
        )
        if best is None or (strength, i) >= best[:2]:
            best = (strength, i, value)
    if best is None:
        return "Sorry, I could not tell what our policy gives in your case."
    if boolean:
        return f"{best[2]} That is what our policy says for your case."
    return f"Our policy gives {best[2]} in your case."
