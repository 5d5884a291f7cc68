"""status — "where is my order?".

Customer wants:
    to know where one of their orders is: its status, and the delivery date (delivered) or the
    expected delivery date (on its way); as d grows they ask for more at once
    (``order_facts_asked(d)`` of status, delivery date, tracking number, carrier). They name
    the order by its number or, more often as d grows (``p_indirect_order_ref``), by a kind of
    item in it — as d grows more often by another word than its title's
    (``p_item_paraphrase``: "plushie" for a "Plush Toy"), and typos (p_noise) may hit it. With
    probability ``p_order_clash(d)`` other listed orders hold the same kind of item, and only
    a detail the customer adds tells them apart, from exact to relational as d grows
    (``order_hint_level(d)``; :mod:`~shopgen.gen.tasks.order_hints`): the day placed, the
    month, the total, "the most recent one", whether it already arrived, another item in it
    (at high d by a category it belongs to: "the one that also had some school supplies in
    it"), "the cheapest one",
    its place among them ("the second most recent one"), the shipping chosen ("the one I paid
    for next-day delivery" — only ``order_get_details`` shows it). That detail is optional
    (dropped with p_missing): then the agent must ask which order is meant and relate the
    answer to the orders holding the item. Once d leaves the day out of the customer's memory
    they cannot give it at all. As d grows the clashing draw looks for more orders holding the
    item (``same_item_orders(d)``: 2, 3, 4), so a guess among them is worth less, and an item
    may be named by a category it belongs to ("my order with the school supplies"), which
    every order with such an item then holds.

    Reasoning an agent needs at high d (the oracle proves each task solvable with tool results
    and the customer's answers): map a paraphrase or a category name to listed titles; rank
    the candidate orders by total or by date and pick by rank ("cheapest", "second most
    recent" — a word matcher reading "most recent" takes the newest, wrongly); decide which
    category another listed item belongs to; open each candidate's details to compare the
    shipping method; ask which order is meant when the detail was left out.
Tools offered:
    orders_list, order_get_details, ask_user.
Hidden goal:
    ``{order_id, status, date, date_kind, want, tracking_number, carrier, item_ambiguous,
    hint_kind, holders, holder_ids, order_dates, order_tracking, order_carrier}`` from the
    world's orders table: ``date`` is the delivery day (``date_kind = "delivered_on"``), the
    ETA (``"eta"``), or None for a cancelled order; ``tracking_number`` / ``carrier`` are set
    only when asked for, ``order_tracking`` / ``order_carrier`` always (None before the order
    ships; since 2.14); ``holder_ids`` are the listed orders the customer's item words could
    mean (``holders`` of them; none when the order is named by number); ``order_dates`` every
    date of the order's life (since 2.2).
Reward and is_correct:
    ``verifiers.status`` reads the final message: it must assert the true status and no other,
    state the date, the tracking number and the carrier (only that one) when asked, and no
    tracking number or carrier that is not the order's when not asked.
    r_task = 2·(parts right / parts asked) − 1; correct iff every part is right.
Difficulty axes used:
    H_orders (orders the agent must tell apart, and room for same-item orders), p_missing
    (whether the telling detail is said), p_noise (typos in the item's name), T_max, B_tool
    (candidates' details opened per turn), and the schedules p_indirect_order_ref(d),
    p_item_paraphrase(d), p_order_clash(d), same_item_orders(d), order_hint_level(d),
    order_facts_asked(d).
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    2.0 — same-item orders drawn on purpose (p_order_clash), told apart by one of seven kinds
    of detail, vaguer as d grows (order_hint_level); items paraphrased (p_item_paraphrase);
    several facts asked at once, the carrier among them (order_facts_asked); the oracle's
    clarifying question now matches the customer's words (1.0's drew "don't know").
    2.1 — orders named by number rarer at high d (p_indirect_order_ref → 0.95 at d=12); more
    same-item orders (same_item_orders, 48 customer tries); p_order_clash up to 0.81 and
    p_item_paraphrase up to 0.82 at d=12, with category-path names when the category has no
    other noun; two more kinds of detail, ``position`` and ``shipping`` (the oracle opens every
    candidate's details), ``arrival`` moved before ``co_item``, ``co_item`` said by category
    at high d; order_hint_level reaches 8 at d=11 with a window of 4 kinds.
    2.2 — verifier closes four ways to be graded right without telling the customer the
    answer (red-team, issue #7): the goal lists ``order_dates`` and every date written must be
    one of them or today (a list of 120 candidate dates, or every order's dates, stated the
    right one), no other tracking-number-like code may be quoted (UPS's "1Z…" and digits grouped by
    spaces or dashes included)
    (every order's tracking number stated the right one), statuses offered as alternatives
    ("shipped, or maybe delivered") count as asserted, and an answer given without looking the
    order up (``orders_list`` or its ``order_get_details``) earns at most 0 and is never
    correct (a blind "delivered" plus every date was correct on 25% of tasks). Two honest
    answers marked wrong are now right: negated statuses ("it has not been cancelled") no
    longer count as asserted, and the stages an order passed through, told in the past tense
    ("it was placed on March 1 and was delivered on the 4th"), are its history, not a rival
    status. Honest answers as assistants write them are right too (a false-negative pass):
    markdown, curly apostrophes and raw values ("**in transit**", "hasn’t", "in_transit") no
    longer hide the words; "it's …", "your order shipped", "… and arrived", "arrived" and
    bullet lines ("- Delivered: Mar 1") assert a status; "on its way"/"en route" tell a
    shipped order's status as well as an in-transit one's; modals and conditions ("should
    have arrived", "once it arrives") and the agent's own "I have confirmed" assert none;
    a yearless date is read in the year nearest today ("December 21" on March 2 was 2025's,
    not 2026's: every honest answer about a December order was wrong), "today", "tomorrow",
    "yesterday" and weekdays ("this Friday", "last Tuesday") are dates; "Federal Express"
    and "United Parcel Service" name carriers and "follow-ups" no longer names UPS.
    2.3 — the system prompt asks for the expected delivery date of every order not delivered
    yet and not cancelled (placed and processing ones too), and for the carrier when asked:
    it asked for one "if it is on its way", so an agent doing as told answered "it is
    processing" for an unshipped order and lost the graded date (7 of 40 tasks at d = 0,
    1–2 of 40 at d = 6–12 on 5k products). Grading is unchanged. "The most recent one" and
    "the second most recent one" rank orders by the day placed, the only time the tools show:
    two same-item orders of one day were ranked by their hidden hours.
    2.4 — a bare list of the order's dates ("Dates: 2026-02-14, 2026-02-15, 2026-02-20",
    one per bullet, "Feb 15 or Feb 20") does not state the delivery or expected date: each
    is one of the order's own dates, so the list passed in 59 of 59 dated tasks (lead's
    audit) without saying which is which. Dates told apart by any word ("placed Feb 14,
    expected Feb 20", "Feb 14 - placed") or in sentences of their own stay right. No first
    message claims the order has not arrived ("no sign of it yet", "Still nothing from …"):
    15 of 160 tasks at d = 4–12 said so of a delivered or cancelled order, and in 2 a
    same-item order in transit beside it fitted the complaint (honest-agent audit).
    A middle rank among same-item orders says what it counts: "the second most recent of my
    orders with that item". "The second most recent one" also read as the second most recent
    order of all, which held the item too in 7 of 20 tasks with that detail at d = 6–12 on
    5k products (the extremes have no such reading).
    A customer who does not know the answer no longer says it does not matter ("I'm not sure, it
    doesn't matter to me", "No idea. Doesn't matter."): said to any question the script does not
    answer, it told an agent asking which order or which format that any would do (13 of 90
    unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k products). Replies
    only; tasks are drawn as before.
    2.5 — Asked whether there is anything ("Is that all?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope says so
          (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not sure",
          and such a question no longer gets the request's own item for an answer. On 5k products at
          d = 0–12, "Does the item need to be compatible with anything?" echoed the order's item on
          22 of 39 tasks (now none), and "Is that all?" gets "that's all" on 11 of 39 whose first
          message says every fact. Replies only.
          "What would you like to know about it?" ("… want to know", "… need to know", "find out")
          states what the customer wants to know: it got "I'm not sure" on 39 of 39 tasks at d =
          0–12 on 5k products. A yes-or-no question about the item gets no echo of it.
    2.6 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
    2.7 — a tracking-like number glued to a word ("REF1Z…", "…1111x") or grouped by dots or
          slashes is a tracking number: the right one listed among others written that way
          was correct on 55 of 55 tracked tasks (d = 6–12, 5k products); now on none. Also, an
          order id holding a NUL names nothing (discovery 1.9). Every task id changes.
          Also, the right number must itself be read as a tracking number, with the same
          separators (any space but a line break, any dash, "_", ".", "/", a bare comma) that
          ``code_stated`` squashes, invisible characters dropped: every candidate's number
          grouped by no-break spaces passed on 22 of 22 tracked tasks with candidates (d =
          0–12, 5k products), now on none. Order ids in any grouping and calendar dates
          written side by side ("2026-02-24/2026-02-26") no longer read as other numbers.
    2.8 — the customer answers "What information do you need?", "What can I check for
          you?" (31 of 31 asks got "I'm not sure") and tells an order by its day when asked
          "Which order do you mean?", as discovery 1.10 tells. Replies only; every task id
          changes with the version.
          Also, the final answer is read as an assistant writes it (``verifiers.text``). Honest
          answers graded wrong on every task they fit (5k products, d = 0–12) now count: "Your
          order shows as processing", "The status of your order 469-… is: Processing", a
          heading "Order 469-… — In transit", "order 356-… arrived on February 25", "is
          making its way to you", "has been placed and is being processed", "we're preparing
          your order", and a date told by its day alone, read against the episode's today
          ("arrives on the 6th", "in 4 days", "Tuesday (Mar 17)" as one date). Hedges that
          passed no longer do: a range or alternative of dates ("Mar 6–8", "March 7 or 8",
          "March 6 or the day after", "give or take a couple of days": 148 of 148 passed) and
          a status said to be possible ("in transit (it might have been delivered already)").
          Also, asked openly for more with facts left unsaid, the customer asks what the agent
          wants to know (discovery 1.10), where they said "I don't know".
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
    2.9 — the system prompt states the turn and call budget, as discovery 1.11's does.
          Every task id changes with the version.
          Also, a status offered as an alternative or said to be possible still is a second
          status (``verifiers.text``): "Your order was delivered or in transit" read "in
          transit" as the order's history, and "delivered on February 20, though it might
          still be in transit" read no second status; each passed for a delivered order (the
          first on 20 of 39 delivered orders, 5k products, d = 0–12). Left: "probably",
          "likely" and "I believe" before the true status still pass.
          Also, a day written without its month is read on the side of today its sentence
          tells (``verifiers.text.dates._tense_before``): "it was delivered on Tuesday the 10th",
          written on March 2, 2026, was March 10 (also a Tuesday, and nearer), and "delivered
          on the 28th" this month's; honest answers so written were graded wrong on 5 of 35
          tasks. And a slash date whose first number can be no month ("21/02/2026") is read
          day first, where it was no date.
    2.10 — the answer is read in more honest layouts and wordings (an audit: 260 tasks, 5k,
          d = 0–12, 18 templates): a status after an emoji ("✅ Delivered on Fri, Feb 20":
          260 of 260 failed), a weekday after its date ("March 10 (Tuesday)" read as another
          date: 127), a table's status cell under a "Status" heading (83), a status joined by
          "and" after a modal or negated by "before"/"nothing" ("should be shipped and
          delivered", "cancelled before it shipped": 22), "last Monday" said on a Monday (a
          week ago, not today) and "nothing on the way" after a cancellation (14); of these
          2 fail now, both a relative day in an unusual sentence. And hedges that passed fail: two
          statuses joined by a slash ("in transit/delivered": 260 of 260 passed), an
          alternative of allowed dates ("today or on March 10", "February 11, or maybe
          February 20": 260 each), "or possibly a day later" (260). A fraction in a
          product's title ("7-1/4-Inch Blade", "3/4 Sleeve": 112 of 5,000 titles) is no
          slash date: naming the item added a date to the answer. Every task id changes
          with the version.
    2.11 — "Can you help me find the order?" gets the detail telling the order apart
          ("I'm not sure" from 73 of 156 customers holding one; none of the audit bank's
          2,587 asks fails now, 73 did). Replies only; every task id changes with the
          version.
    2.12 — the final answer is read in the wordings of a paraphrase bank written apart from
          the readers (300 answers to six orders): honest answers read wrong fell from 32 of
          210 to 4. Read now: a mover as the subject ("UPS delivered it", "we shipped your
          order"), "marked the package as delivered", a numbered list ("3. Delivered: Feb
          20"), an arrow ("Order 356-… → Delivered"), "Still processing", a status quoted as
          the store names it ("in the 'placed' stage"), "delivery was completed", "reached
          you", "handed over to you", "has left our warehouse", "being packed", "we've
          received your order", dotted dates ("20.02.2026", day first), "the day after
          tomorrow" and a weekday after its date ("2/20/2026, a Friday" is one date). No longer read: "I hope you have received it" as an order just placed, a
          status line leading the next line's ("Status: Cancelled" over "Placed: Feb 20"), a
          status negated after it ("Shipped — not yet") or before its alternative ("won't be
          shipped or delivered"). A status guessed at ("probably delivered") states none, and
          beside another status it is a hedge ("placed or possibly already processing").
          Every task id changes with the version.
    2.13 — as discovery 1.14: "Carrier too?", "Should I tell you the carrier as well?" and
          "What info do you need from me?" get what the customer wants to know (156 of 156 and
          225 of 225 asks got "I'm not sure"), "What did you order?" the item. Replies only;
          every task id changes with the version.
    2.14 — honest answers of the answer bank (300 answers to six orders) read wrong fell
          from 4 of 210 to none; no hedged one more reads right. Read now: the order's items
          as the subject ("your items are being picked and packed", "both were delivered"; a
          general "orders are typically delivered in 3-5 days" is still no status), a status
          in brackets after the order ("your order (placed March 1)"), a numeric date beside
          the same date in words ("Friday, March 6, 2026 (06/03/2026)": it was June 3 as
          well), and dates in a Markdown table's columns, labelled by its header (they were a
          bare list). A fact not asked for, said, must be true: the goal holds the order's
          tracking number and carrier (``order_tracking``, ``order_carrier``), and a tracking
          number or carrier that is not the order's ("shipped via FedEx" of a USPS parcel, a
          tracking number for an order not shipped), or a date of a cancelled order that is
          none of its own ("expected on March 6"), is a wrong part, and so is a weekday beside
          a date it does not fall on ("Thursday, February 20" of a Friday). Denying a stage
          the order has passed contradicts it ("in transit … the order hasn't shipped yet";
          "it isn't in transit" of a delivered order is true). Of the bank's 90 hedged or
          wrong answers 16 read right, 5 now. A second bank written apart from the readers,
          260 answers volunteering facts or using negations: honest ones read wrong 16 of
          180 → 4, wrong ones read right 41 of 80 → 2. Read now besides: a negation stops at
          its sentence ("No, it's not lost. UPS delivered it …"), "Shipped: No", a key-value
          table ("| Status | Cancelled |" heads no column), a status's word before a date as
          history ("placed 28 Feb 2026, currently processing"), "waiting to be processed" as
          placed, "not processed or shipped yet", "as soon as it's on its way". As discovery
          1.15, the second bank's "What would you like to check on regarding this order?"
          gets what the customer wants to know (40 of 40 got "I don't know"), and "the number
          on your order confirmation" and "roughly when you ordered it" what they ask. Every
          task id changes with the version.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta
from shopgen.gen.schedules import (
    order_facts_asked,
    p_indirect_order_ref,
    p_item_paraphrase,
    p_order_clash,
    same_item_orders,
)
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, chunked, per_root, pick
from shopgen.gen.tasks.order_hints import (
    DETAIL_KINDS,
    LISTED_CHARS,
    category_paths,
    leaf_categories,
    listed_nouns,
    open_kinds,
    order_hint,
    title_words,
)
from shopgen.schemas.task import TaskRow

#: What a customer may ask for: tracking and carrier only make sense once an order has shipped.
_WANTS_SHIPPED = ("status", "delivery date", "tracking number", "carrier")
_WANTS_UNSHIPPED = ("status", "delivery date")

#: Customers to try for one whose listed orders share a kind of item, before a plain draw
#: (the first with ``same_item_orders(d)`` such orders wins; else the one with the most).
CLASH_TRIES = 48

#: How the final message states each status (the verifier accepts these and paraphrases).
STATUS_PHRASES = {
    "placed": "has been placed and is not processed yet",
    "processing": "is processing",
    "shipped": "has shipped",
    "in_transit": "is in transit",
    "delivered": "was delivered",
    "cancelled": "was cancelled",
}


@lru_cache(maxsize=4096)
def spoken_date(day: date) -> str:
    """A date as a customer says it: ``March 5`` (remembered: a strftime per task adds up)."""
    return f"{day:%B} {day.day}"


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a customer, one of their last H_orders orders, and how they refer to it."""
    visible_n = int(axes.H_orders)
    pool = ctx.customers_with_orders(visible_n)
    indirect = rng.random() < p_indirect_order_ref(d)
    clash = indirect and visible_n > 1 and rng.random() < p_order_clash(d)
    drawn = _clashing_draw(ctx, pool, visible_n, same_item_orders(d), rng) if clash else None
    if drawn is None:
        user_id = pick(rng, pool)
        visible = ctx.store.orders_of(user_id)[-visible_n:]
        target = visible[int(rng.integers(len(visible)))]
        noun = _item_noun(ctx, target, rng) if indirect else ""
    else:
        user_id, visible, target, noun = drawn
    want, asked = _wants(target, d, rng)
    slots: list[Slot] = [make_slot("status", "want", want, required=True)]
    holders: list[dict[str, Any]] = []
    kind: str | None = None
    said = noun
    if indirect:
        said, category = _spoken_item(ctx, target, noun, d, rng)
        holders = [o for o in visible if _refers(ctx, o["order_id"], (noun, said), category)]
        slots.append(make_slot("status", "item", said, required=True))
        if len(holders) > 1:
            kind, phrase = order_hint(ctx, target, holders, noun, d, rng)
            if kind != "day":
                slots.append(make_slot("status", "order_hint", phrase))
    else:
        slots.append(make_slot("status", "order_ref", target["order_id"], required=True))
    if kind == "day" or (kind is None and "day" in open_kinds(d)):
        # The day is said (or given when asked) only while d leaves it in memory.
        slots.append(make_slot("status", "order_date", spoken_date(target["placed_at"].date())))
    date_kind, when = _answer_date(target)
    goal = {
        "order_id": target["order_id"],
        "status": target["status"],
        "date": when,
        "date_kind": date_kind,
        "want": want,
        "tracking_number": target["tracking_number"] if "tracking number" in asked else None,
        "carrier": target["carrier"] if "carrier" in asked else None,
        "item_ambiguous": len(holders) > 1,
        "item_paraphrased": said != noun,
        "hint_kind": kind,
        "holders": len(holders),
        "holder_ids": [o["order_id"] for o in holders],
        "order_dates": order_dates(target),
        "order_tracking": target["tracking_number"],
        "order_carrier": target["carrier"],
    }
    episode = {
        "user_id": user_id,
        "order_ids": [o["order_id"] for o in visible],
        "today": ctx.today.isoformat(),
    }
    return Draft(slots=tuple(slots), goal=goal, episode=episode)


def _wants(target: dict[str, Any], d: int, rng: np.random.Generator) -> tuple[str, list[str]]:
    """What the customer asks for, as they say it, and the list of facts (pool order)."""
    pool = _WANTS_SHIPPED if target["tracking_number"] else _WANTS_UNSHIPPED
    n = min(len(pool), order_facts_asked(d))
    asked = [pool[i] for i in _sorted_sample(rng, len(pool), n)]
    said = asked[0] if n == 1 else f"{', '.join(asked[:-1])} and {asked[-1]}"
    return said, asked


def _sorted_sample(rng: np.random.Generator, population: int, k: int) -> list[int]:
    """``sorted(rng.choice(population, size=k, replace=False))``, drawn as numpy draws it.

    numpy draws such a sample by Floyd's algorithm (a bounded integer for each of the last k
    indices, the index itself when the draw was already picked) and then shuffles it (k - 1
    more bounded integers). The picks are sorted here, so the shuffle's draws are made and
    dropped: every later draw of the task's stream stays the same (a test compares the two
    over many seeds), and the ~45 µs ``choice`` took a status task in generation (its argument
    handling, cold after the rest of a task) drop to a few ``integers`` calls.
    """
    picks: list[int] = []
    for j in range(population - k, population):
        t = int(rng.integers(j + 1))
        picks.append(j if t in picks else t)
    for i in range(k - 1, 0, -1):
        rng.integers(i + 1)
    return sorted(picks)


def _clashing_draw(
    ctx: GenContext, pool: list[str], visible_n: int, want: int, rng: np.random.Generator
) -> tuple[str, list[dict[str, Any]], dict[str, Any], str] | None:
    """A customer whose listed orders share a kind of item, a target holding it, and the noun.

    A few customers are tried (each a keyed draw): the first whose most-shared noun is held by
    ``want`` orders wins, else the best seen; None sends the caller to a plain draw. What each
    customer's orders share is looked up in :func:`_shared_table`; only the kept customer's
    orders are read (the store's cached records, which the order tools then reuse).
    """
    table = _shared_table(ctx, visible_n)
    best: tuple[int, str, tuple[str, ...], str] | None = None
    for _ in range(CLASH_TRIES):
        user_id = pick(rng, pool)
        found = table.get(user_id)
        if found is None:
            continue
        top, nouns, holders = found
        noun = pick(rng, nouns)
        if best is None or top > best[0]:
            best = (top, user_id, holders[noun], noun)
        if top >= want:
            break
    if best is None:
        return None
    _, user_id, holder_ids, noun = best
    visible = ctx.store.orders_of(user_id)[-visible_n:]
    rows = {o["order_id"]: o for o in visible}
    return user_id, visible, rows[pick(rng, holder_ids)], noun


#: customer → (most orders sharing a listed noun, those nouns sorted, noun → its orders).
_Shared = dict[str, tuple[int, list[str], dict[str, tuple[str, ...]]]]


def _shared_table(ctx: GenContext, visible_n: int) -> _Shared:
    """For every customer, the listed nouns most of their last ``visible_n`` orders share.

    Only customers with a noun listed in two or more of those orders appear. A noun's orders
    are in listing order (oldest first), as a scan of ``listed_nouns`` per order finds them.
    Built once per context and ``visible_n`` for all customers at once (~0.2 s CPU at 10k).
    """
    return per_root(ctx, _build_shared_table, visible_n)


def _build_shared_table(ctx: GenContext, visible_n: int) -> _Shared:
    titles, nouns = ctx.line_titles, ctx.line_nouns
    listed = [
        n is not None and n in t[:LISTED_CHARS].lower() for t, n in zip(titles, nouns, strict=True)
    ]
    lines = (
        ctx.store.line_table.select("order_id")
        .with_columns(noun=pl.Series(nouns, dtype=pl.String), listed=pl.Series(listed))
        .filter(pl.col("listed"))
        .select("order_id", "noun")
        .unique()
    )
    by_user = pl.col("user_id")
    recent = (
        ctx.orders.select("user_id", "order_id")
        .with_columns(i=pl.int_range(pl.len()).over(by_user), count=pl.len().over(by_user))
        .filter(pl.col("i") >= pl.col("count") - visible_n)
    )
    shared = (
        recent.join(lines, on="order_id")
        .group_by("user_id", "noun")
        .agg(pl.col("order_id").sort_by("i"))
        .filter(pl.col("order_id").list.len() > 1)
        .filter(pl.col("order_id").list.len() == pl.col("order_id").list.len().max().over(by_user))
    )
    table: _Shared = {}
    for user_id, noun, ids in shared.iter_rows():
        held = table.setdefault(user_id, (len(ids), [], {}))
        held[2][noun] = tuple(ids)
    for _, top_nouns, holders in table.values():
        top_nouns.extend(sorted(holders))
    return table


def _item_noun(ctx: GenContext, target: dict[str, Any], rng: np.random.Generator) -> str:
    """The noun of one of the target's items, as its listing shows it (what a customer says)."""
    nouns = listed_nouns(ctx, target["order_id"])
    if not nouns:
        raise Redraw("no listed item of the order has a taxonomy noun")
    return pick(rng, nouns)


def _spoken_item(
    ctx: GenContext, target: dict[str, Any], noun: str, d: int, rng: np.random.Generator
) -> tuple[str, tuple[str, ...] | None]:
    """What the customer calls the item, and the category path it means (None: as listed).

    With probability ``p_item_paraphrase(d)`` it is another noun of the item's taxonomy
    category sharing no word with the listed title ("plushie" for a "Plush Toy"), or else the
    deepest category on its path whose name shares none ("school supplies" for a "Spiral
    Notebook"): then every listed order with an item of that kind holds it.
    """
    if rng.random() >= p_item_paraphrase(d):
        return noun, None
    product = _product_with(ctx, target["order_id"], noun)
    path = category_paths(ctx)[product["category_id"]]
    other = _other_word(ctx, product, noun, rng)
    if other is not None:
        return other, path
    title = set(title_words(product["title"]))
    for depth in range(len(path) - 1, 0, -1):
        if not set(title_words(path[depth])) & title:
            return path[depth].lower(), path[: depth + 1]
    return noun, None


def _product_with(ctx: GenContext, order_id: str, noun: str) -> dict[str, Any]:
    """The order's product whose listed title shows ``noun``."""
    return next(
        p
        for p in map(ctx.store.product, ctx.store.lines_columns(order_id, "product_id")[0])
        if noun in p["title"][:LISTED_CHARS].lower()
    )


def _other_word(
    ctx: GenContext, product: dict[str, Any], noun: str, rng: np.random.Generator
) -> str | None:
    """Another noun of the product's category sharing no word with its title, or None."""
    in_title = set(title_words(product["title"]))
    cat = leaf_categories(ctx)[product["category_id"]]
    others = sorted(
        {n.lower() for n in cat.nouns if not set(title_words(n)) & in_title} - {noun},
        key=lambda n: (len(n), n),
    )
    return pick(rng, others) if others else None


def _refers(
    ctx: GenContext, order_id: str, words: tuple[str, ...], kind: tuple[str, ...] | None
) -> bool:
    """Whether the customer's words could mean an item of the order (by word or by kind)."""
    if any(w in title.lower() for title, _ in ctx.order_items(order_id) for w in words):
        return True
    if not kind:
        return False
    paths, store = category_paths(ctx), ctx.store
    return any(
        paths[store.product_field(pid, "category_id")][: len(kind)] == kind
        for pid in store.lines_columns(order_id, "product_id")[0]
    )


def _answer_date(order: dict[str, Any]) -> tuple[str | None, str | None]:
    if order["delivered_at"] is not None:
        return "delivered_on", _iso(order["delivered_at"])
    if order["cancelled_at"] is not None:
        return None, None
    return "eta", _iso(order["eta"])


def order_dates(order: dict[str, Any]) -> list[str]:
    """Every date of the order's life (placed, shipped, delivered or expected, cancelled).

    The dates an answer may mention besides the one asked for: a status answer that writes
    any other date states something false (or lists candidates).
    """
    keys = ("placed_at", "shipped_at", "delivered_at", "eta", "cancelled_at")
    return sorted({_iso(order[k]) for k in keys if order.get(k) is not None})


def _iso(value: date | datetime) -> str:
    return value.isoformat()[:10]


def answer(goal: dict[str, Any]) -> str:
    """The final message a perfect agent writes from the order's details."""
    parts = [f"Your order {goal['order_id']} {STATUS_PHRASES[goal['status']]}."]
    if goal["date_kind"] == "delivered_on":
        parts.append(f"It was delivered on {goal['date']}.")
    elif goal["date_kind"] == "eta":
        parts.append(f"It is expected to arrive on {goal['date']}.")
    if goal["tracking_number"]:
        parts.append(f"The tracking number is {goal['tracking_number']}.")
    if goal.get("carrier"):
        parts.append(f"The carrier is {goal['carrier']}.")
    return " ".join(parts)


def clarifying_question(item: str) -> str:
    """What to ask when several orders hold the item: it names the order and asks the day.

    "which order" and "when did you place" are the customer's words for the telling detail
    (the ``order_hint`` and ``order_date`` slots); the item narrows a journey's customer to
    this step.
    """
    return f"Which order do you mean (the {item} one)? When did you place it?"


def oracle(task: TaskRow) -> Oracle:
    """Look the order up; list and ask only when the customer's words do not single it out."""
    goal = task.decoded("goal")
    slots = {s["name"]: s for s in task.decoded("user_script")["slots"]}
    if "order_ref" in slots:  # said: the order number is always in the first message
        yield [call("order_get_details", order_id=goal["order_id"])]
    else:
        yield [call("orders_list")]
        telling = slots.get("order_hint") or slots.get("order_date")
        if goal["item_ambiguous"] and telling is not None and telling["omitted"]:
            yield [call("ask_user", question=clarifying_question(str(slots["item"]["value"])))]
        if goal["hint_kind"] in DETAIL_KINDS:  # only the details tell: open every holder
            looks = [call("order_get_details", order_id=oid) for oid in goal["holder_ids"]]
            for turn in chunked(looks, task.axis("B_tool")):  # noqa: UP028  (send() needs a generator)
                yield turn
        else:
            yield [call("order_get_details", order_id=goal["order_id"])]
    yield answer(goal)
