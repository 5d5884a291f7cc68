"""returns — "I want to send this back (or swap it)".

Customer wants:
    to return, or exchange for another size or colour, one item of one of their last
    H_orders(d) orders. They name the item by its noun and the order by its number or, more
    often as d grows (``p_indirect_order_ref``), by the day they placed it (or not at all);
    they give a reason, and know how they would send it back. With probability
    ``p_order_clash(d)`` (2.0) the customer is drawn so that several of their recent orders
    hold the same kind of item (up to ``CLASH_TRIES`` customers, preferring three or more);
    then the day or a detail of status's kinds (``order_hint_level(d)``:
    ``shopgen.gen.tasks.order_hints.order_hint`` — "the cheapest one", "the second most recent
    one", "the one I paid for next-day delivery", another item in it, by category at high d)
    tells the order apart, said or given when asked (slot ``order_hint``, dropped with
    p_missing). Reasoning it needs: relate the detail to the listed orders (rank totals or
    dates, read categories, open each candidate's details for the shipping), check the line's
    eligibility with the tool near the window edge, ask for what was left out. Some items sit within two days of the edge of their return
    window (p_return_edge(d)); some cannot be returned at all (final sale, perishable, opened
    hygiene items). The store's policy engine decides, in the tools and in the goal alike.
Tools offered:
    orders_list, order_get_details, catalog_get_product, catalog_get_variants,
    return_check_eligibility, return_start, exchange_start, policy_search, ask_user.
Hidden goal:
    ``{order_id, line_no, product_id, variant_id, action, eligible, reason, method,
    exchange, refusal, days_since_delivery, window_days, item_ambiguous, hint_kind,
    holder_ids}``. ``eligible`` is
    ``engine.return_eligibility`` on the line's facts; ``refusal`` names why not
    (``window``, ``final_sale``, ``perishable``, ``personalised``, ``hygiene``); ``exchange``
    maps variant axes to the values the new variant must have (after any switch).
Reward and is_correct:
    ``verifiers.returns``. Eligible: exactly one return/exchange started (``state.extra``
    ``returns``/``exchanges``) on the right line with the right action, reason code and
    method, or a new variant with the stated values. Not eligible: nothing started, the
    target line checked (and no line of an order the customer cannot mean), and the final
    message says it is not eligible and names the one true reason; an eligible start is
    correct only when the facts left for the agent (``start_facts_to_ask``: the method, and
    the reason, action or exchange values the first message left out) were asked before it
    (the start's record holds its turn). Eligible:
    r_task = 2·(parts right / 4) − 1 over line, action, reason and method (or variant), at
    most 0 when more than one was started or a left-out fact was guessed, not asked, −1 when
    nothing was started or the line is wrong. Not
    eligible: 1 when told right after checking, 0 when told right without checking, −0.5
    when told wrong, −1 for silence or a started return. correct iff every part is right.
Difficulty axes used:
    H_orders (orders to tell apart), p_missing (order day, reason, action, exchange values
    left out), p_switch (the customer changes the exchange size or colour), p_noise, T_max,
    B_tool, and the schedules p_indirect_order_ref(d), p_return_edge(d), p_order_clash(d),
    order_hint_level(d) and p_item_paraphrase(d) (through status's details).
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    2.0 — same-item lines across several orders (p_order_clash), told apart by a detail of
    status's kinds (slot ``order_hint``); the oracle asks for it and opens every candidate's
    details when only they tell; orders named by number rarer at high d.
    2.1 — honest refusals as assistants write them are right (a false-negative pass; not
    comparable with 2.0): "you can't return it", "we can't accept a return", "isn't
    returnable", "non-returnable", "I'm not able to process a return" and curly apostrophes
    ("can’t be returned") say the item is not eligible; "outside our return period", "the
    return period has ended" name the window; the window named as still open ("even though
    you're within the return window, opened hygiene items can't be returned") no longer
    counts as a second reason; "customized", "engraved", "sanitary" name their reasons.
    2.2 — a started return is graded on the request's four parts (line, action, reason,
    method or new variant); "only one started" was a fifth part a single start always got
    right, so a return on the right line with the reason and the method both wrong scored
    r_task 0.2 and reward ≈ 0.3 (the efficiency term included): skipping the questions
    paid. It is now worth 0, and a second start caps r_task at 0 (red-team audit).
    2.3 — a window told as over is a refusal (a false-negative pass): "it's too late to return
    this item", "the return period is over", "the return window has expired/closed/ended"
    say the item cannot be returned ("not too late", "is not over yet" do not); such honest
    refusals scored −0.5.
    2.4 — a refusal counts as checked only when every eligibility check (or refused start)
    was about an order the customer's words can mean (``holder_ids``, or the order named by
    number): "check every line of every order, then say the return window has passed" was
    correct on 20% of tasks without finding the item. Order ids are read as the tools read
    them (blanks around them stripped).
    2.5 — the oracle names the line's variant only once a tool showed it (order details, the
    product's variants): it passed the variant id orders_list does not show (4 of 36 tasks
    at d 3, 8, 12 on 5k products). The tools find the line by order and product alone
    unless the order holds the product in several variants; no draw needed it (redraws
    unchanged over 520 tasks at d 0–12). The customer also knows "by mail", "drop-off" and
    "pickup" as questions about the return method (policy 2.1). Asked what they want instead
    ("What would you like to exchange it for?", "… instead?", "which variant?", "replacement"),
    the customer names the replacement's values: the first was answered with the action alone
    and "instead" with "I don't know", so only the axis's own name ("which storage?") got the
    value the exchange is graded on (46 of 300 tasks at d = 0–12 on 5k products exchange).
    "The most recent one" and "the second most recent one" rank orders by the day placed,
    the only time the tools show (status 2.3): at d = 12, 1 of 40 tasks called the target
    "the second most recent one" of two orders listed as placed the same day.
    2.6 — the replacement's variant is asked for by its label's head word as in cart 1.2: "Which
          format?" got "it doesn't matter to me" for an exchange's book format (3 of 3 such slots in
          40 tasks, d = 1–12, 5k products).
          When the episode's day (fixed by the line's delivery and its age) is after the catalog's,
          whose end the store's statuses describe, only delivered and cancelled orders are listed:
          an order on its way then was listed "in_transit" with an expected date weeks or months
          before the episode's day (10 of 40 tasks at d 1–12 on 5k products, 21 orders; a
          delivered one beside it "delivered 90 days ago").
          A middle rank among same-item orders says it counts those orders ("the second most recent
          of my orders with that item", status 2.4): 1 of 6 tasks with that detail at d = 6–12
          could be read as the second most recent order of all, which held the item too.
          A refusal relaying the tool's explanation of a faulty item past its window ("… can always
          be returned, even final-sale, perishable, personalised or opened hygiene items. … outside
          the window") names the window only: it named all five reasons, wrong in 27 of 61 window
          refusals at d = 0–12 on 5k products (84 of 84 refusals relayed so are right now). Also
          read: a limit as the reason ("can only be returned within 15 days", "more than 90 days
          ago", "deadline"), "sold as final", an engraving or "made just for you", an item "been
          opened" (not "hasn't been opened"), "opened cosmetics", health reasons; and as refusals
          "I cannot start a return", "a return isn't possible", "doesn't qualify for a return".
          The item's noun shows in every listed title that holds it (order tools cut titles at 60
          characters): it was cut from the target's ("… Birthstone Crystal Hoo…" for earrings) in
          14 of 156 tasks at d = 0–12 on 5k products, and from an order a rank hint counts in 11 of
          51 with same-item orders; such draws are redrawn, as status's are, and same-item clashes
          are drawn among nouns every holder's listed title shows (same-item tasks at d = 9–12:
          67 of 100, 69 before).
          The customer knows whether their hygiene item was opened (fact ``condition``, asked by
          "opened", "unused", "sealed", "used", …): the tools decide by it, and "Has the item been
          opened?" got "Sure: the item is baby bottles", "Is it unused?" "I'm not sure".
          A line holds the named item when its own noun ends with it: "coffee" counted a "… Coffee
          Maker …" order among the coffee orders a rank hint counts (1 of 82 same-item tasks at
          d = 4–12 on 5k products). A first message that leaves the reason out says the item "has
          to go back", not "it's not right": 4 of the 6 such messages in 195 tasks were about an
          item the customer had only changed their mind on, and the reason is graded.
          The customer names the return method asked in everyday words ("Would you like to mail
          it, drop it off, or have it picked up?", "How will you return it?", "How would you like
          to return it?"): each got "I'm not sure, it doesn't matter to me" in 42 of 42 eligible
          tasks at d = 0–12 on 5k products, and the method is a graded part. "Do you want your
          money back?" is answered with the action. The tasks are unchanged.
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
          The order meant among same-item orders is one of the customer's delivered lines of
          the shared item drawn uniformly, not the first (audit of distributional shortcuts;
          same-item tasks are not comparable with the 2.6 ones before): it was the oldest
          order holding the item in 76–88% of them at d = 4–12 on 5k products, against 42–48%
          for a blind pick, so "the oldest one" named the line without the customer's detail.
          Now the oldest in 56% / 28% at d = 4 / 12 and the newest in 40% / 51% (chance 48% /
          42%): the customer's day, which anchors what orders exist yet, leaves a mild lean.
          A first message without the action says "send it back", not "send back it" ("Can I
          send back it?", "May I send back it, please?"): 12 of 105 first messages at d = 0–12
          on 5k products. Goals are unchanged.
    2.7 — the store's rule file 2 (policy 2.3) decides some lines differently: Premium members'
          unopened large items other than electronics have their own return window (30 or 45
          days; they had the large items' 14–30), as do their jewelry priced $500.00 or more
          and unopened electronics priced $1,000.00 or more; opened large items (Premium) and
          opened jewelry priced $500.00 or more have their own restocking fee. 2 of 260 tasks at
          d = 0–12 on 5k products change (a window of 14 days becomes 30).
          Also, an exchange's replacement is asked for by its axis's everyday words as cart 1.3's variants
          are ("What size do you want?" of a tumbler exchanged for another capacity got "I'm not
          sure"; 1 of 78 tasks at d = 0–12 on 5k products). Replies only.
          Asked whether there is anything ("Is that all?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope says so
          (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not sure",
          and such a question no longer gets the request's own item for an answer. The echo was 39
          of 39 tasks at d = 0–12 on 5k products; now none.
          A yes-or-no question about the item ("Is the item unopened?") no longer gets "Yes, the
          item is <the item>" (the bare noun matched the item's label), which reads as a yes: 34 of
          39 tasks at d = 0–12 on 5k products; now "I don't know" unless the item's condition is a
          fact of the task, which is then said.
          Also, a replacement's value proposed for an exchange that is not the customer's is
          rejected stating theirs ("Is the Olive one OK?": "… the color is Pink."; 2 of 2
          exchanges with a colour among 39 tasks, d = 0–12, 3 per d, 5k products), where it got
          "I'm not sure". Replies only.
          Also, policy_search's documents say which of two return rules applies where the
          engine's order decides (policy 2.3's: "Electronics can be returned within 15 days of
          delivery. This applies even when the item is a large item."); no returns task among 260
          at d = 0–12 on 5k products hinged on one. Tasks and grading unchanged.
    2.8 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, a proposal may open with "can", "could", "should" or "shall" (discovery 1.8's):
          "Could it be the black one?" is rejected stating the exchange's colour on 5 of 50
          tasks (d = 2–12, 5k products), where it got "I'm not sure". Replies only.
          Also, a personalised item is refused as personalised (rule file 3 puts the narrower rule
          before final sale, policy 2.4): personalised jewelry is also final-sale, and the
          personalised rule refused no line. 5 of 1,300 tasks at d = 0–12 on 5k products change
          (refusal ``final_sale`` → ``personalised``); no other task. The return tools show the
          new fee on opened items only for opened hygiene items, which are refused anyway.
    2.9 — a start is correct only when the facts the customer left for the agent were asked
          in a turn before it: the return method (never said unasked), and the reason, action
          or exchange values the first message left out; a right guess earns at most 0, and
          so does one asked about after the start. Without asking, "drop
          off" was correct on 39 of 78 eligible returns (reward +0.71) and "mail" on 37
          (+0.56), d = 0–12 on 5k products; now on none (0.00 and −0.09). Also, an order or
          product id holding a NUL names nothing (discovery 1.9). Every task id changes.
    2.10 — the customer answers "What happened?", "Is it defective?" (the reason, 30 of 30
          asks got "I'm not sure"), "What would you like to do with it?", "How would you like
          me to resolve this?" (the action, 28 of 28), "How do you plan to return the item?"
          (the method, which got the item), "What do you want it replaced with?" and tells
          an order by its day when asked "Which order is it?" or "Do you have an order
          number?" (22 of 52 asks got "I don't know"), as discovery 1.10 tells. Replies only;
          every task id changes with the version.
          Also, a refusal is read as an assistant writes it (``verifiers.text``). Honest ones
          graded wrong now count: a refusal without "not eligible" ("we don't accept returns
          on this item", "returns aren't accepted", "non-refundable", "I can't help with a
          return": 30 of 90 refusals at d = 0–12 on 5k products), the window told as the rule
          ("our policy only allows returns within 15 days of delivery", and "returns are
          accepted within 30 days" with the days since delivery: 60 of 60), and reasons in
          other words ("food items", "the seal has been broken", "opened shampoo can't be
          returned", "custom", "your name printed on it"). A hedged refusal no longer passes:
          "it may not be eligible, possibly because the return window has closed" did on 60
          of 90 window tasks.
          Also, asked openly for more with facts left unsaid, the customer asks what the agent
          wants to know (discovery 1.10), where they said "I don't know".
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
    2.11 — the system prompt states the turn and call budget, as discovery 1.11's does: at
          d = 0–1 the oracle uses every turn (22 of 24 tasks, 5k products). And it no longer
          makes return_check_eligibility a step: return_start refuses a line that is not
          eligible and says why. Following the prompt (order look-ups, the check, the
          question, the start) took 5–6 turns of a d = 0 task's 4, and was cut off before
          the start (r_task −1). Every task id changes with the version.
    2.12 — a refusal is read in more honest wordings (an audit: 418 refusals, 5k, d = 0–12):
          "Return not possible" and "Return denied" headings (418 of 418 failed), "the window
          to return it expired", "past its return window", "exceeds our 90-day return limit",
          "no longer within the return period" (356 each), a reason beside "your return
          window is still open" or "doesn't apply" (62); none fail now. A reason negated ("it
          wasn't a final-sale item") or guessed ("probably because the window has passed") is
          no reason, and "outside our return policy" or "past the point where we can help"
          names none: the last two passed on every window refusal, a guessed true reason on
          every refusal. Every task id changes with the version.
          Also (a customer audit, 156 tasks): "What condition is the item in?", asked of a
          customer holding no condition, gets "I don't know", not the item (131); "Are you
          looking for a replacement or a refund?" gets the action alone, not the item too
          (156); a bare "method" asks the return method only when no other is named.
    2.13 — "Can you help me find the order? Anything like a date or the total?" gets the
          detail telling the order apart ("I'm not sure" from 110 of 156 customers holding
          one, a third customer audit, 5k, d = 0–12), and "What condition is the item in?" no
          longer says the item back besides the condition (25 of 25). Asks answered wrongly
          or with "I don't know" in the audit's bank: 174 of 5,148 before, 39 now. Every
          task id changes with the version.
          Also, the item's title is no refusal reason: the goal holds it (``title``) and the
          reader blanks it, whole or any comma-separated part, before reading reasons, and
          "window" no longer matches "Windows". 1,473 of 100k titles hold a reason's words
          ("Windows 11 Home" 1,035, "Under-Bed Clearance" 271, "Engraved", "Custom Fit"
          167): a refusal quoting such a title read a second, wrong reason.
    2.14 — a refusal said as nothing going back ("it can't go back", "there's no return
          option", "no return possible") is a refusal. A bank of 130 refusals written apart
          from the readers: honest ones read wrong 5 of 100 before, none now; of 30 hedged,
          wrong or reasonless ones 1 reads right ("it's likely that … isn't eligible, since
          personalised items usually can't be returned"). Every task id changes with the
          version.
    2.15 — as discovery 1.14: "How would you prefer to return it?" gets the return method (215
          of 215 asks got "I'm not sure"), "Why do you want to send it back?" the reason alone
          (the method too, 213 of 215), "What did you order?" the item (the order number, 196
          of 440), "When did you make this purchase?" the order's day, "Do you happen to have
          the order number handy?" no longer the reason too. Replies only; every task id
          changes with the version.
    2.16 — as discovery 1.15, after a second bank of agents' questions written apart from the customer (216: six
          wordings of each of 36 facts, asked of 280 tasks, 5k, d = 0–12): "What
          are you looking to send back?" and "Which of your purchases is this return about?"
          get the item, "How would you like to get the item to us?" and "What's the most
          convenient way for you to return it?" the method (40 and 47 of 47 got "I don't
          know"); "Why are you returning the item?" the reason alone (the method too, 47 of
          47); "the number on your order confirmation", "roughly when you ordered it", "about how
          long ago did you buy this?" and "the
          current state of the product" what they ask. Replies only; every task id changes
          with the version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta
from shopgen.gen.policy import Decision, DecisionMemo
from shopgen.gen.schedules import p_indirect_order_ref, p_order_clash, p_return_edge
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.switches import apply_switch, plan_switch
from shopgen.gen.tasks.base import (
    Draft,
    GenContext,
    Oracle,
    Redraw,
    call,
    chunked,
    per_root,
    pick,
    shown_ids,
    spoken_list,
)
from shopgen.gen.tasks.order_hints import DETAIL_KINDS, LISTED_CHARS, order_hint
from shopgen.schemas.errors import DatasetError
from shopgen.schemas.task import TaskRow

#: How a customer says each reason code.
REASON_WORDS: dict[str, str] = {
    "changed_mind": "I changed my mind",
    "defective": "it is defective and stopped working",
    "wrong_item": "they sent me the wrong item",
    "damaged_in_transit": "it arrived damaged in the box",
}
#: How a customer says each return method.
METHOD_WORDS: dict[str, str] = {
    "mail": "by mail",
    "drop_off": "at a drop-off point",
    "pickup": "with a scheduled pickup",
}
#: Returnability rule → the refusal it means (window refusals come from the window rule).
REFUSALS: dict[str, str] = {
    "returnable_final_sale": "final_sale",
    "returnable_perishable": "perishable",
    "returnable_personalised": "personalised",
    "returnable_hygiene_opened": "hygiene",
}
#: What the final message says for each refusal.
REFUSAL_TEXT: dict[str, str] = {
    "window": "its return window has passed",
    "final_sale": "it is a final-sale item",
    "perishable": "perishable items cannot be taken back",
    "personalised": "personalised items cannot be taken back",
    "hygiene": "it is a hygiene item that has been opened",
}
#: Words that ask whether a hygiene item was opened (besides ``env.user``'s "condition",
#: "opened", "used"): a hygiene item opened cannot go back.
CONDITION_WORDS = ("unused", "sealed", "packaging", "open it", "opened it", "been opened")
P_EXCHANGE = 0.4
P_FAULTY = 0.4
#: Customers to try for one whose recent orders hold the same kind of item twice or more.
CLASH_TRIES = 24


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a customer, a delivered line, its age against its window, and how it is named."""
    n_orders = int(axes.H_orders)
    indirect = rng.random() < p_indirect_order_ref(d)
    clash = indirect and n_orders > 1 and rng.random() < p_order_clash(d)
    drawn = _clashing_line(ctx, n_orders, rng) if clash else None
    book = _order_book(ctx)
    if drawn is None:
        user_id = pick(rng, ctx.customers_with_orders(n_orders))
        lo, hi = book.spans.get(user_id, (0, 0))
        row = pick(rng, [r for r in range(lo, hi) if book.returnable[r]])
        first, end = book.line_spans[row]
        j = pick(rng, [j for j, ok in enumerate(book.line_active[first:end]) if ok])
    else:
        user_id, row, j = drawn
    # Up to the visibility check (which most plain draws fail), the draw reads columns and
    # remembered decisions only; records are built for the draws that pass, and the tools
    # then reuse them (and the decisions: the memo is the engine's, shared with them).
    order_id, at = book.order_ids[row], book.line_spans[row][0] + j
    category = book.line_categories[at]
    facts = _line_facts(
        ctx, category, book.line_prices[at], book.line_quantities[at], book.tiers[user_id], rng
    )
    memo = ctx.engine.memo
    window = memo.evaluate("return_window", facts)
    if not isinstance(window, Decision):
        raise Redraw("no return window rule applies")
    days = _days(int(window.value), d, rng)
    today = _today_for(book.delivered_at[row], days)
    facts["days_since_delivery"] = days
    visible = _visible(book, user_id, today, n_orders, ctx.root.today)
    if row not in visible:
        raise Redraw("the target order is not among the last H_orders orders")
    verdict = memo.return_eligibility(facts)
    if not isinstance(verdict, Decision):
        raise Redraw("the policy gives no verdict")
    noun = book.line_nouns[at]
    if noun is None:
        raise Redraw(f"no taxonomy noun in title {book.line_titles[at]!r}")
    holders = _holders(book, visible, row, noun)
    ambiguous = len(holders) > 1
    order = ctx.store.order(order_id)
    line = ctx.store.lines_of(order_id)[j]

    slots: list[Slot] = [make_slot("returns", "item", noun, required=True)]
    kind: str | None = None
    if indirect:
        kind, words = ("day", "")
        if ambiguous:
            records = [order, *(ctx.store.order(book.order_ids[r]) for r in holders[1:])]
            kind, words = order_hint(ctx, order, records, noun, d, rng)
        if kind == "day":
            day = order["placed_at"].date()
            slots.append(make_slot("returns", "order_date", f"{day:%B} {day.day}"))
        else:
            slots.append(make_slot("returns", "order_hint", words))
    else:
        slots.append(make_slot("returns", "order_ref", order["order_id"], required=True))
    slots.append(make_slot("returns", "reason", REASON_WORDS[facts["reason"]]))
    exchange = _exchange_options(ctx, line, rng) if rng.random() < P_EXCHANGE else None
    action = "exchange" if exchange else "return"
    slots.append(make_slot("returns", "action", action))
    switch = None
    if exchange:
        axis, value, others = exchange
        slots.append(make_slot("returns", f"exchange.{axis}", value))
        if verdict.value:
            switch = plan_switch(
                "returns",
                slots,
                p_switch=float(axes.p_switch),
                T_max=int(axes.T_max),
                rng=rng,
                options={"change_variant": {f"exchange.{axis}": others}},
            )
    final = {s.name: s.value for s in apply_switch(slots, switch, env="returns")}
    method = _method(memo, facts, rng)
    goal = {
        "order_id": order["order_id"],
        "line_no": int(line["line_no"]),
        "product_id": line["product_id"],
        "variant_id": line["variant_id"],
        "action": action,
        "eligible": bool(verdict.value),
        "reason": facts["reason"],
        "method": method,
        "exchange": {k.split(".", 1)[1]: v for k, v in final.items() if k.startswith("exchange.")},
        "refusal": None if verdict.value else _refusal(memo, facts),
        # The item's title: the refusal's reader reads no reason in it (verifiers.returns).
        "title": ctx.store.product(line["product_id"])["title"],
        "days_since_delivery": days,
        "window_days": window.value,
        "item_ambiguous": ambiguous,
        "hint_kind": kind if ambiguous else None,
        "holder_ids": [book.order_ids[r] for r in holders] if ambiguous else [],
    }
    episode = {
        "user_id": user_id,
        "order_ids": [book.order_ids[r] for r in visible],
        "today": today.isoformat(),
        "item_condition": {line["product_id"]: facts["item_condition"]},
    }
    if exchange:  # what the verifier needs to check a replacement (it has no catalog)
        episode["variant_attrs"] = {
            v["variant_id"]: v["attributes"] for v in ctx.store.variants_of(line["product_id"])
        }
    said_method = {"value": METHOD_WORDS[method], "kind": "choice", "label": "return method"}
    known = {"method": {**said_method, "keywords": ["send it back", "ship it back"]}}
    if "hygiene" in facts["tags"]:  # whether it was opened decides; the customer holds it
        known["condition"] = {
            "value": facts["item_condition"],
            "kind": "choice",
            "label": "item condition",
            "keywords": list(CONDITION_WORDS),
        }
    return Draft(slots=tuple(slots), goal=goal, episode=episode, switch=switch, facts=known)


def _line_facts(
    ctx: GenContext,
    category: str,
    price: float,
    quantity: int,
    tier: str,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """The facts the return tools will read for this line (condition and reason drawn here)."""
    department, tags = ctx.store.category_facts.get(category, ("", ()))
    condition = "opened" if "hygiene" in tags and rng.random() < 0.5 else "unopened"
    faulty = ("defective", "wrong_item", "damaged_in_transit")
    reason = pick(rng, faulty) if rng.random() < P_FAULTY else "changed_mind"
    return {
        "category": category,
        "department": department,
        "tags": list(tags),
        "tier": tier,
        "item_condition": condition,
        "reason": reason,
        "price": float(price),
        "quantity": int(quantity),
    }


def _days(window: int, d: int, rng: np.random.Generator) -> int:
    """Days since delivery: within ±2 of the window edge with p_return_edge(d), else clear of it."""
    if rng.random() < p_return_edge(d):
        return max(0, window + int(rng.integers(-2, 3)))
    if rng.random() < 0.75:
        return int(rng.integers(1, max(2, window - 2)))
    return window + int(rng.integers(3, 31))


def _today_for(delivered_at: datetime, days: int) -> date:
    """The episode day on which the tools count exactly ``days`` since delivery.

    The tools count whole days from delivery to the end of ``today``; that count grows by one
    per calendar day, so one evaluation at the delivery day fixes the offset.
    """
    at_delivery = (
        datetime.combine(delivered_at.date() + timedelta(days=1), datetime.min.time())
        - delivered_at
    ).days
    return delivered_at.date() + timedelta(days=days - at_delivery)


def _visible(book: _OrderBook, user_id: str, today: date, n: int, world_day: date) -> list[int]:
    """Rows of the last ``n`` of the customer's orders whose status still holds on ``today``.

    Every event of such an order happened by ``today``. The store's statuses are those at the
    end of ``world_day`` (the catalog's today); when the episode's day is later, an order still
    on its way then would have arrived since (it was listed "in_transit" with an expected date
    weeks before the episode's day), so only delivered and cancelled orders show.
    """
    end = datetime.combine(today + timedelta(days=1), datetime.min.time())
    lo, hi = book.spans.get(user_id, (0, 0))
    last, settled = book.last_event, book.settled
    later = today > world_day
    return [r for r in range(lo, hi) if last[r] < end and (settled[r] or not later)][-n:]


@dataclass(frozen=True)
class _OrderBook:
    """The orders table as Python columns, for draws that reject most of what they read.

    Rows are those of ``store.order_table`` (by customer, then time), so a customer's rows
    are their ``orders_of`` list in order; line columns are aligned with ``store.line_table``
    (by order, then line number), so an order's lines are its ``lines_of`` list in order.
    Built once per context (~0.3 s at 100k orders).

    Attributes:
        spans: customer → their rows ``[lo, hi)``.
        order_ids: each row's order id.
        returnable: whether the order was delivered (status and day), so a line may go back.
        settled: whether the order's status is final (delivered or cancelled).
        delivered_at: each row's delivery time (None when not delivered).
        last_event: each row's latest event time (placed, shipped, delivered, cancelled).
        tiers: customer → membership tier.
        line_spans: each row's lines ``[lo, hi)``.
        line_active, line_prices, line_quantities: each line's status is ``active``, its
            unit price and quantity.
        line_categories: each line's product's category (``store.line_product_list``).
        line_titles: each line's product title lower-cased (``store.line_product_list``; ""
            for a product the catalog lacks), where the customer's noun for an item is
            looked for.
        line_nouns: each line's noun (``ctx.line_nouns``), what the customer calls the item.
    """

    spans: dict[str, tuple[int, int]]
    order_ids: list[str]
    returnable: list[bool]
    settled: list[bool]
    delivered_at: list[datetime | None]
    last_event: list[datetime]
    tiers: dict[str, str]
    line_spans: list[tuple[int, int]]
    line_active: list[bool]
    line_prices: list[float]
    line_quantities: list[int]
    line_categories: list[str | None]
    line_titles: list[str]
    line_nouns: list[str | None]


def _order_book(ctx: GenContext) -> _OrderBook:
    return per_root(ctx, _build_order_book)


def _build_order_book(ctx: GenContext) -> _OrderBook:
    orders = ctx.store.order_table
    events = ("placed_at", "shipped_at", "delivered_at", "cancelled_at")
    runs = (
        orders.select("user_id")
        .with_row_index("row")
        .group_by("user_id", maintain_order=True)
        .agg(lo=pl.col("row").first(), n=pl.len())
    )
    users = ctx.store.read("users", columns=["user_id", "tier"])
    lines = ctx.store.line_table
    line_runs = (
        lines.select("order_id")
        .with_row_index("at")
        .group_by("order_id")
        .agg(lo=pl.col("at").first(), hi=pl.col("at").last() + 1)
    )
    spans = orders.select("order_id").join(
        line_runs, on="order_id", how="left", maintain_order="left"
    )
    return _OrderBook(
        spans={u: (lo, lo + n) for u, lo, n in runs.iter_rows()},
        order_ids=ctx.store.order_list("order_id"),
        returnable=orders.select(
            (pl.col("status") == "delivered") & pl.col("delivered_at").is_not_null()
        )
        .to_series()
        .to_list(),
        settled=orders.select(pl.col("status").is_in(["delivered", "cancelled"]))
        .to_series()
        .to_list(),
        delivered_at=ctx.store.order_list("delivered_at"),
        # An order whose events are all unknown counts as past, as the record scan had it.
        last_event=orders.select(pl.max_horizontal(*events).fill_null(datetime.min))
        .to_series()
        .to_list(),
        tiers=dict(users.iter_rows()),
        line_spans=list(zip(*(spans[c].fill_null(0).to_list() for c in ("lo", "hi")), strict=True)),
        line_active=(lines["status"] == "active").to_list(),
        line_prices=ctx.store.line_list("unit_price"),
        line_quantities=ctx.store.line_list("quantity"),
        line_categories=ctx.store.line_product_list("category_id"),
        line_titles=_lowered(ctx.store.line_product_list("title")),
        line_nouns=ctx.line_nouns,
    )


def _lowered(titles: list[str | None]) -> list[str]:
    """Each title lower-cased ("" for None), one object per distinct title."""
    low: dict[str | None, str] = {}
    for title in titles:
        if title not in low:
            low[title] = "" if title is None else title.lower()
    return [low[t] for t in titles]


def _clashing_line(
    ctx: GenContext, n_orders: int, rng: np.random.Generator
) -> tuple[str, int, int] | None:
    """A customer, an order row and line index of an active delivered line other orders echo.

    Tries up to ``CLASH_TRIES`` customers (keyed draws) and keeps the first customer whose
    item the most of their last ``n_orders`` orders hold, then one of their delivered lines
    of that item, uniformly: the first such line (the oldest holder) was the target in 76–88%
    of same-item draws at d = 4–12 on 5k products, against 42–48% for a blind pick, so "the
    oldest one" told the order without the customer's detail. None sends the caller to a
    plain draw. Each customer's best line is
    looked up in :func:`_clash_table`, so a try costs a dict look-up (the draws are made at
    once: :class:`_Picks`). The order is a row of ``store.order_table``, the line an index
    into its ``lines_of``.
    """
    table = _clash_table(ctx, n_orders)
    best: tuple[int, str, tuple[tuple[int, int], ...]] | None = None  # (held, customer, lines)
    picks = _Picks(rng, ctx.customers_with_orders(n_orders), CLASH_TRIES)
    tried = 0
    for user_id in picks.drawn:
        tried += 1
        found = table.get(user_id)
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], user_id, found[1])
        if best is not None and best[0] >= 3:
            break
    picks.keep(tried)
    if best is None:
        return None
    _, user_id, lines = best
    i, j = pick(rng, lines)
    return user_id, _order_book(ctx).spans[user_id][0] + i, j


class _Picks:
    """Up to ``most`` :func:`pick` draws from ``options``, made by one NumPy call.

    ``integers(n, size=most)`` gives the numbers ``most`` single ``integers(n)`` calls give
    (NumPy draws them one after another; ``tests/gen/test_store_fast.py`` checks it) for a
    tenth of their cost. A caller that uses only the first ``taken`` calls :meth:`keep`, which
    leaves the stream exactly where ``taken`` picks would have. Empty ``options`` redraw, as
    ``pick`` does.
    """

    def __init__(self, rng: np.random.Generator, options: Sequence[Any], most: int) -> None:
        if not options:
            raise Redraw("nothing to pick from")
        self.rng, self.n, self.most = rng, len(options), most
        self.start = rng.bit_generator.state
        self.drawn = [options[i] for i in rng.integers(self.n, size=most).tolist()]

    def keep(self, taken: int) -> None:
        """Leave the stream where ``taken`` (≤ ``most``) single picks would have left it."""
        if taken < self.most:
            self.rng.bit_generator.state = self.start
            if taken:
                self.rng.integers(self.n, size=taken)


#: customer → (held, (order index, line index) of every delivered line of their best noun).
_Best = dict[str, tuple[int, tuple[tuple[int, int], ...]]]


def _clash_table(ctx: GenContext, n_orders: int) -> _Best:
    """Every customer's best clashing line among their last ``n_orders`` orders, found at once.

    A line counts when it is active, its order delivered, and its noun held by ``held > 1``
    of those orders; a customer's best noun is that of the first such line (by order, then
    line) with the most orders holding its noun, and every counted line of it is kept, by
    order then line, for the draw to pick among. Built once per
    context and n_orders (~0.2 s CPU at 10k customers); indices are those of ``orders_of`` and
    ``lines_of``.
    """
    return per_root(ctx, _build_clash_table, n_orders)


def _build_clash_table(ctx: GenContext, n_orders: int) -> _Best:
    store = ctx.store
    by_user = pl.col("user_id")
    recent = (
        store.order_table.select("user_id", "order_id", "status", "delivered_at")
        .with_columns(i=pl.int_range(pl.len()).over(by_user), count=pl.len().over(by_user))
        .filter(pl.col("i") >= pl.col("count") - n_orders)
    )
    lines = (
        store.line_table.select("order_id", "status")
        .with_columns(
            noun=pl.Series(ctx.line_nouns, dtype=pl.String),
            # Lower-cased titles, as the order book holds them and the nouns are.
            title=pl.Series(_order_book(ctx).line_titles, dtype=pl.String).str.slice(
                0, LISTED_CHARS
            ),
            j=pl.int_range(pl.len()).over("order_id"),
        )
        .filter(pl.col("noun").is_not_null())
        .with_columns(shown=pl.col("title").str.contains(pl.col("noun"), literal=True))
    )
    holders = recent.select("user_id", "order_id").join(
        lines.group_by("order_id", "noun").agg(shown=pl.col("shown").all()), on="order_id"
    )
    # A noun some holder's listed title cuts off is no clash :func:`_holders` would keep.
    held = (
        holders.group_by("user_id", "noun")
        .agg(held=pl.len(), shown=pl.col("shown").all())
        .filter(pl.col("shown"))
        .drop("shown")
    )
    ranked = (
        recent.filter((pl.col("status") == "delivered") & pl.col("delivered_at").is_not_null())
        .select("user_id", "order_id", "i")
        .join(lines.filter(pl.col("status") == "active"), on="order_id")
        .join(held, on=["user_id", "noun"])
        .filter(pl.col("held") > 1)
        .sort("user_id", pl.col("held"), "i", "j", descending=[False, True, False, False])
    )
    top = ranked.unique("user_id", keep="first", maintain_order=True).select("user_id", "noun")
    best = (
        ranked.join(top, on=["user_id", "noun"])
        .sort("user_id", "i", "j")
        .group_by("user_id", maintain_order=True)
        .agg(pl.col("held").first(), pl.col("i"), pl.col("j"))
    )
    return {
        u: (h, tuple(zip(i, j, strict=True)))
        for u, h, i, j in best.select("user_id", "held", "i", "j").iter_rows()
    }


def _holders(book: _OrderBook, visible: list[int], row: int, noun: str) -> list[int]:
    """The visible order rows whose lines the noun fits (the target's, ``row``, first).

    A second line with the noun in the same order can never be told apart by what the
    customer knows: such draws are redrawn, and so are those where a line holding the noun
    shows it only past the cut of the order tools' titles (the agent could not see which
    orders hold the item). A line holds the item when its title names the noun and its own
    noun, if any, ends with it.
    """
    holders = [row]
    titles, nouns, spans = book.line_titles, book.line_nouns, book.line_spans
    for r in visible:
        lo, hi = spans[r]
        # A line whose own noun does not end with the named one is another kind of item
        # ("coffee" in "… Coffee Maker …"); "digital air fryer" is an air fryer.
        held = [
            title
            for title, own in zip(titles[lo:hi], nouns[lo:hi], strict=True)
            if noun in title and (own is None or own.endswith(noun))
        ]
        if r == row and len(held) > 1:
            raise Redraw("two lines of the order hold the item")
        if any(noun not in title[:LISTED_CHARS] for title in held):
            raise Redraw("the item's noun is cut from a title the order tools show")
        if held and r != row:
            holders.append(r)
    return holders


def _exchange_options(
    ctx: GenContext, line: dict[str, Any], rng: np.random.Generator
) -> tuple[str, Any, list[Any]] | None:
    """An axis, a new value for it (in stock, other axes unchanged) and the other such values."""
    if line["variant_id"] is None:
        return None
    variants = ctx.store.variants_of(line["product_id"])
    current = next((v for v in variants if v["variant_id"] == line["variant_id"]), None)
    if current is None:
        raise DatasetError(
            f"{ctx.store.root}: order line {line['order_id']}#{line['line_no']} names variant "
            f"{line['variant_id']}, which product {line['product_id']} does not have"
        )
    axes = sorted(current["attributes"])
    rng.shuffle(axes)
    for axis in axes:
        values = sorted(
            {
                v["attributes"][axis]
                for v in variants
                if v["stock_qty"] >= line["quantity"]
                and v["attributes"].get(axis) != current["attributes"][axis]
                and all(
                    v["attributes"].get(k) == x
                    for k, x in current["attributes"].items()
                    if k != axis
                )
            },
            key=str,
        )
        if values:
            value = pick(rng, values)
            return axis, value, [v for v in values if v != value]
    return None


def _method(memo: DecisionMemo, facts: dict[str, Any], rng: np.random.Generator) -> str:
    offered = []
    for method in METHOD_WORDS:
        ok = memo.evaluate("return_method_available", {**facts, "return_method": method})
        if ok and ok.value:
            offered.append(method)
    return pick(rng, offered)


def _refusal(memo: DecisionMemo, facts: dict[str, Any]) -> str:
    returnable = memo.evaluate("returnable", facts)
    if returnable and not returnable.value:
        return REFUSALS[returnable.rule_ids[0]]
    return "window"


def new_variant(task_variants: list[dict[str, Any]], goal: dict[str, Any]) -> dict[str, Any]:
    """The replacement the oracle picks: the stated values, every other axis as it was."""
    current = next(v for v in task_variants if v["variant_id"] == goal["variant_id"])
    for v in task_variants:
        attrs = v["attributes"]
        if all(attrs.get(k) == x for k, x in goal["exchange"].items()) and all(
            attrs.get(k) == x for k, x in current["attributes"].items() if k not in goal["exchange"]
        ):
            return v
    raise Redraw("no variant has the stated values")


def start_facts_to_ask(goal: dict[str, Any], slots: dict[str, dict[str, Any]]) -> list[str]:
    """The facts a start records that the agent must ask the customer for (slot names).

    The reason, the action and an exchange's values when the first message left them out,
    and a return's method, which it never says. A right guess is still a guess: the verifier
    counts a start correct only when these were asked.
    """
    wanted = ["reason", "action", *(f"exchange.{k}" for k in goal["exchange"])]
    if goal["action"] == "return":
        wanted.append("method")
    return [n for n in wanted if n in slots and (slots[n]["omitted"] or n == "method")]


def answer(goal: dict[str, Any], started: str | None) -> str:
    """The final message a perfect agent writes."""
    if not goal["eligible"]:
        return (
            f"I'm sorry, the {goal['action']} is not possible: this item is not eligible for "
            f"return because {REFUSAL_TEXT[goal['refusal']]}."
        )
    return f"Done: your {goal['action']} is started ({started})."


#: How the oracle asks for a fact the customer left out, in words the customer answers with
#: that fact alone ("the item's condition" also heard the item; the rest by their label).
ASK_PHRASES = {
    "action": "whether you would like a return or an exchange",
    "method": "how you would like to send it back",
    "order_hint": "which order you mean",
    "order_date": "when you placed the order",
    "condition": "the condition it is in",
    "order_ref": "the order number",
}


def oracle(task: TaskRow) -> Oracle:
    """Find the line, ask for what the customer left out, check or act, then report."""
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    slots = {s["name"]: s for s in script["slots"]}
    budget = task.axis("B_tool")
    turns: list[list[Any]] = []
    if "order_ref" in slots:
        turns.append([call("order_get_details", order_id=goal["order_id"])])
    else:
        turns.append([call("orders_list")])
    looks = []
    if goal.get("hint_kind") in DETAIL_KINDS:  # only the details tell: open every holder
        looks = [call("order_get_details", order_id=oid) for oid in goal["holder_ids"]]
    wanted = start_facts_to_ask(goal, slots) if goal["eligible"] else ["reason"]
    if goal["item_ambiguous"] and "order_ref" not in slots:
        wanted += ["order_date", "order_hint"]
    unsaid = [slots[n] for n in wanted if n in slots and (slots[n]["omitted"] or n == "method")]
    prep = []
    if unsaid:
        asks = [ASK_PHRASES.get(s["name"], f"the {s['label']}") for s in unsaid]
        prep.append(call("ask_user", question=f"Could you tell me {spoken_list(asks)}?"))
    pid = goal["product_id"]
    line = {"order_id": goal["order_id"], "product_id": pid}
    if goal["eligible"] and goal["action"] == "exchange":
        prep.append(call("catalog_get_variants", product_id=pid))
    turns += chunked(prep, budget) + chunked(looks, budget)
    switch = script.get("switch")
    while switch and len(turns) < switch["turn"]:
        turns.append([call("catalog_get_variants", product_id=pid)])
    variants: list[dict[str, Any]] = []
    shown_variants: set[str] = set()
    for turn in turns:
        results = yield turn
        shown_variants.update(shown_ids(results, "variant_id"))
        for result in results:
            variants = result.get("variants", variants) if isinstance(result, dict) else variants
    if goal["variant_id"] in shown_variants:  # the line's variant, named only once shown
        line["variant_id"] = goal["variant_id"]
    if not goal["eligible"]:
        yield [call("return_check_eligibility", reason=goal["reason"], **line)]
        yield answer(goal, None)
        return
    if goal["action"] == "exchange":
        new = new_variant(variants, goal)
        act = call(
            "exchange_start", new_variant_id=new["variant_id"], reason=goal["reason"], **line
        )
    else:
        act = call("return_start", reason=goal["reason"], method=goal["method"], **line)
    results = yield [act]
    started = next(
        (r.get("return_id") or r.get("exchange_id") for r in results if isinstance(r, dict)), None
    )
    if not started:
        raise Redraw(f"the store refused the {goal['action']}: {results}")
    yield answer(goal, started)
