"""One episode's mutable state and the records a verifier reads (issue #6 §5).

The state is small and private to its episode: a cart of a few lines, the ids the agent saw
and used, per-turn counters and the error log. It never holds catalog rows or frames (the
catalog is shared read-only through :class:`~shopgen.gen.store.CatalogStore`), which is what
makes ``reset`` O(1) in catalog size and lets 10,000 episodes live in one process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: Error kinds the runtime records, every one as an error result the agent reads: calls the
#: runtime could not run as written (parse to over_budget) and the store's refusals of
#: well-formed requests (not_found to unavailable). :data:`PROTOCOL_KINDS` are the ones that
#: void the episode.
ErrorKind = Literal[
    "parse",  # unreadable call (malformed JSON, several calls in one block, unknown shape)
    "unknown_tool",  # no tool of that name exists
    "not_offered",  # the tool exists but this environment does not offer it
    "bad_arguments",  # missing, extra or ill-typed arguments
    "over_budget",  # beyond B_tool calls in one assistant turn
    "not_found",  # an id that names nothing in the catalog or the episode
    "refused",  # a valid request the store declines (stock, variant required, policy)
    "unavailable",  # the tool needs a resource that is not built (e.g. no search index)
]
#: The protocol failures of DESIGN §9: a call that cannot be read or names a tool the
#: environment does not offer. They void the episode (reward −1), and they alone carry
#: ``protocol: True`` in ``info.errors``; the reward (``shopgen.verifiers.reward``) reads this
#: set, so label and reward cannot disagree. ``bad_arguments`` and ``over_budget`` are
#: recoverable call mistakes: the agent gets an error result and the turn it cost, no more.
PROTOCOL_KINDS: frozenset[str] = frozenset({"parse", "unknown_tool", "not_offered"})

CartKey = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """One error result the agent received."""

    turn: int
    tool: str | None
    kind: str
    message: str

    @property
    def protocol(self) -> bool:
        """Whether the error is a protocol failure, voiding the episode (DESIGN §9)."""
        return self.kind in PROTOCOL_KINDS


@dataclass(slots=True)
class EpisodeState:
    """Everything one episode changes or records; see the module docstring.

    Attributes:
        cart: (product_id, variant_id or None) → quantity, in insertion order.
        recommendations: the product ids of the latest ``recommend_products`` call.
        shown_ids: product ids that appeared in any tool result (or the opening messages).
        shown_variant_ids: variant ids that appeared in any tool result.
        used_ids: product ids the agent passed to a tool, first use first.
        unshown_used_ids: used product ids that no tool had shown at the moment of use
            (the hallucination record of DESIGN §9).
        turns: assistant turns taken.
        calls_per_turn: tool-call items (readable or not) per assistant turn.
        tool_calls: (turn, tool name, arguments) of every call that reached a tool.
        errors: every error result, in order.
        final_text: the visible text of the last assistant message, once done.
        done: whether the episode has ended.
        extra: per-tool records other environments add (returns started, questions asked,
            ``recommended_facts`` of the latest list and ``recommendation_lists``: every
            ``recommend_products`` list in order with its facts, which journey grades per step).
    """

    cart: dict[CartKey, int] = field(default_factory=dict)
    recommendations: list[str] = field(default_factory=list)
    shown_ids: set[str] = field(default_factory=set)
    shown_variant_ids: set[str] = field(default_factory=set)
    used_ids: list[str] = field(default_factory=list)
    unshown_used_ids: list[str] = field(default_factory=list)
    turns: int = 0
    calls_per_turn: list[int] = field(default_factory=list)
    tool_calls: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    final_text: str | None = None
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def note_used(self, product_id: str) -> None:
        """Record that the agent passed ``product_id`` to a tool."""
        if product_id not in self.used_ids:
            self.used_ids.append(product_id)
        if product_id not in self.shown_ids and product_id not in self.unshown_used_ids:
            self.unshown_used_ids.append(product_id)

    def answered_slots(self, before: int | None = None) -> set[str]:
        """Slot names the customer's replies stated, in turns before ``before`` when given.

        What ``ask_user`` recorded per question. Verifiers read it to tell an asked fact from
        a guessed one: an answer heard in the turn of an action, or after it, cannot have
        informed it.
        """
        return {
            name
            for q in self.extra.get("questions", [])
            if before is None or q["turn"] < before
            for name in q.get("answered", [])
        }

    def calls_before(self, before: int | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """The tool calls (``tool_calls``) made in turns before ``before`` (all when None).

        A final answer is graded with what informed it: the calls of the turns before its
        own (``before=turns`` once the episode is done). A message that ends the episode at
        ``T_max`` still runs its calls, but an answer cannot have read their results.
        """
        if before is None:
            return self.tool_calls
        return [call for call in self.tool_calls if call[0] < before]

    def cart_quantity(self, product_id: str) -> int:
        """Units of ``product_id`` in the cart over all its variants."""
        return sum(q for (pid, _), q in self.cart.items() if pid == product_id)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready view of the state: what ``info`` carries when no verifier is set."""
        return {
            "cart": [
                {"product_id": pid, "variant_id": vid, "quantity": q}
                for (pid, vid), q in self.cart.items()
            ],
            "recommendations": list(self.recommendations),
            "shown_ids": sorted(self.shown_ids),
            "used_ids": list(self.used_ids),
            "unshown_used_ids": list(self.unshown_used_ids),
            "turns": self.turns,
            "calls_per_turn": list(self.calls_per_turn),
            "errors": [
                {
                    "turn": e.turn,
                    "tool": e.tool,
                    "kind": e.kind,
                    "protocol": e.protocol,
                    "message": e.message,
                }
                for e in self.errors
            ],
            "final_text": self.final_text,
            "done": self.done,
            **({"extra": self.extra} if self.extra else {}),
        }
