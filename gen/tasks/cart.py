"""cart — "put these things in my cart": the seed workflow of the wufus-CART-8B model.

Customer wants:
    ``cart_items(d)`` distinct products in the cart, each in a quantity and, for products sold
    in several variants, in one variant (colour, size…). Most items are described by brand, a
    distinctive title word and a noun ("Bryant Palette yarn") — words that single the product
    out of the whole catalog; some (``p_history_ref(d)``) only by a noun and when the customer
    looked at it ("the yarn I looked at yesterday"), which the visit history resolves: with
    ``p_history_clash(d)`` other products of that kind were viewed at other times, so only the
    time said picks the view (counted from the ``now`` the history tool shows). Variant
    values and quantities may be left out of the first message (``p_missing``) and must be asked.
Tools offered:
    the seed six — catalog_search, catalog_get_variants, cart_add, cart_view,
    user_get_visit_history, ask_user — plus catalog_get_product, cart_remove and
    cart_update_quantity (to fix a cart after a change of mind).
Hidden goal:
    ``{"cart": [{product_id, variant_id, quantity}], "items": [...]}``: the FINAL cart after any
    switch (variant_id is the only variant's id for single-variant products, None for products
    without variants); ``items`` keeps per-item details the oracle decides with.
Reward and is_correct:
    ``verifiers.cart`` compares the final cart with the goal unit by unit over (product,
    variant): exact precision/recall as fractions, r_task = 2·F1 − 1 (−1 for an empty cart);
    correct iff the cart equals the goal exactly and every left-out detail was asked
    (``verifiers.cart.details_to_ask``; otherwise r_task is at most 0).
Difficulty axes used:
    T_max, B_tool (turn and call budgets), p_missing (omitted variants/quantities), p_noise,
    top_k and eps_rank (what search shows), p_oos (sibling variants and look-alike products out
    of stock), p_switch (change_variant, swap_item, add_item), and the schedules cart_items,
    p_variant, p_quantity_gt1, p_history_ref, p_history_clash.
Episode end:
    the first assistant message without a tool call, or T_max.
Version history:
    1.0 — first version.
    1.1 — the oracle retries a search that did not show an item with the customer's words
          again (the degraded page differs per call) instead of the product's hidden title:
          it typed title words no tool had shown (10 of 180 tasks at d 4–12 on 3k products,
          p_noise = 0). Redraws at d = 5 on 100k products: 17 per 300 tasks, 16 before.
          A change of mind names the item it is about (``env.user.naming.naming_the_item``): "the
          item should be X" was said alike for an item swapped for X and for X added, and
          "the color should be Red" fitted any item sold in colours, so no agent could tell
          which was meant. Now "X instead of the <item>", "the extra item should be X as
          well", "Red for the <item>". The heuristic agent's solve rate at d = 0/4/8/12 went
          from 96/71/29/17% to 100/92/42/29% (5k products, 24 tasks each).
          An answer stating several items' quantities or variant values names the item of
          each ("Navy for the wool socks, Red for the desk lamp"): "Which colours?" got
          "the color is Navy and the color is Red" (12 / 24 / 30 of 30 tasks at d = 6 / 9 / 12
          on 5k products held two items whose omitted values differ). Rows are unchanged.
    1.2 — the customer answers a variant question asked by the axis's noun or by its options
          (``env.user``): "Which format would you like for the picture book?" (the variants
          show ``book_format``), "Which inseam?", "What length?" and "For the jeans, would you
          like Gray, Olive or White?" got "I'm not sure, it doesn't matter to me", so the
          agent picked a variant blind. Of 199 omitted variant values in 90 tasks at d =
          6/9/12 (5k products), "Which <axis noun> …?" missed 23 and the options question 173;
          now 9 and 15 (a value changed by a change of mind, and one-letter sizes "S, M or
          L?", which name no axis). A variant is also asked for by its label's head word
          ("flavor" of "coffee flavor"). Rows are unchanged; replies change.
          A question naming an item falls back to that item's weak words ("which option?")
          when its specific words matched only other items' slots (journey 2.6).
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
          A history item's kind is also viewed at other times (``p_history_clash(d)``, 0.05 at
          d = 0, 0.69 at 8, 0.9 at 12; one or two views at times another :data:`SEEN_WHEN`
          phrase names and the item's does not fit, ``cart_items.seen_fits``): every other
          view in the history was of another category, so the noun alone found the item and
          the time said never mattered. Of 28 / 70 / 133 history items in 60 tasks at d =
          4/8/12 (5k products) 5 / 53 / 117 now share their kind with other views, and taking
          the first view holding the noun picks the right one for 25 / 43 / 54. Two views of
          a kind the time said cannot tell apart are redrawn. ``user_get_visit_history``
          shows ``now`` (noon of the episode's day), which "yesterday" counts from, and the
          system prompt says to take the view from the time the customer names; the oracle
          picks the view whose time fits the phrase from the tool's result. Rows change.
          A pack or tablet count is asked for by its pack or bottle ("Which pack size?", "How
          many tablets per bottle?", "Which bottle size?"): its head word "count" is also a
          quantity word, so those got "I don't know" or the number of units bought, read as
          the count (7 of 160 tasks at d = 4/8/10/12 on 5k products hold such an item).
          An item swapped in or added by a change of mind is named by its own words: "How
          many knife sets and how many video games?" named the game alone (the knife set's
          words were not known as the item's) and got the game's quantity only. 15 of 60
          tasks at d = 4/8/12 on 5k products swap or add an item, 5 with a value to ask.
          One item's value also names its item when the question named several items or
          none: "Which colour for the cocktail table and the swimsuit?" got "Black.", the
          swimsuit's, which read as the table's too (25 of 60 tasks at d = 4/8/12 on 5k
          products hold two items or more and one omitted colour).
          A furniture finish (Oak, Walnut) and a makeup shade are asked for as a colour too:
          "Which colour would you like for the cocktail table?" got no answer (4 of 60 tasks
          at d = 4/8/12 on 5k products omit a finish or shade).
          One-letter sizes listed as options ("For the tank top: S, M or L?") are answered:
          two or more capital size codes are a list of sizes (13 one-letter sizes omitted in
          12 of 60 tasks at d = 4/8/12 on 5k products; such a question got no answer).
    1.3 — the customer answers "What size do you want?" ("How big?", "How long should it be?", "How
          much should it hold?") of a variant axis a shopper calls a size though it is not named
          one: a capacity, a cable's or wiper's length, a tablet's storage, a dumbbell's weight, an
          inseam, a pack count. It got "I'm not sure", and beside a shirt only the shirt's size was
          said (6 of 78 cart tasks at d = 0–12, 6 per d, on 5k products held such an axis
          unanswered; now none). Replies only; tasks are drawn as before.
          An item added by a change of mind is in the customer's list once said: "What items do you
          need?", "Can you list everything again?" and "What do you need?" left it out (the last two
          got "I'm not sure" outright), in 14 of the 14 tasks of 78 (d = 0–12, 6 per d, 5k products)
          that add one; now in none of 13. Its quantity, which the script holds from the start, is
          said only after the item: "How many of each?" before the change of mind got "… and the
          quantity is 1" of an item not yet mentioned (14 of 14; now 0 of 13).
          Asked whether there is anything ("Is that all?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope says so
          (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not sure",
          and such a question no longer gets the request's own item for an answer. Of 39 tasks at
          d = 0–12 on 5k products, "Does the item need to be compatible with anything?" echoed the
          item on 39, now none; "Is that all?" at the first turn now gets "that's all" on 6 (every
          fact said).
          "When did you look at them?" names the item of each time ("three days ago for the throw,
          last week for the dog toy"): it said the times alone, as it did before for quantities (5
          of 5 tasks with two or more history items, d = 0–12, 3 per d, 5k products). A yes-or-no
          question about the item gets no echo of it.
          Also, a visit-history time is said as the item it picks out ("the one I mean is the
          throw I looked at three days ago"): its label, "when I looked at it", is the only one
          of the vocabulary that is no noun phrase in a reply's "the <label> is <value>", and
          replies said "the when I looked at it is two days ago for the body wash" (21 of 52
          tasks at d = 0–12, 4 per d, 5k products, asked five questions about the times or the
          whole request; now none). Neither the oracle nor the heuristic asks it: replies only.
          Also, a variant value proposed for the item a question names, or for the only one, that
          is not the customer's is rejected stating theirs ("Is the Olive one OK for the wool
          socks?": "No, that's not right: the color is Navy."; 25 of 25 tasks with a colour, d =
          0–12, 3 per d, 5k products), where it got "I'm not sure" (discovery 1.7's proposals).
          Replies only.
    1.4 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, a proposal may open with "can", "could", "should" or "shall" (discovery 1.8's):
          "Could it be the black one?" is rejected stating the colour on 3 of 46 tasks whose
          item is another colour (d = 2–12, 5k products), where it got "I'm not sure".
          Also, asked whether to add something to the cart ("Should I add it to your cart?",
          "Do you want me to add these to your cart?", "Shall I add the black one to your
          cart?"), the customer says what they want added: each item in scope's description,
          variants, quantity and when it was seen (those the question names, or all), where they
          said "I'm not sure" (34 of 34 tasks asked first, d = 2–12, 5k products, for each of
          those and "Shall I add the <item> to your cart?"; none now); a variant of the one item
          named that is not theirs is rejected stating theirs (13 of 13). Replies only.
    1.5 — a product, variant or order id holding a NUL names nothing (a fixed-width id array
          compared "ID" and "ID" + NUL equal): NUL-padded copies of one product counted as k
          distinct real recommendations and as products the stock check did not know. A
          padded id added to the cart is unknown. Every task id changes with the version.
          Also, the stock list never singles out a wanted variant: another variant keeps stock
          for the item's quantity (an item is drawn only so, and p_oos leaves one such
          sibling). Before, it was the only one on 60 of 513 variant lines at d = 4–12 on 5k
          products (the catalog's stock or p_oos), and a left-out variant needed no question.
    1.6 — a left-out detail must be asked (``verifiers.cart.details_to_ask``: the omitted
          quantity and variant slots of the items the first message described, less what a
          change of mind states): a cart built without hearing them is a guess and earns at
          most 0, never correct. One unit is the likeliest quantity, so a policy that never
          asked, took one unit and a random in-stock variant was correct on 35 of 188 tasks
          that left something out (24 of 41 that left out quantities only; +0.11 mean reward,
          +0.61 on those), d = 0–12, 5k products; now 0 of 83 (−0.21). Rows are unchanged
          but for the version (so every task id changes).
    1.7 — the customer answers a proposed count ("Just one of each?", "One or more?": 36 of
          36 asks got "I'm not sure") and a variant asked as the item's kind ("What kind of
          electric toothbrush?": 63 of 64), as discovery 1.10 tells. An open question ("Any
          other details?") still gets none of the left-out details: they are asked for by
          name. Replies only; every task id changes with the version.
          Also, asked openly for more with facts left unsaid, the customer asks what the agent
          wants to know (discovery 1.10), where they said "I don't know".
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
    1.8 — a question joining several asks ("What colour for the tumbler, and what size?")
          answers what the item it names lacks from the item that has it, as journey 3.2
          tells (``env.user.matching._asks_several``), where the customer said "I'm not sure". Replies
          only; every task id changes with the version.
          Also, the system prompt states the turn and call budget, as discovery 1.11's does: at
          d = 0–1 the oracle uses every turn, and the prompt's seven steps need more.
          Also, a left-out detail counts as asked only when heard before its item's cart
          line last changed (``extra["cart_turns"]``, as bundle 1.8 orders its answers): a
          line guessed and asked about after was graded as asked.
    1.9 — asked about an item a change of mind replaced ("How many copy paper packs?" after
          "brush heads instead of the copy paper"), the customer names the item that replaced
          it ("4 for the brush heads"): "the quantity is 4" read as the old item's on 23 of 23
          swaps (5k, d = 4–12). Replies only; every task id changes with the version.
          Also, a proposed count ("Do you want just one of the desk lamps?", "Is one
          enough?") gets the quantity: 335 of 336 asks got "I don't know" (a customer audit).
          And a joined question about one item ("Which lounge set do you mean? When did you
          look at it?") no longer takes another item's answer (94 of 336 asks).
    1.10 — as discovery 1.13: "How many options would you like?" and "How many days ago
          did it arrive?" got every item's quantity by "how many" (65 of 65 tasks, 5k, d =
          0–12); "I don't know" now. Replies only; every task id changes with the version.
    1.11 — as discovery 1.14: "Do you only need one of the lamps?", "One lamp, or more?",
          "Would one lamp do, or should I add more?" get the quantity, "What would you like me
          to add to your cart?", "What should I put in your cart?" and "What did you need
          again?" the items (each "I don't know" on 512 of 518 and 225 of 225 asks). Replies
          only; every task id changes with the version.
    1.12 — as discovery 1.15, after a second bank of agents' questions written apart from the customer (216: six
          wordings of each of 36 facts, asked of 280 tasks, 5k, d = 0–12): "What
          should I put in your shopping cart?" and "What are you hoping to have in your
          basket?" get the items (40 of 40 got "I don't know"), "Do you remember around what
          day you came across this product?" when it was looked at (18 of 18). Replies only;
          every task id changes with the version.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import cart_items, p_history_ref, p_quantity_gt1, p_variant
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.switches import Switch, plan_switch
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick, shown_ids
from shopgen.gen.tasks.cart_items import (
    SEEN_WHEN,
    CartIndex,
    Item,
    cart_index,
    describe,
    draw_item,
    visit_history,
    words,
)
from shopgen.gen.tasks.cart_plan import plan_turn, read_results, split_intents, sync
from shopgen.schemas.task import TaskRow

__all__ = [
    "SEEN_WHEN",
    "CartIndex",
    "Item",
    "cart_index",
    "describe",
    "generate",
    "oracle",
    "words",
]


def _quantity(d: int, rng: np.random.Generator) -> int:
    return int(rng.integers(2, 6)) if rng.random() < p_quantity_gt1(d) else 1


def _item_slots(i: int, it: Item, wants_variant: bool) -> list[Slot]:
    out = [make_slot("cart", f"items.{i}.desc", it.desc, required=True)]
    if it.seen is not None:
        out.append(make_slot("cart", f"items.{i}.seen", it.seen, required=True))
    if wants_variant and it.variant is not None:
        for axis, value in sorted(it.variant["attributes"].items()):
            out.append(make_slot("cart", f"items.{i}.variant.{axis}", str(value)))
    out.append(make_slot("cart", f"items.{i}.qty", it.quantity))
    return out


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw the items, how each is described, the history, out-of-stock look-alikes, a switch."""
    index = cart_index(ctx)
    items: list[Item] = []
    wants: list[bool] = []
    for _ in range(cart_items(d)):
        needs_variant = bool(rng.random() < p_variant(d))
        it = draw_item(
            ctx,
            index,
            rng,
            items,
            kind="variant" if needs_variant else "plain",
            quantity=_quantity(d, rng),
        )
        if rng.random() < p_history_ref(d):
            it.seen = pick(rng, sorted(SEEN_WHEN))
            it.desc = it.noun
        items.append(it)
        wants.append(needs_variant)
    slots = [s for i, it in enumerate(items) for s in _item_slots(i, it, wants[i])]
    switch, extra = _switch(ctx, index, items, slots, axes, rng)
    final = _apply(ctx, items, switch, extra)
    oos = _out_of_stock(ctx, index, items, final, axes, rng)
    episode = {
        "user_id": pick(rng, ctx.user_ids),
        "today": ctx.today.isoformat(),
        "visit_history": visit_history(ctx, index, items, d, rng),
        "out_of_stock": oos,
    }
    facts = {}
    if switch is not None and switch.kind == "add_item":
        facts[f"items.{len(items)}.qty"] = {"value": 1, "kind": "quantity", "label": "quantity"}
    return Draft(slots=tuple(slots), goal=_goal(final), episode=episode, switch=switch, facts=facts)


def _switch(
    ctx: GenContext,
    index: CartIndex,
    items: list[Item],
    slots: list[Slot],
    axes: Theta,
    rng: np.random.Generator,
) -> tuple[Switch | None, dict[str, Item]]:
    """A change of mind revealed after the first turn, with the items it would bring in."""
    if rng.random() >= float(axes.p_switch):
        return None, {}
    names = {s.name for s in slots}
    options: dict[str, dict[str, list[Any]]] = {}
    extra: dict[str, Item] = {}
    for i, it in enumerate(items):
        for axis in sorted((it.variant or {}).get("attributes", {})):
            name = f"items.{i}.variant.{axis}"
            values = _other_values(ctx, it, axis) if name in names else []
            if values:
                options.setdefault("change_variant", {})[name] = values
        if it.seen is None and it.product["n_variants"] == 0:
            try:
                alt = draw_item(ctx, index, rng, items, kind="plain", quantity=it.quantity)
            except Redraw:
                continue
            if alt.product["n_variants"] == 0:
                extra[f"items.{i}.desc"] = alt
                options.setdefault("swap_item", {})[f"items.{i}.desc"] = [alt.desc]
    try:
        new = draw_item(ctx, index, rng, items, kind="plain", quantity=1)
        name = f"items.{len(items)}.desc"
        extra[name] = new
        options["add_item"] = {name: [new.desc]}
    except Redraw:
        pass
    switch = plan_switch("cart", slots, p_switch=1.0, T_max=axes.T_max, rng=rng, options=options)
    # Revealed after the first turn (the gathering turn), so every oracle acts on it.
    return (replace(switch, turn=1) if switch else None), extra


def _other_values(ctx: GenContext, it: Item, axis: str) -> list[str]:
    """Values of ``axis`` the item's product has in stock with its other axes unchanged."""
    current = it.variant["attributes"]
    out = []
    variants = ctx.store.variants_of(it.product_id)
    combos = [tuple(sorted(v["attributes"].items())) for v in variants]
    for v, c in zip(variants, combos, strict=True):
        a = v["attributes"]
        same_rest = all(a.get(k) == x for k, x in current.items() if k != axis)
        unique = combos.count(c) == 1 and set(a) == set(current)
        if same_rest and unique and a.get(axis) != current[axis] and v["stock_qty"] >= it.quantity:
            out.append(str(a[axis]))
    return sorted(set(out))


def _apply(
    ctx: GenContext, items: list[Item], switch: Switch | None, extra: dict[str, Item]
) -> list[Item]:
    """The final items once the switch is applied (the goal's source)."""
    final = [replace(it) for it in items]
    if switch is None:
        return final
    for name, value in switch.changes:
        parts = name.split(".")
        i = int(parts[1])
        if switch.kind == "change_variant":
            it = final[i]
            want = {**it.variant["attributes"], parts[3]: value}
            it.variant = next(
                v
                for v in ctx.store.variants_of(it.product_id)
                if {k: str(x) for k, x in v["attributes"].items()} == want
            )
        elif switch.kind == "swap_item":
            alt = extra[name]
            final[i] = replace(alt, quantity=final[i].quantity)
        else:
            final.append(extra[name])
    return final


def _out_of_stock(
    ctx: GenContext,
    index: CartIndex,
    items: list[Item],
    final: list[Item],
    axes: Theta,
    rng: np.random.Generator,
) -> list[str]:
    """Sibling variants and look-alike products with no stock in this episode (p_oos).

    One sibling of each wanted variant keeps stock for its quantity (``pick_variant`` drew
    it so): were the wanted one the only variant left, the stock list would say which it
    is, and a variant the customer left out would need no question.
    """
    keep_rows = np.array(sorted({it.product["row"] for it in [*items, *final]}))
    keep_variants = {it.variant["variant_id"] for it in [*items, *final] if it.variant}
    oos: list[str] = []
    for it in final:
        if rng.random() >= float(axes.p_oos):
            continue
        if it.product["n_variants"] >= 2:
            others = [
                v["variant_id"]
                for v in ctx.store.variants_of(it.product_id)
                if v["variant_id"] not in keep_variants and v["stock_qty"] >= it.quantity
            ]
            k = min(len(others) - 1, int(rng.integers(1, 3)))
            if k > 0:
                oos += [others[j] for j in sorted(rng.choice(len(others), k, replace=False))]
        rows = index.category_rows[it.product["category_id"]]
        alike = rows[np.isin(rows, keep_rows, invert=True)]
        k = min(alike.size, int(rng.integers(1, 3)))
        oos += [index.ids[alike[j]] for j in sorted(rng.choice(alike.size, k, replace=False))]
    return sorted(set(oos))


def _goal(final: list[Item]) -> dict[str, Any]:
    cart = [
        {
            "product_id": it.product_id,
            "variant_id": it.variant["variant_id"] if it.variant else None,
            "quantity": it.quantity,
        }
        for it in final
    ]
    details = [
        {
            "product_id": it.product_id,
            "variant_id": it.variant["variant_id"] if it.variant else None,
            "quantity": it.quantity,
            "n_variants": int(it.product["n_variants"]),
            "desc": it.desc,
            "title": it.product["title"],
            "history": it.seen is not None,
        }
        for it in final
    ]
    return {"cart": cart, "items": details}


# --- Oracle --------------------------------------------------------------------------------


def oracle(task: TaskRow) -> Oracle:
    """Gather (history, one search per item, questions), then variants, adds, a check, a reply."""
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    budget, t_max = task.axis("B_tool"), task.axis("T_max")
    slots = {s["name"]: s for s in script["slots"] if s["name"].startswith("items.")}
    switch = script.get("switch")
    changes = dict(switch["changes"]) if switch else {}
    first, last = split_intents(goal, slots, changes)
    state: dict[str, Any] = {
        "history": False,
        "searched": {},
        "asked": set(),
        "answered": set(),
        "revealed": switch is None,
        "shown": set(),
    }
    intents = last if switch is None else first
    turns = 0
    while not all(it.added for it in last):
        planned = plan_turn(intents, state, budget)
        if not planned:
            raise Redraw("the oracle cannot make progress (search never showed a target)")
        adds_left = sum(not it.added for it in intents) - sum(
            p[1][0] == "add" for p in planned if isinstance(p[1], tuple)
        )
        if adds_left == 0 and intents is last and len(planned) < budget:
            planned.append((call("cart_view"), "view"))
        results = yield [c for c, _ in planned]
        turns += 1
        shown = [shown_ids(r) for r in results]
        for ids in shown:
            state["shown"].update(ids)
        read_results(planned, results, shown, intents, state)
        if not state["revealed"]:
            if not any("customer" in r or "reply" in r for r in results):
                raise Redraw("the change of mind was not said after the first turn")
            state["revealed"] = True
            sync(first, last, state)
            intents = last
    if not any(p[1] == "view" for p in planned) and turns + 2 <= t_max:
        yield [call("cart_view")]
    yield (
        "Your cart is ready: "
        + "; ".join(f"{it.target['quantity']} x {it.target['title']}" for it in last)
        + "."
    )
