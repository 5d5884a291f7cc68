"""Slots: the facts of a hidden goal that the customer may say, omit, or reveal later.

A task generator describes what the customer wants as a flat tuple of :class:`Slot` records
(``price_max = 50``, ``items.0.variant.size = "M"``). The renderer keeps every required slot,
drops each optional slot with probability ``p_missing(d)``, and returns the dropped ones so the
user script can reveal them when the agent asks. Names are dotted paths; an integer segment
makes a list (``items.0.desc``, ``items.1.desc``) so templates can loop over items.

Each slot kind says how its value is written and whether typo noise may touch it. Ids, order
numbers, prices, ratings, day counts, quantities, brands and variant values are protected:
a typo there would make the task unsolvable or change its answer (issue #4). Free text
(a category, a product description, a reason) is left open to noise, as a customer would type it.

>>> s = make_slot("discovery", "price_max", 50, required=True)
>>> (s.display(), s.protected, s.label)
('$50', True, 'budget')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from shopgen.schemas.errors import ConfigError
from shopgen.schemas.task import SlotKind

#: How an agent asks what a substitute must keep of the original: the keywords of a
#: substitution's shared-feature facts, and what the simulated customer hears as asking about
#: them when the original must share none ("nothing in particular").
COMPAT_WORDS = (
    "must match",
    "match",
    "compatible",
    "compatibility",
    "fit",
    "same as",
    "same",
    "in common",
    "work with",
    "share",
    "keep",
)

#: What each journey step asks for, as the journey template's ``verb`` word (the value of
#: its ``steps.<i>.verb`` slot): how the simulated customer tells which environment a step
#: is, so that a substitution step answers as a substitution customer does.
ACTIONS = {
    "discovery": "find suggestions for",
    "substitution": "find a replacement for",
    "cart": "add to my cart",
    "returns": "sort out a return for",
    "status": "check on",
    "policy": "ask about",
    "bundle": "get everything for",
}

#: Kinds whose written value noise must never corrupt (DESIGN §7: solvable by construction).
PROTECTED_KINDS: frozenset[str] = frozenset(
    {
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
        # The customer's whole stated preference (``constraints.preference_fact``): its strength
        # words, brands and price/delivery anchors decide the ranking an agent is graded by.
        "preference",
    }
)

#: A short capital code (:attr:`Slot.protected`).
_CODE = re.compile(r"[A-Z]{2,3}")

ENVS: tuple[str, ...] = (
    "discovery",
    "substitution",
    "cart",
    "returns",
    "status",
    "policy",
    "bundle",
    "journey",
)


@dataclass(frozen=True, kw_only=True)
class SlotSpec:
    """One entry of an environment's slot vocabulary.

    Attributes:
        pattern: dotted name; ``#`` matches an item index, ``*`` an attribute name.
        kind: how the value is written and protected.
        label: how the customer names it ("budget", "order number"); ``None`` uses the
            ``*`` segment (``attrs.color`` → "color").
        always_required: the slot can never be omitted (the task means nothing without it).
    """

    pattern: str
    kind: SlotKind
    label: str | None = None
    always_required: bool = False

    def regex(self) -> re.Pattern[str]:
        """The pattern compiled: ``#`` → digits, ``*`` → one identifier segment."""
        body = re.escape(self.pattern).replace("\\#", r"(\d+)").replace("\\*", r"([a-z_]+)")
        return re.compile(f"^{body}$")


def _specs(*rows: tuple[str, SlotKind, str | None, bool]) -> tuple[SlotSpec, ...]:
    return tuple(SlotSpec(pattern=p, kind=k, label=lab, always_required=r) for p, k, lab, r in rows)


_CONSTRAINTS = (
    ("price_max", "money", "budget", False),
    ("rating_min", "rating", "minimum rating", False),
    ("ship_days_max", "days", "delivery time", False),
    ("brand", "brand", "brand", False),
    ("attrs.*", "attr", None, False),
)

#: Environment → its slot vocabulary. Task generators (issue: environments) fill these.
VOCAB: dict[str, tuple[SlotSpec, ...]] = {
    "discovery": _specs(
        ("category", "text", "kind of product", True),
        *_CONSTRAINTS,
        ("k_rec", "count", "number of options", False),
    ),
    "substitution": _specs(
        ("product_title", "text", "product", True),
        ("product_id", "id", "product id", False),
        *_CONSTRAINTS,
        ("k_rec", "count", "number of options", False),
    ),
    "cart": _specs(
        ("items.#.desc", "text", "item", True),
        ("items.#.product_id", "id", "product id", False),
        ("items.#.variant.*", "variant", None, False),
        ("items.#.qty", "quantity", "quantity", False),
        ("items.#.seen", "when", "when I looked at it", False),
    ),
    "returns": _specs(
        ("order_ref", "order_ref", "order number", False),
        ("order_date", "date", "order date", False),
        ("item", "text", "item", True),
        ("reason", "text", "reason", False),
        ("action", "choice", "return or exchange", False),
        ("exchange.*", "variant", None, False),
        # Which of several orders holding the item (returns 2.0, as status's order_hint).
        ("order_hint", "order_ref", "order I mean", False),
    ),
    "status": _specs(
        ("order_ref", "order_ref", "order number", False),
        ("order_date", "date", "order date", False),
        ("item", "text", "item", False),
        ("want", "choice", "thing I need", True),
        # How the customer tells one of several orders with the same item apart ("the most
        # recent one", "the one that came to $45.99"); protected: a typo could change its answer.
        ("order_hint", "order_ref", "order I mean", False),
    ),
    "policy": _specs(
        ("topic", "text", "question", True),
        ("tier", "choice", "membership tier", False),
        ("category", "text", "product category", False),
        ("days", "days", "days since delivery", False),
        ("method", "choice", "return method", False),
        ("order_total", "money", "order total", False),
        ("order_ref", "order_ref", "order number", False),
    ),
    "bundle": _specs(
        ("project", "text", "project", True),
        ("budget", "money", "budget", False),
        ("must.#", "text", "must-have", False),
    ),
    "journey": _specs(
        ("steps.#.verb", "choice", "step", True),
        ("steps.#.goal", "text", "item", True),
        ("steps.#.ref", "order_ref", "order number", False),
        ("steps.#.price_max", "money", "budget", False),
        # A step's optional details, said or left out with p_missing like the
        # sub-environment's own (discovery/substitution constraints, a status order day).
        *((f"steps.#.{p}", k, lab, r) for p, k, lab, r in _CONSTRAINTS[1:]),
        ("steps.#.k_rec", "count", "number of options", False),
        ("steps.#.order_date", "date", "order date", False),
        # What a step's change of mind adds (journey 2.1): one more cart item, bundle kind.
        ("steps.#.items.#.desc", "text", "extra item for my cart", False),
        ("steps.#.must.#", "text", "extra must-have", False),
    ),
}


def _plural(n: float, word: str) -> str:
    return f"{_num(n)} {word}{'' if n == 1 else 's'}"


def _num(value: float) -> str:
    """``4.0`` → ``4``, ``4.5`` → ``4.5``: the way a person writes a count or a rating."""
    return f"{value:g}" if isinstance(value, float) and not value.is_integer() else str(int(value))


@dataclass(frozen=True, kw_only=True)
class Slot:
    """One fact of the goal as the customer would state it.

    Attributes:
        name: dotted path in the environment's vocabulary.
        value: the goal's value (a number for money, rating, days and quantities).
        kind: how it is written and whether noise may touch it.
        label: how the customer names it when asked.
        required: True if it must be in the first message.
    """

    name: str
    value: Any
    kind: SlotKind
    label: str
    required: bool = False

    @property
    def protected(self) -> bool:
        """Whether typo noise must leave the written value byte-for-byte.

        A choice written as a short capital code (a state, "AK") is protected too: one typo
        leaves it unreadable ("A.") or makes it another code (AK → AL, Alabama).
        """
        return self.kind in PROTECTED_KINDS or (
            self.kind == "choice"
            and isinstance(self.value, str)
            and _CODE.fullmatch(self.value) is not None
        )

    def display(self) -> str:
        """The value as the customer writes it; a protected span is exactly this string."""
        v = self.value
        match self.kind:
            case "money":
                return f"${_money(float(v))}"
            case "rating":
                return f"{_num(float(v))} stars"
            case "days":
                return _plural(int(v), "day")
            case "quantity" | "count":
                return str(int(v))
            case _:
                return str(v)


def _money(v: float) -> str:
    return str(int(v)) if v.is_integer() else f"{v:.2f}"


@lru_cache(maxsize=8192)
def spec_for(env: str, name: str) -> tuple[SlotSpec, str | None]:
    """The vocabulary entry ``name`` matches in ``env`` and its ``*`` segment, if any.

    Remembered per (env, name): every rendered message checks its slots against the
    vocabulary, which never changes at run time (errors are raised again, not remembered).
    """
    if env not in VOCAB:
        raise ConfigError(f"env={env!r} is not an environment ({', '.join(ENVS)})")
    for spec in VOCAB[env]:
        match = spec.regex().match(name)
        if match:
            star = next((g for g in match.groups() if not g.isdigit()), None)
            return spec, star
    raise ConfigError(f"slot {name!r} is not in the {env} vocabulary")


def slot_label(name: str) -> str:
    """How a customer names an attribute or variant axis: ``kids_size`` → ``size``.

    Axis names carry a system (``shoe_size_us``, ``apparel_size``) that nobody says aloud.
    """
    words = name.split("_")
    return "size" if "size" in words else " ".join(words)


def make_slot(env: str, name: str, value: Any, *, required: bool = False) -> Slot:
    """A slot of ``env`` with its kind and label taken from the vocabulary.

    Slots are frozen, so one made from a plain ``str`` or ``int`` value is remembered and
    shared (checking and building one was ~8 µs, and generators make the same few slots —
    project names, nouns, budgets — again and again). Other values (floats, where ``-0.0``
    equals ``0.0``; bools; containers) are built each time.

    Raises:
        ConfigError: the name is not in the vocabulary, the value is empty, or a slot the
            vocabulary marks as always required is made optional.
    """
    if type(value) is str or type(value) is int:
        return _remembered_slot(env, name, value, required)
    return _build_slot(env, name, value, required)


def _build_slot(env: str, name: str, value: Any, required: bool) -> Slot:
    """:func:`make_slot`'s checks and construction (the reference its memo is tested against)."""
    spec, star = spec_for(env, name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ConfigError(f"slot {name}={value!r} must have a value")
    if spec.always_required and not required:
        raise ConfigError(f"slot {name} of {env} is always required (got required=False)")
    if spec.kind in {"money", "rating", "days", "quantity", "count"} and (
        isinstance(value, bool) or not isinstance(value, int | float) or value < 0
    ):
        raise ConfigError(f"slot {name}={value!r} must be a number >= 0")
    text = str(value)
    if any(ch in text for ch in "{}") or any("\ue000" <= ch <= "\ue0ff" for ch in text):
        raise ConfigError(f"slot {name}={value!r} contains braces or private-use characters")
    label = spec.label or slot_label(star or name)
    return Slot(name=name, value=value, kind=spec.kind, label=label, required=required)


#: Bounded: budgets and nouns vary, but a few thousand distinct slots cover a long run.
_remembered_slot = lru_cache(maxsize=1 << 14)(_build_slot)


def slots(env: str, values: dict[str, Any], *, required: Iterable[str] = ()) -> tuple[Slot, ...]:
    """Many slots at once: ``values`` maps names to values, ``required`` names the required ones.

    >>> [s.name for s in slots("bundle", {"project": "home office", "budget": 300},
    ...                        required=["project"])]
    ['project', 'budget']
    """
    req = set(required)
    unknown = req - set(values)
    if unknown:
        raise ConfigError(f"required slot {sorted(unknown)[0]!r} has no value")
    return check_slots(env, [make_slot(env, n, v, required=n in req) for n, v in values.items()])


def check_slots(env: str, given: Sequence[Slot]) -> tuple[Slot, ...]:
    """``given`` as a tuple if names are unique and every always-required slot is present."""
    seen: set[str] = set()
    for s in given:
        if s.name in seen:
            raise ConfigError(f"slot {s.name!r} given twice")
        seen.add(s.name)
        spec_for(env, s.name)
    for spec in VOCAB[env]:
        if spec.always_required and "#" not in spec.pattern and spec.pattern not in seen:
            raise ConfigError(f"{env} needs slot {spec.pattern!r}")
    return tuple(given)


def nest(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Dotted names → nested dicts, with all-digit keys turned into lists in index order.

    >>> nest([("items.1.qty", 2), ("items.0.qty", 1), ("brand", "Acme")])
    {'items': [{'qty': 1}, {'qty': 2}], 'brand': 'Acme'}
    """
    root: dict[str, Any] = {}
    for name, value in pairs:
        node = root
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return _listify(root)


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {k: _listify(v) for k, v in node.items()}
    if out and all(k.isdigit() for k in out):
        return [out[k] for k in sorted(out, key=int)]
    return out


#: Small vocabularies for :func:`example_slots` (illustrative values, not catalog data).
_EXAMPLE = {
    "category": ("running shoes", "desk lamps", "coffee grinders", "yoga mats", "backpacks"),
    "brand": ("Acme", "Northwind", "Lumen & Co", "Orbit"),
    "color": ("navy", "black", "forest green", "red"),
    "size": ("S", "M", "XL", "10.5"),
    "desc": ("desk lamp", "phone case", "water bottle", "wool socks", "notebook"),
    "reason": ("it arrived damaged", "it is too small", "I changed my mind"),
    "topic": ("the return window", "restocking fees", "shipping costs", "price matching"),
    "project": ("a home office setup", "a camping trip", "a nursery", "a balcony garden"),
    "when": ("yesterday", "last week", "this morning"),
    "verb": ("buy", "return", "track", "ask about"),
}


def example_slots(env: str, rng: Any, *, n: int = 2) -> tuple[Slot, ...]:
    """A random but valid slot set for ``env``: the shape task generators produce.

    For tests, benchmarks and docs only; task generators build slots from the catalog. Numbers
    carry random cents/digits so each protected value is unlikely to occur anywhere else.
    """

    def pick(key: str) -> str:
        return _EXAMPLE[key][int(rng.integers(len(_EXAMPLE[key])))]

    def money() -> float:
        return float(rng.integers(10, 900)) + float(rng.integers(0, 100)) / 100

    def ref() -> str:
        return f"#W{int(rng.integers(100000, 999999))}"

    cons = {
        "price_max": money(),
        "rating_min": float(rng.choice([3.5, 4.0, 4.5])),
        "ship_days_max": int(rng.integers(2, 9)),
        "brand": pick("brand"),
        "attrs.color": pick("color"),
    }
    values: dict[str, Any]
    match env:
        case "discovery":
            values = {"category": pick("category"), **cons, "k_rec": int(rng.integers(3, 11))}
            req = ["category", "price_max"]
        case "substitution":
            values = {
                "product_title": f"{pick('brand')} {pick('desc')}",
                "product_id": f"B0{int(rng.integers(10**7, 10**8))}",
                **cons,
            }
            req = ["product_title"]
        case "cart":
            values, req = {}, []
            for i in range(n):
                values[f"items.{i}.desc"] = pick("desc")
                values[f"items.{i}.qty"] = int(rng.integers(1, 6))
                values[f"items.{i}.variant.color"] = pick("color")
                values[f"items.{i}.variant.size"] = pick("size")
                values[f"items.{i}.seen"] = pick("when")
                req += [f"items.{i}.desc", f"items.{i}.variant.size"]
        case "returns":
            values = {
                "order_ref": ref(),
                "order_date": f"March {int(rng.integers(1, 29))}",
                "item": pick("desc"),
                "reason": pick("reason"),
                "action": "exchange",
                "exchange.size": pick("size"),
            }
            req = ["item", "order_ref"]
        case "status":
            values = {
                "order_ref": ref(),
                "order_date": "May 2",
                "item": pick("desc"),
                "want": "tracking number",
            }
            req = ["want"]
        case "policy":
            values = {
                "topic": pick("topic"),
                "tier": "Gold",
                "category": pick("category"),
                "days": int(rng.integers(1, 90)),
                "method": "store credit",
                "order_total": money(),
                "order_ref": ref(),
            }
            req = ["topic", "days"]
        case "bundle":
            values = {"project": pick("project"), "budget": money()}
            values.update({f"must.{i}": pick("desc") for i in range(n)})
            req = ["project"]
        case "journey":
            values, req = {}, []
            for i in range(n):
                values[f"steps.{i}.verb"] = pick("verb")
                values[f"steps.{i}.goal"] = pick("desc")
                values[f"steps.{i}.ref"] = ref()
                values[f"steps.{i}.price_max"] = money()
                req += [f"steps.{i}.verb", f"steps.{i}.goal"]
        case _:
            raise ConfigError(f"env={env!r} is not an environment ({', '.join(ENVS)})")
    return slots(env, values, required=req)
