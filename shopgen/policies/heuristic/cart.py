"""Heuristic agent for ``cart``: read the items, find each, ask what is missing, add, check.

The agent follows the system prompt's order (``templates/cart/system.j2``) with the calls of
independent items sent together: the visit history (when an item is "the one I looked at
…") and one search per item first; then each found product's variants and one question per
item about what the customer left out (quantity, an axis the variants differ on); then the
adds; then ``cart_view`` and a fix of any line that did not land. Calls beyond the per-turn
budget come back as ``over_budget`` errors naming the limit; the agent learns it and sends
the rest next turn. A product is picked by its words, typos allowed (:mod:`.cart_text`);
when no card holds every word, the search is repeated with the words the cards spell.

The customer may change their mind: a new variant value goes to the item that sells it, a
new item ("the item should be …") is added with one unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from shopgen.gen.tasks.base import Call, Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.cart_text import (
    SEEN_WHEN,
    Wanted,
    axes_unsaid,
    corrected,
    match_score,
    parse_request,
    read_change,
    reply_quantity,
    variant_score,
)
from shopgen.policies.heuristic.common import cards, near, reply_text
from shopgen.policies.heuristic.compose import change_body, split_change

_LIMIT = re.compile(r"at most (\d+) tool calls? per turn")
#: Searches per item at most (the first, one with the cards' spelling, one more page).
MAX_SEARCHES = 3
#: Questions per item at most.
MAX_ASKS = 2
#: A card holding this share of the item's words is taken without searching again.
GOOD_MATCH = 0.999
_CHANGE = re.compile(
    r"\bthe\s+([\w' -]+?)\s+(?:should\s+be|is\s+now|→|is)\s+(.+?)(?=,\s*the\s|\s+and\s+the\s|[.?!]?$)",
    re.I,
)
_LISTED = re.compile(
    r"\bitem\s+i?s?\s*(.+?)(?:,|\s+and)\s+the\s+(?:quantity|qty)\s+i?s?\s*(\d+)", re.I
)


@dataclass
class Line:
    """One wanted item and how far the agent got with it.

    Attributes:
        want: what the customer said about it.
        card: the product chosen (a search card or a visit-history entry), None until found.
        score: how well the card's title matches the item's words.
        titles: every title the item's searches showed (their spelling corrects typos).
        searches: searches sent for it.
        variants: the product's variants once looked up (None: not yet).
        replies: the customer's answers about it.
        asked: questions sent about it.
        in_cart: the (product_id, variant_id, quantity) it was added as, None until then.
        adds: cart_add calls sent for it.
    """

    want: Wanted
    card: dict[str, Any] | None = None
    score: float = 0.0
    titles: list[str] = field(default_factory=list)
    searches: int = 0
    variants: list[dict[str, Any]] | None = None
    replies: list[str] = field(default_factory=list)
    asked: int = 0
    in_cart: tuple[str, str | None, int] | None = None
    adds: int = 0

    @property
    def said(self) -> str:
        """Everything the customer said about the item's variant."""
        return " ".join([self.want.said, *self.replies])

    @property
    def values(self) -> list[str]:
        """Attribute values of the item's variants (written exactly by the customer)."""
        return sorted(
            {str(x) for v in self.variants or [] for x in (v.get("attributes") or {}).values()}
        )

    def qty(self) -> int | None:
        """The quantity the customer gave (first message, else an answer), None if unsaid."""
        if self.want.qty is not None:
            return self.want.qty
        for reply in self.replies:
            q = reply_quantity(reply, self.values)
            if q is not None:
                return q
        return None

    def unsaid(self) -> list[str]:
        """Variant axes the customer has not named a value of (empty until variants known)."""
        return axes_unsaid(self.variants or [], self.said + " " + " ".join(self.want.changes))

    def name(self) -> str:
        """The item's words as the product's title spells them (for questions)."""
        if self.card is None:
            return self.want.desc
        title = self.card.get("title", "")
        return corrected(self.want.desc, [title]) if self.want.desc else title

    def choice(self) -> tuple[str, str | None, int] | None:
        """The cart line to add: product, best-fitting variant, quantity (None if not ready)."""
        if self.card is None or self.variants is None:
            return None
        qty = self.qty() or 1
        variant = None
        if len(self.variants) > 1:
            variant = max(
                self.variants,
                key=lambda v: (
                    *variant_score(v, self.said, self.want.changes),
                    int(v.get("stock_qty", 0)) >= qty,
                ),
            )["variant_id"]
        return self.card["product_id"], variant, qty

    def ready(self) -> bool:
        """Whether everything needed to add it is known (or was asked for as often as allowed)."""
        if self.choice() is None:
            return False
        missing = self.qty() is None or bool(self.unsaid())
        return not missing or self.asked >= MAX_ASKS


@dataclass
class Cart:
    """The agent's state: the items, the visit history, the learned budget, the last check."""

    lines: list[Line]
    history: list[dict[str, Any]] | None = None
    budget: int | None = None
    viewed: bool = False
    cart: list[dict[str, Any]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str | None]] = field(default_factory=list)

    def plan(self) -> list[tuple[Call, tuple[str, Line | None]]]:
        """This turn's calls, most urgent first, each with what it is for."""
        calls: list[tuple[Call, tuple[str, Line | None]]] = []
        if self.history is None and any(ln.want.when for ln in self.lines):
            calls.append((call("user_get_visit_history"), ("history", None)))
        for ln in self.lines:
            if self._wants_search(ln):
                calls.append((call("catalog_search", query=self._query(ln)), ("search", ln)))
        for ln in self.lines:
            if ln.card is not None and ln.variants is None and not self._wants_search(ln):
                calls.append(
                    (
                        call("catalog_get_variants", product_id=ln.card["product_id"]),
                        ("variants", ln),
                    )
                )
        for ln in self.lines:
            question = self._question(ln)
            if question:
                calls.append((call("ask_user", question=question), ("ask", ln)))
        calls += [
            (
                call("cart_remove", product_id=pid, **({"variant_id": vid} if vid else {})),
                ("drop", None),
            )
            for pid, vid in self.dropped
        ]
        calls += self._adds()
        if not calls and not self.viewed and any(ln.in_cart for ln in self.lines):
            calls.append((call("cart_view"), ("view", None)))
        return calls

    def _wants_search(self, ln: Line) -> bool:
        """Whether the item needs (another) search: not found yet, or found only loosely."""
        if ln.want.when and (self.history is None or ln.card is not None):
            return False
        if ln.in_cart is not None or ln.searches >= MAX_SEARCHES:
            return False
        return ln.card is None or (ln.score < GOOD_MATCH and ln.searches < 2)

    def _query(self, ln: Line) -> str:
        """The item's words; after a first page, spelled as the shown titles spell them."""
        if ln.searches == 0 or not ln.titles:
            return ln.want.desc or ln.want.product_id or "product"
        return corrected(ln.want.desc, ln.titles)

    def _question(self, ln: Line) -> str | None:
        """A question about what the customer left out of the item, or None."""
        if ln.card is None or ln.asked >= MAX_ASKS or ln.in_cart is not None:
            return None
        if ln.asked and ln.variants is None:
            return None  # ask again only once the variants show what is still missing
        asks = []
        if ln.qty() is None:
            asks.append("how many units do you need")
        if ln.variants is not None:
            axes = [a.replace("_", " ") for a in ln.unsaid()]
        else:
            axes = [] if ln.said.strip() or ln.asked else ["color and size"]
        if axes:
            asks.append(f"which {' and which '.join(axes)} would you like")
        if not asks or (ln.qty() is not None and ln.variants is None):
            return None
        return f"For the {ln.name()}: {', and '.join(asks)}?"

    def _adds(self) -> list[tuple[Call, tuple[str, Line | None]]]:
        """cart_add (and cart_remove of a line a change of mind replaced) for ready items."""
        out: list[tuple[Call, tuple[str, Line | None]]] = []
        for ln in self.lines:
            choice = ln.choice()
            if not ln.ready() or choice is None or choice == ln.in_cart or ln.adds >= 3:
                continue
            if ln.in_cart is not None:
                pid, vid, _ = ln.in_cart
                args = {"product_id": pid} | ({"variant_id": vid} if vid else {})
                out.append((call("cart_remove", **args), ("remove", ln)))
            pid, vid, qty = choice
            args = {"product_id": pid, "quantity": qty} | ({"variant_id": vid} if vid else {})
            out.append((call("cart_add", **args), ("add", ln)))
        return out

    def read(self, purpose: tuple[str, Line | None], result: dict[str, Any]) -> None:
        """Update the state from one tool result."""
        kind, ln = purpose
        if kind == "history":
            self.history = [
                e for e in result.get("visits", result.get("history", [])) if isinstance(e, dict)
            ]
            if not self.history:
                self.history = _entries(result)
            now = _time(result.get("now"))
            for line in self.lines:
                if line.want.when:
                    _from_history(line, self.history, now)
        elif kind == "search" and ln is not None:
            ln.searches += 1
            shown = cards([result])
            ln.titles += [c.get("title", "") for c in shown]
            _pick(ln, shown)
        elif kind == "variants" and ln is not None:
            ln.variants = [v for v in result.get("variants", []) if isinstance(v, dict)]
            self._apply_pending()
        elif kind == "ask" and ln is not None:
            ln.asked += 1
            ln.replies.append(str(result.get("reply", "")))
        elif kind == "add" and ln is not None:
            ln.adds += 1
            if "error" not in result:
                ln.in_cart = ln.choice()
                self.viewed = False
            elif "variant" in str(result.get("message", "")) and ln.variants == []:
                ln.variants = None  # refused for a missing variant: look them up again
        elif kind == "remove" and ln is not None and "error" not in result:
            ln.in_cart = None
        elif kind == "drop":
            self.dropped = [d for d in self.dropped if d[0] != result.get("product_id")]
        elif kind == "view":
            self.viewed = True
            self.cart = [x for x in result.get("lines", []) if isinstance(x, dict)]
            held = {(x.get("product_id"), x.get("variant_id")) for x in self.cart}
            for line in self.lines:
                landed = line.in_cart and any(p == line.in_cart[0] for p, _ in held)
                if line.in_cart and not landed:
                    line.in_cart = None  # did not land: add it again

    def change(self, text: str) -> None:
        """Act on a change of mind: a new variant value, or a new item with one unit."""
        body = change_body(text)
        pairs = _CHANGE.findall(body)
        if not pairs:
            value = re.sub(r"^\s*make\s+it\s+", "", body, flags=re.I).strip(" .!")
            pairs = [("", value)]
        for label, value in pairs:
            kind, new, item = read_change(value.strip(" .!?"))
            named = self._line_named(item) if item else None
            if kind == "swap" and named is not None:
                self._swap(named, new)
            elif kind in ("add", "swap") or (label and near(label.strip().lower(), "item")):
                self.lines.append(Line(want=Wanted(desc=new, qty=1)))
            elif kind == "variant" and named is not None:
                named.want.changes.append(new)
            elif not self._change_variant(new):
                self.pending.append(new)

    def _line_named(self, words: str) -> Line | None:
        """The item the customer names by ``words`` (its description or product title)."""
        scored = [
            (max(match_score(words, ln.want.desc), match_score(words, ln.name())), i)
            for i, ln in enumerate(self.lines)
        ]
        best = max(scored, default=(0.0, -1))
        return self.lines[best[1]] if best[0] >= 0.5 else None

    def _swap(self, old: Line, desc: str) -> None:
        """Put the item ``desc`` in place of ``old`` (same quantity), out of the cart if added."""
        if old.in_cart is not None:
            self.dropped.append(old.in_cart[:2])
        qty = old.want.qty if old.want.qty is not None else old.qty()
        self.lines[self.lines.index(old)] = Line(want=Wanted(desc=desc, qty=qty))

    def _change_variant(self, value: str) -> bool:
        """Give ``value`` to the item whose variants sell it (other than its current one)."""
        for ln in self.lines:
            if value in ln.values:
                current = ln.choice()
                ln.want.changes.append(value)
                if current is None or ln.choice() != current:
                    return True
                ln.want.changes.pop()
        for ln in self.lines:
            if value in ln.values:
                ln.want.changes.append(value)
                return True
        return False

    def _apply_pending(self) -> None:
        """Apply waiting variant changes once a product's variants are known."""
        self.pending = [v for v in self.pending if not self._change_variant(v)]

    def summary(self) -> str:
        """The final message: what the cart holds now."""
        got = [ln for ln in self.lines if ln.in_cart and ln.card]
        if not got:
            return "I could not add anything to your cart."
        return (
            "Your cart now holds: "
            + "; ".join(
                f"{ln.in_cart[2]} x {ln.card.get('title', '')}"
                for ln in got
                if ln.in_cart and ln.card
            )
            + "."
        )


def _entries(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Visit-history entries of a result, whatever key holds the list."""
    for value in result.values():
        if (
            isinstance(value, list)
            and value
            and isinstance(value[0], dict)
            and "product_id" in value[0]
        ):
            return value
    return []


def _pick(ln: Line, shown: list[dict[str, Any]]) -> None:
    """Keep the best card for the item: the customer's id, else the best title match."""
    for c in shown:
        if ln.want.product_id and c.get("product_id") == ln.want.product_id:
            ln.card, ln.score = c, 1.0
            return
    for c in shown:
        score = match_score(ln.want.desc, f"{c.get('brand', '')} {c.get('title', '')}")
        if int(c.get("stock_qty", 1)) <= 0:
            score -= 0.01  # an out-of-stock look-alike loses a tie
        if score > ln.score:
            if ln.card is not None and ln.card.get("product_id") != c.get("product_id"):
                ln.variants = None  # another product: its variants are still to look up
            ln.card, ln.score = c, score


def _from_history(ln: Line, history: list[dict[str, Any]], now: datetime | None) -> None:
    """The visit the item names: its words in the title, viewed on the day the customer says.

    Several views may be of the item's kind ("the lamp I looked at yesterday" among three
    lamps): of the views whose titles hold its words, the one whose day (counted back from
    the tool's ``now``) is nearest the day the customer's phrase names wins. Without a
    ``now``, the newest view stands in for this morning.
    """
    if not history:
        return
    times = [_time(e.get("viewed_at")) for e in history]
    if now is None:
        latest = max((t for t in times if t is not None), default=None)
        now = latest + timedelta(hours=SEEN_WHEN["this morning"]) if latest else None

    def words(i: int) -> float:
        return match_score(ln.want.desc, str(history[i].get("title", "")))

    def when(i: int) -> float:
        t = times[i]
        if now is None or t is None or ln.want.when is None:
            return 0.0
        return -abs((now.date() - t.date()).days - SEEN_WHEN[ln.want.when] // 24)

    kind = [i for i in range(len(history)) if words(i) >= 0.5]
    if kind:
        best = max(kind, key=lambda i: (when(i), words(i)))
        ln.card, ln.score = history[best], 1.0


def _time(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def listed_items(reply: str) -> list[Wanted]:
    """Items a customer lists when asked for them ("the item is X, the quantity is 3 …")."""
    return [Wanted(desc=d.strip(" ,."), qty=int(q)) for d, q in _LISTED.findall(reply)]


def heuristic(task: PublicTask) -> Oracle:
    """Play a cart task from the public view only."""
    wants = parse_request(task.user)
    state = Cart(lines=[Line(want=w) for w in wants])
    if not wants:
        reply = reply_text(
            (yield [call("ask_user", question="Which items do you want, and how many of each?")])
        )
        state.lines = [Line(want=w) for w in listed_items(reply)]
    while True:
        planned = state.plan()
        if not planned:
            break
        batch = planned if state.budget is None else planned[: state.budget]
        results = yield [c for c, _ in batch]
        tool = []
        for r in results:
            if "customer" in r:
                state.change(str(r["customer"]))
                continue
            change, rest = split_change(r["reply"]) if isinstance(r.get("reply"), str) else ("", "")
            if change:
                state.change(change)
                r = {**r, "reply": rest}
            tool.append(r)
        for (_, purpose), result in zip(batch, tool, strict=False):
            limit = _LIMIT.search(str(result.get("message", "")))
            if result.get("error") == "over_budget" and limit:
                state.budget = int(limit.group(1))
                continue
            state.read(purpose, result)
    yield state.summary()
