"""The cart oracle's planning: what it knows per item, the next turn's calls, reading results.

Split from :mod:`shopgen.gen.tasks.cart` (whose ``oracle`` drives these): the oracle gathers
(history, one search per item, questions), then gets variants and adds each item, then checks
the cart. It decides with the hidden goal but uses only ids a tool showed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shopgen.gen.tasks.base import Redraw, call, shown_ids
from shopgen.gen.tasks.cart_items import history_matches


@dataclass(kw_only=True)
class Intent:
    """What the oracle knows it must put in the cart for one item, and how far it got."""

    index: int
    desc: str
    history: bool
    target: dict[str, Any]
    seen: str | None = None
    omitted: list[tuple[str, Any]]
    located: bool = False
    retried: bool = False
    variants_known: bool = False
    added: bool = False


def question(desc: str, omitted: list[tuple[str, Any]]) -> str:
    """One question about every detail of an item the customer left out."""
    axes = [n.split(".")[-1].replace("_", " ") for n, _ in omitted if ".variant." in n]
    asks = [f"which {' and which '.join(axes)} would you like"] if axes else []
    if any(n.endswith(".qty") for n, _ in omitted):
        asks.append("how many units do you need")
    return f"For the {desc}: {', and '.join(asks)}?"


def split_intents(
    goal: dict[str, Any], slots: dict[str, dict[str, Any]], changes: dict[str, Any]
) -> tuple[list[Intent], list[Intent]]:
    """The customer's items as first stated, and as they stand once the switch is said."""
    final = goal["items"]
    first, last = [], []
    n = sum(1 for name in slots if name.endswith(".desc"))
    for i in range(n):
        omitted = [
            (name, changes.get(name, s["value"]))
            for name, s in slots.items()
            if name.startswith(f"items.{i}.") and s["omitted"]
        ]
        desc = slots[f"items.{i}.desc"]["value"]
        seen = slots.get(f"items.{i}.seen", {}).get("value")
        first.append(
            Intent(
                index=i, desc=desc, history=seen is not None, target={}, omitted=omitted, seen=seen
            )
        )
    for i, target in enumerate(final):
        desc = changes.get(f"items.{i}.desc", first[i].desc if i < n else target["desc"])
        omitted = first[i].omitted if i < n else []
        seen = first[i].seen if i < n else None
        last.append(
            Intent(
                index=i,
                desc=desc,
                history=target["history"],
                target=target,
                omitted=omitted,
                seen=seen,
            )
        )
    return first, last


def plan_turn(
    intents: list[Intent], state: dict[str, Any], budget: int
) -> list[tuple[tuple[str, dict[str, Any]], Any]]:
    """The next turn's calls (at most ``budget``), each with what it is for."""
    calls: list[tuple[tuple[str, dict[str, Any]], Any]] = []
    if any(it.history for it in intents) and not state["history"]:
        calls.append((call("user_get_visit_history"), "history"))
    for it in intents:
        if it.history:
            continue
        if it.desc not in state["searched"]:
            calls.append((call("catalog_search", query=it.desc), ("search", it.desc)))
        elif not it.located and state["searched"][it.desc] is None and not it.retried:
            calls.append((call("catalog_search", query=it.desc), ("retry", it)))
    for it in intents:
        if it.omitted and it.index not in state["asked"]:
            calls.append((call("ask_user", question=question(it.desc, it.omitted)), ("ask", it)))
    if state["revealed"]:
        for it in intents:
            if it.located and it.target["n_variants"] >= 2 and not it.variants_known:
                calls.append(
                    (call("catalog_get_variants", product_id=it.target["product_id"]), ("var", it))
                )
        for it in intents:
            ready = it.located and (it.target["n_variants"] < 2 or it.variants_known)
            if ready and not it.added and (not it.omitted or it.index in state["answered"]):
                args = {"product_id": it.target["product_id"], "quantity": it.target["quantity"]}
                if it.target["n_variants"] >= 2:
                    args["variant_id"] = it.target["variant_id"]
                calls.append((call("cart_add", **args), ("add", it)))
    return calls[:budget]


def read_results(
    planned: list[tuple[tuple[str, dict[str, Any]], Any]],
    results: list[dict[str, Any]],
    shown: list[list[str]],
    intents: list[Intent],
    state: dict[str, Any],
) -> None:
    """Update what the oracle knows from one turn's results (tool results come in call order).

    ``shown`` holds each result's :func:`~shopgen.gen.tasks.base.shown_ids` (the caller has
    them already: a page is walked once).
    """
    for (_, purpose), result, ids in zip(planned, results, shown, strict=False):
        if purpose == "history":
            state["history"] = result or {"visits": []}
            for it in intents:
                if it.history:
                    it.located = by_time(it, result)
        elif purpose[0] in ("search", "retry"):
            seen = set(ids)
            if purpose[0] == "search":
                state["searched"][purpose[1]] = seen
            for it in intents:
                if not it.history and (
                    (purpose[0] == "search" and it.desc == purpose[1])
                    or (purpose[0] == "retry" and it is purpose[1])
                ):
                    it.located = it.target.get("product_id") in seen
                    if not it.located and purpose[0] == "search":
                        state["searched"][it.desc] = None
                    it.retried = it.retried or purpose[0] == "retry"
        elif purpose[0] == "ask":
            it = purpose[1]
            state["asked"].add(it.index)
            reply = str(result.get("reply", ""))
            if all(str(v) in reply for _, v in it.omitted):
                state["answered"].add(it.index)
        elif purpose[0] == "var":
            it = purpose[1]
            it.variants_known = it.target["variant_id"] in shown_ids(result, "variant_id")
            if not it.variants_known:
                raise Redraw("the wanted variant is not listed")
        elif purpose[0] == "add":
            if "error" in result:
                raise Redraw(f"cart_add refused: {result}")
            purpose[1].added = True


def by_time(it: Intent, result: dict[str, Any]) -> bool:
    """Whether the visit history shows the item's product as the only view its words fit.

    The oracle resolves "the lamp I looked at yesterday" as an agent must: among the views
    of that kind, the one whose time (counted from the tool's ``now``) fits what the customer
    said. Other lamps viewed on other days are the point of the reference (``p_history_clash``).
    """
    if it.seen is None or "now" not in result:
        return False
    now = datetime.fromisoformat(result["now"])
    visits = result.get("visits", [])
    return history_matches(visits, it.desc, it.seen, now) == [it.target.get("product_id")]


def sync(first: list[Intent], last: list[Intent], state: dict[str, Any]) -> None:
    """Carry what was learnt about the first-stated items over to the final ones."""
    for old in first:
        for new in last:
            if new.index == old.index and new.desc == old.desc:
                searched = state["searched"].get(new.desc)
                new.located = bool(searched) and new.target["product_id"] in searched
                if new.history:
                    new.located = bool(state["history"]) and by_time(new, state["history"])
