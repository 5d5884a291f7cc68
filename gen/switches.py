"""Context switches: the customer changes intent mid-conversation (DESIGN §5, ``p_switch``).

With probability ``p_switch(d)`` a task's user script holds one :class:`Switch`: the slots it
changes or adds, and the user turn at which the customer says so. The hidden goal must be the
*final* intent, so the task generator computes it with :func:`apply_switch`, a pure function;
the verifier grades that. The new values come from the generator (it knows which colours,
items or budgets exist in the catalog), passed in as ``options``.

>>> from shopgen.gen.slots import slots
>>> from shopgen.gen.seeding import stream
>>> goal = slots("bundle", {"project": "garden", "budget": 100}, required=["project"])
>>> sw = plan_switch("bundle", goal, p_switch=1.0, T_max=6, rng=stream(0, "doc"),
...                  options={"lower_budget": {"budget": [80]}})
>>> [(s.name, s.value) for s in apply_switch(goal, sw)]
[('project', 'garden'), ('budget', 80)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from shopgen.gen.slots import Slot, check_slots, make_slot, spec_for
from shopgen.schemas.errors import ConfigError

SwitchKind = Literal["swap_item", "change_variant", "add_item", "raise_budget", "lower_budget"]
SWITCH_KINDS: tuple[str, ...] = get_args(SwitchKind)

#: Which kinds of change of mind make sense in each environment.
ENV_SWITCHES: dict[str, tuple[str, ...]] = {
    # A lowered budget replaces a raise that would change no answer (recsearch.settle).
    "discovery": ("change_variant", "raise_budget", "lower_budget"),
    "substitution": ("change_variant", "raise_budget", "lower_budget"),
    "cart": ("swap_item", "change_variant", "add_item"),
    "returns": ("change_variant",),
    "status": (),
    "policy": (),
    # A raise only relaxes a bundle's budget: it never changes which sets are correct.
    "bundle": ("lower_budget", "add_item"),
    "journey": SWITCH_KINDS,  # any of its steps' own (journey 2.1)
}


@dataclass(frozen=True, kw_only=True)
class Switch:
    """One scheduled change of intent, stored in the user script.

    Attributes:
        kind: what changes.
        turn: the user turn (1 = the first reply after the first message) that reveals it.
        changes: slot name → new value; a name not in the goal adds that slot.
    """

    kind: str
    turn: int
    changes: tuple[tuple[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict for the user script."""
        return {"kind": self.kind, "turn": self.turn, "changes": [list(c) for c in self.changes]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Switch:
        """Inverse of :meth:`to_dict` (user scripts are stored as JSON)."""
        return cls(
            kind=data["kind"],
            turn=int(data["turn"]),
            changes=tuple((str(n), v) for n, v in data["changes"]),
        )


def plan_switch(
    env: str,
    slots: Sequence[Slot],
    *,
    p_switch: float,
    T_max: int,
    rng: np.random.Generator,
    options: Mapping[str, Mapping[str, Sequence[Any]]],
) -> Switch | None:
    """Draw whether the customer changes their mind, and how.

    Args:
        env: environment name; only its kinds in :data:`ENV_SWITCHES` are used.
        slots: the initial intent's slots.
        p_switch: probability of a switch (``theta(d).p_switch``).
        T_max: assistant turns; the switch is revealed at a user turn in ``[1, T_max - 1]``
            so the agent always has a turn left to act on it.
        rng: the task's keyed stream for the switch.
        options: switch kind → slot name → candidate new values, from the generator. A kind
            with no candidates (or a value equal to the current one only) is not drawn.

    Returns:
        A :class:`Switch`, or ``None`` when no switch happens (or none is possible).
    """
    if env not in ENV_SWITCHES:
        raise ConfigError(f"env={env!r} is not an environment")
    if not 0.0 <= p_switch <= 1.0:
        raise ConfigError(f"p_switch={p_switch} must be between 0 and 1")
    unknown = set(options) - set(SWITCH_KINDS)
    if unknown:
        raise ConfigError(f"unknown switch kind {sorted(unknown)[0]!r}")
    happens, pick_kind, pick_slot, pick_value, pick_turn = rng.random(5)
    if happens >= p_switch or T_max < 2:
        return None
    current = {s.name: s.value for s in slots}
    usable = {}
    for kind in ENV_SWITCHES[env]:
        cands = {
            name: [v for v in values if current.get(name) != v]
            for name, values in sorted(options.get(kind, {}).items())
        }
        cands = {n: v for n, v in cands.items() if v}
        if cands:
            usable[kind] = cands
    if not usable:
        return None
    kinds = sorted(usable)
    kind = kinds[int(pick_kind * len(kinds))]
    names = sorted(usable[kind])
    name = names[int(pick_slot * len(names))]
    values = usable[kind][name]
    value = values[int(pick_value * len(values))]
    turn = 1 + int(pick_turn * (T_max - 1))
    return Switch(kind=kind, turn=turn, changes=((name, value),))


def apply_switch(
    slots: Sequence[Slot], switch: Switch | None, *, env: str | None = None
) -> tuple[Slot, ...]:
    """The final intent: ``slots`` with the switch's changes applied (pure; inputs untouched).

    A changed slot keeps its kind, label and required flag; an added slot needs ``env`` to be
    typed from the vocabulary, and is required only if the vocabulary always requires it.
    """
    if switch is None:
        return tuple(slots)
    changes = dict(switch.changes)
    out = [
        Slot(
            name=s.name, value=changes.pop(s.name), kind=s.kind, label=s.label, required=s.required
        )
        if s.name in changes
        else s
        for s in slots
    ]
    if changes:
        if env is None:
            raise ConfigError(f"switch adds slot(s) {sorted(changes)}: pass env= to type them")
        out += [
            make_slot(env, n, v, required=spec_for(env, n)[0].always_required)
            for n, v in changes.items()
        ]
        return check_slots(env, out)
    return tuple(out)


def switch_slots(slots: Sequence[Slot], switch: Switch, *, env: str) -> tuple[Slot, ...]:
    """The slots the customer states when revealing ``switch`` (for ``render_user_reply``)."""
    final = {s.name: s for s in apply_switch(slots, switch, env=env)}
    return tuple(final[n] for n, _ in switch.changes)
