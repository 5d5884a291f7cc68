"""discovery — "find me a few products like this".

Customer wants:
    k_rec(d) suggestions of one kind of product (a leaf category) meeting m(d) constraints in
    all: the category plus a price ceiling, rating floor, shipping days, brand or attribute
    values, drawn from a real in-stock target product so the feasible set is never empty, and
    leaving at least 2·k_rec feasible products in stock (``constraints.pool_min``; a
    constraint that would leave fewer is skipped).
    Optional constraints (and the number of options) are omitted with p_missing and must be
    asked for. Their preference is a fact they state when asked what matters: all four factors
    (price, rating, delivery speed, brand with the brands they like) in order, each with a
    strength word whose weight the ranking uses. Decidable from cards: every constraint is
    on a fact a search card shows (price, rating, ship days, brand, key attribute values). With p_switch(d) they change one constraint after the first turn: a raised
    budget (×1.25; lowered instead where a raise would change no answer,
    ``recsearch.settle``) or another value of a stated attribute that still leaves more than
    k_rec in-stock products (``recsearch.plan_change``).
Tools offered:
    catalog_search, catalog_get_product, catalog_get_variants, recommend_products, ask_user.
Hidden goal:
    ``constraints`` (every one, said or omitted, as they stand after any switch), the
    customer's ``preference`` (weights from the users table, anchored on the feasible
    products' price, rating and delivery range), the exact feasible set from a vectorised
    filter of the category (``feasible``: the best FEASIBLE_CAP in-stock rows
    ``[id, utility, brand, key attribute values]``; ``feasible_size``, ``feasible_in_stock``), ``out_of_stock``
    (feasible products the episode marks out of stock, p_oos), ``product_ids`` (the ideal list,
    the top k_rec by utility), ``k_rec`` and ``ndcg_threshold``.
Reward and is_correct:
    ``verifiers.discovery`` via ``verifiers.ranking.grade``: each recommended product is checked
    against *all* constraints and its stock in the episode; nDCG@k_rec with utilities above the
    goal's floor as gains against the stored ideal list. Correct iff exactly k_rec
    recommendations, all feasible and in stock, and nDCG ≥ ``ndcg_threshold(d)`` (0.95; 0.85 at d ≤ 1). Findability:
    the oracle recommends the best list among products its searches showed; a draw whose
    findable best list misses the threshold within T_max is redrawn, so the threshold is
    always reachable with the tools.
Difficulty axes used:
    m (constraints), k_rec (options), p_missing (omitted constraints), p_oos (out-of-stock
    feasible products), top_k and eps_rank (what search shows), p_switch (a changed
    constraint: the goal and feasible set are the final intent's), T_max, B_tool, p_noise.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    1.1 — p_switch: a changed budget or attribute value, said after the first turn.
    1.2 — decidable from cards: attribute constraints only on key attributes whose value names
          that attribute alone in the category (``constraints.visible_attrs``); the
          ``priority`` fact states the whole preference (four factors in weight order with a
          strength word each, ``Preference.statement``) and the ranking uses exactly the
          stated weights (``constraints.LEVELS``).
    1.3 — the customer names the kind of product so that one category fits: a leaf name
          another leaf shares is said with its department (``Tables.said_name``: "jeans from
          men's clothing"). Cards show "Jeans" for men's and women's jeans alike, and an
          honest agent's women's jeans for "jeans" were graded as the wrong category.
    1.4 — the ranking is decidable and bites. The ``priority`` fact names the anchors the
          utility normalises with ("a low price (very much: $19 is ideal, $180 the worst)",
          the category's price range rounded outwards to whole dollars, its shipping days;
          ``Preference.statement``), is kept from typo noise (kind ``preference``), and the
          system prompt says how strength words weigh; an agent computes each card's utility
          exactly (before, it had to estimate the category's range from cards). nDCG gains
          are utilities above the goal's ``gain_floor`` (its in-stock feasible set's lowest
          utility less ``GAIN_MARGIN``), in the verifier and the findability check alike, at
          NDCG_THRESHOLD 0.85 (was 0.9 on raw gains): the feasible products worst first were
          correct on 42% of tasks and in search order on 75% (now 0% and 42%, cat5k,
          n = 40). The preference is said only when asked, so the oracle asks for it in its
          first question (``recsearch.to_ask``) and the task's ``min_turns`` counts that.
    1.5 — the oracle searches only with words it was told or shown
          (``recsearch.KnownWords``): it searched the brands of the best products it had not
          seen, which no card had shown and the customer never said (at d = 12, 40 of 130
          searches on 5k products, typo corrections aside), so a task could be solvable only
          by knowing the answer. Once its searches with what was said are not enough, it aims
          one search at each best product it has not seen, by the brand and key attribute
          values a card or the customer gave (goal ``feasible`` rows carry the key attribute
          values). Redraws per task on 100k products at d = 5 / 10 / 12: 0.05 / 0.82 / 0.9,
          against 0.28 / 2.5 / 4.4 before (40 tasks each, seed 11). An open question ("Any
          other requirements?") gets every constraint: the customer answered "I don't know"
          and kept an omitted attribute the agent could not name (cards show "Black", not
          "tea type"), so only its name or "variant" could reveal it. A chatty customer says
          the stated constraints as "It has to be …", not "Ideally …", a wish an agent could
          rank instead of enforcing (1 of 20 tasks at each d ≥ 3 on 5k products).
    1.6 — the customer states their preference however they are asked how much a factor
          matters (``env.user.words.KIND_WORDS["preference"]``: "how much does price matter",
          "how important", "weigh", "favourite brands", "care", "rank"). The system prompt
          invites "how much do price, rating, delivery and brand matter to you?", and only
          "what matters", "priorities", "prefer" or "care about" got it: those questions got
          "I'm not sure, it doesn't matter to me" or only the constraints they named, on 40
          of 40 tasks (d = 1–12, 5k products), and the agent ranked blind. An attribute
          is asked for by its label's head word as in cart 1.2 ("Which system?" for a razor
          system, "Which group?" for an age group; 2 of 2 such slots in 40 tasks got "I
          don't know" or "it doesn't matter to me"). The system prompt says to ask how
          many products the customer wants when they have not said ("as many as the
          customer asks for (ask how many when they have not said)"): exactly ``k_rec`` is
          graded and the first message leaves it out on 39 of 60 tasks. An open question
          beside a specific one still gets every constraint ("requirements", "criteria",
          "features"…, ``env.user.words.OPEN_PHRASES``): "How many options would you like, and any
          other requirements?" got the count alone on 49 of 49 tasks that left a
          constraint out, "What's your budget, and any other requirements?" the budget alone
          on 26.
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
    1.7 — a ranking that ignores the stated preference no longer passes. Given every feasible
          in-stock product, the best order by one factor alone (cheapest, best-rated or
          fastest first) was correct on 58–88% of tasks at each d, a random order on 14–44%
          (5k products, 50 tasks at each of d = 0/4/8/12, both envs): at d ≥ 8, 70–78% of
          feasible sets held exactly k_rec in stock (the out-of-stock marks took every spare
          product), so only the order was graded, and the category-wide anchors spread
          delivery over 0.5–1.0 of its scale within a set but ratings over 0.2–0.26, so
          delivery outweighed a rating the customer cared about as much. Now a task leaves at
          least 2·k_rec feasible products in stock (``constraints.pool_min``: constraints and
          out-of-stock marks stop there, a change of mind keeps as many), the utility's
          anchors are the feasible products' own range (``constraints.anchors_over``; the
          customer says "4.8 stars is ideal, 3.9 stars the worst", no longer 5 and 1, and
          "$19 is ideal, $80 the worst" for those products, not the category), and a list
          must reach nDCG ≥ 0.95 (was 0.85). The best fixed order is correct on 22–30% of tasks
          at each d (each order 8–30%, random 0–6%), the stated order on 100%. Each part
          alone falls short (40 tasks): a pool of 2k at 0.85 left the best fixed order at
          60–82%, with the anchors 48–70%, at 0.9 38–52%; anchors and 0.95 with pools of k,
          35–55%. Redraws per
          task at d = 5/10/12 (5k products, 40 tasks): 0.07/0.20/0.38, against
          0.05/0.17/0.42; on 100k products (20 tasks) 0.15 and 0.45 at d = 5 and 12, against
          0.05 and 0.80. The price: in small categories fewer constraints fit (5k products:
          1.8 against 2.6 besides the category at d = 12; 100k: 4.15 against 4.5). Left
          open: a list ranked by price, rating and delivery weighed alike (what an agent
          that never asks might do) passes on 52–72% of tasks (85–100% before): most
          customers weigh those three within a factor of two of each other, and their
          favourite brands are rarely among the feasible products. Pushing it to a third
          would take nDCG ≥ 0.99 or other preference draws (the users table).
          Also, asked whether there is anything ("Is that all?", "Does the item need to be
          compatible with anything?"), a customer who has stated every fact in the question's scope
          says so (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not
          sure", and such a question no longer gets the request's own item for an answer. At the
          first turn none of 39 tasks at d = 0–12 on 5k products says "that's all" (an omitted
          constraint or the count is unsaid). Replies only.
          "What are you looking for?" ("What do you need?", "What product are you shopping for?")
          states the kind of product: it got "I'm not sure" on 29 of 29 tasks at d = 0–12 on 5k
          products. "Do you have a preferred brand?" ("Any brand preference?") states the
          preference, which names the favourite brands: it got "I'm not sure" on 15 of 15 tasks
          whose favourites count and whose brand is no constraint. A yes-or-no question about the
          item ("Is it …?") no longer gets the item's name for an answer.
          "Any particular brand?" states the preference too (15 of 15 such tasks said "I'm not
          sure"), and "Do you need it fast?" ("Are you in a hurry?", "How quickly …?") the delivery
          limit and the preference ("I'm not sure" on 29 of 29).
          Also, a proposal put to the customer is confirmed or rejected where the script can check
          it: "Is a $30 one OK?" against the budget ("Yes, please go ahead." / "No, that's not
          right: the budget is $25."), "Is the black one OK?" against a colour they hold; it got
          "I'm not sure". Of 31 tasks (d = 0–12, 3 per d, 5k products), "Is a $30 one OK?" is
          answered on the 10 holding a budget (5 yes, 5 no); a price $1 under the budget is
          confirmed on 10 of 10, one 20% over it rejected on 10 of 10. Anything else in the
          question ("the $30 Acme one") keeps "I'm not sure" (``SimulatedUser._proposal``).
          Replies only; no oracle asks it.
          Also, at d ≤ 1 the threshold is 0.85 (``constraints.ndcg_threshold``): T_max = 4
          turns of one call leave one search after asking, and at 0.95 picking the exact
          best k of the 60–190 feasible products of a 100k catalog was luck (substitution
          redrew 25.6 and 18 draws a task at d = 0 and 1, up to 46, so a 200-attempt
          run-out came about once in 3,000 tasks; discovery 6.1 and 3.8); now 2.4 / 1.4 and
          1.0 / 1.0. There a list ordered by one factor alone passes on 20–60% of tasks
          (15 at each of d = 0 and 1, 100k products).
          Also, a customer says their factors by rank (``constraints.stated_weights``): the
          largest of the users table's four weights "very much", the next "quite a lot", the
          other two "not at all", where fixed floors on the raw shares (0.4/0.25/0.1) said
          2/2/1/1 or 4/2/1/1 to most: the raw shares mostly lie within a factor of two, and 73
          of 200 customers stated price, rating and delivery within a factor of two, now none.
          A list ranked by the three weighed alike (what an agent that never asks might do),
          given every feasible in-stock product, was correct on 88/69/60/56% of tasks at
          d = 0/4/8/12 (5k products, 150 tasks each), now 73/36/25/22%; one factor alone
          15–27% at d ≥ 4, now 19–33% (the price of two named factors); the stated order
          100%. Redraws per task at d = 0/5/12 (5k products, 60 tasks): 0.05/0.07/0.38
          against 0.05/0.05/0.42; 100k (12 tasks) 0.75/0.25/0.67 against 0.67/0.17/0.75.
          Left open: at d ≤ 1 (nDCG ≥ 0.85) the even list still passes 71–73%.
    1.8 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, a price weighed against the budget without a money word ("Is $30 too much?",
          "Is $30 a lot for you?", "Is $30 affordable?", "Are you OK spending $30?") gets the
          budget stated, which answers it whichever way the question leans (16 of 16 tasks
          with a budget said "I'm not sure" to each, d = 2–12, 5k products; none now), and "Can
          you go up to $60?" is a proposal like "Would $60 be OK?". Replies only.
    1.9 — a product, variant or order id holding a NUL names nothing (a fixed-width id array
          compared "ID" and "ID" + NUL equal): NUL-padded copies of one product counted as k
          distinct real recommendations and as products the stock check did not know.
          The oracle's first pick padded k ways scored r_task 1.0 (reward +0.83) at d = 3
          and 8 on 5k products; now −1 (−0.83). Every task id changes with the version.
    1.10 — the customer understands the everyday words an assistant asks in (``env.user``:
          ``_MONEY``, ``_DAYS``, ``_QTY``, ``_WHICH_ORDER``, ``_CONDITION``, ``NAME_WORDS``,
          ``WEAK_WORDS``, ``_OPEN``, ``EXCHANGE_WORDS``). An audit asked 20,704 questions that
          name a fact, phrased as a capable assistant would, on 350 tasks of all eight
          environments (5k products, d = 2–12); 77.0% got the fact, now 98.8%, and none
          answered before is missed now. Each of these got "I'm not sure" on every task that
          left its fact out: "What's the most you'd like to pay?", "What's your spending
          limit?" (447 asks), "Do you have a deadline?", "How long can you wait?" (364), "What
          are you buying?", "Any particular style?", "How many products should I recommend?";
          and an open question in other words ("What else should I know?", "Tell me more",
          "Can you give me more information?") gets every constraint as "Any other
          requirements?" does ("What else should I know?" got "I don't know" on 31 of 64
          discovery and substitution tasks that left one out). Replies only; tasks are drawn
          as before (the oracles' transcripts are byte-identical on 224 tasks of all eight
          environments). Every task id changes with the version.
          Also, a list recommended without asking for the preference and every fact the first
          message left out (``verifiers.ranking.asked_verdict``; what a change of mind states
          is said unasked) earns at most 0 and is not correct, as a guessed cart, bundle or
          return already did: ranked by rating alone without asking, it was correct on 7 of 13
          discovery and substitution tasks whose first message left out nothing but the
          preference, and the oracle's own transcript without its question on every task (5k
          products). A new degenerate policy, ``recommend_top_hits`` (the first three in-stock
          hits of the customer's words), is checked with the others. And a customer asked
          openly for more ("Any other details?") who holds facts the question reaches none of
          asks what the agent wants to know (reply kind ``ask_specific``, "What would you like
          to know exactly?"), where they said "I don't know", which told the agent there was
          nothing more (11 of 30 cart tasks that left a detail out, 5k products); with every
          fact said, "that's all".
          Also, the customer matches questions on word stems (Snowball's English stemmer,
          ``env.user.stems``), so one listed form answers the others ("urgently" and
          "urgent", "dropping it off" and "drop it off", "well-reviewed" and "review"). On a
          held-out bank of 292 questions (16,086 asks, 5k products, d = 2–12) the customer
          answered 65.1%; stems alone made it 69.5%, and words added for its most common
          misses 80.7% (the first bank: 98.9% → 99.0%). Replies only.
          Also, typo noise keeps numbers as written (``gen.noise``): no typo falls on a digit
          or next to one, and none types a digit. An audit of 520 first messages (all eight
          environments, d = 0–12, 5k products) found 13 numbers changed or glued to a word
          ("64GB" → "6GB", "65%" → "56%", "send 7o ptions") and 12 digits typed where none was
          ("into my cart 3 me", read as a quantity). Every noisy first message changes.
          Also, a change of budget changes what is correct (``recsearch.settle``). A budget
          raised by a quarter mostly let in nothing the customer ranks among the best: the
          list best under the first budget still passed on 21 of 25 raises (5k products, d =
          2–12, 12 tasks each) and 11 of 12 (100k, 6 each), so an agent that ignored the
          change of mind was correct. Such a raise is now a lowered budget (switch kind
          ``lower_budget``), a whole dollar under the dearest product of that list, lowered
          again until the list breaks it with the episode's final stock; where that leaves
          fewer than pool_min(k) in stock the raise stays. Budget changes the ignoring list
          still passes: 15 of 25 and 4 of 11. The share of tasks with a change of mind is
          unchanged (nothing is redrawn).
    1.11 — the system prompt states the turn and call budget the task is played with
          (``taskgen.default_prompt``, ``templates/budget.j2``): at d = 0–1 the oracle uses
          every turn (12 of 12 tasks at each, 5k products), and an agent doing more than it
          did ran out of turns before it recommended. Every task id changes with the version.
          Also, the preference and left-out facts must have been heard before the list
          recommended (bundle 1.8's ``as_asked`` ordering): a list recommended first and asked
          about after was graded as asked.
          Also, typo noise never makes a word a negation (``gen.noise.NEGATIONS``: "check on
          my order" read "check no my order", "now" read "no"): 5 of 576 first messages of
          all eight environments (d = 4–12, 5k products) and 3 of 171 bundle changes of mind
          said a "no" the customer never meant. The same holds for every environment's
          messages and replies.
    1.12 — a customer holding no brand or delivery limit answers "Which brand do you want?"
          and "How soon do you need it delivered?" with their priorities, which name their
          favourite brands and how much speed matters: of 130 tasks (5k, d = 0–12) 123 and 52
          got "I'm not sure"; none now. A held limit is still the answer alone
          (``env.user.words.WEAK_WORDS["preference"]``). Replies only; every task id changes with
          the version.
    1.13 — a phrase inside a longer one asking for another fact asks nothing of its own
          (``env.user.matching._outmatched``): "How many units do you need?", "How many of each?" and
          "How many days ago did it arrive?" got the number of options by "how many" (65 of
          65 tasks each, 5k, d = 0–12; 23 of 65 for the last); "I don't know" now. Replies
          only; every task id changes with the version.
    1.14 — the customer understands more wordings: a paraphrase bank of agents' questions
          written apart from the customer (486: six wordings of each of the customer audit's
          81 questions) found wordings it did not understand. "What sort of product are we
          talking about?" gets the kind of product (it got "I don't know"); questions of other
          environments ("How would you prefer to return it?", "What kind of shipping did you
          go with?") get "I don't know", where they got the priorities or the delivery time.
          Replies only; every task id changes with the version.
    1.15 — the customer against a second bank of agents' questions written apart from it
          (216: six wordings of each of 36 facts, asked of 280 tasks of seven environments,
          5k, d = 0–12). "Which factor should I prioritize?", "What's the deciding factor for
          you?" and "What's your top consideration?" get the priorities (80 of 80 got "I don't
          know" each), "How long a shortlist should I put together?" the number of options (80
          of 80), "Within how many days does this need to be delivered?" the delivery time (47
          of 47), "What can I help you find?" and "Product type?" the kind of product (40 of
          40). Where an order ships is no question of when: "What state is it shipping to?",
          "Delivering to which state?" and "Where are you shipping it?" got the delivery time
          (26 of 40), as a "to" after a shorter phrase is its preposition; "how", "when" and
          "where" in a longer phrase say which fact is asked ("When did you make the order?"
          got the brand by "make"). A question is read in phrases as long as the longest that
          asks for any fact, whatever the script holds: whether a longer phrase outmatched a
          shorter one depended on the script's own longest phrase. Replies only; every task id
          changes with the version.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.slots import Slot, make_slot
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick
from shopgen.gen.tasks.constraints import (
    choose_constraints,
    constraints_from,
    draw_category,
    goal_fields,
    pool_min,
    preference_fact,
    tables,
    visible_attrs,
)
from shopgen.gen.tasks.recsearch import (
    ask_question,
    final_values,
    plan_change,
    play,
    query,
    settle,
    to_ask,
)
from shopgen.schemas.task import TaskRow

#: Constraint kinds besides attributes, in the order slots are listed.
KINDS = ("price_max", "rating_min", "ship_days_max", "brand")


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a target product, m−1 constraints it meets, a customer, a switch, the feasible set."""
    k = int(axes.k_rec)
    category = draw_category(ctx, rng)
    cols = tables(ctx).columns(category)
    target = cols.row(int(rng.integers(len(cols))))
    if target["stock_qty"] <= 0:
        raise Redraw("the target product is out of stock in the catalog")
    pool = [*KINDS, *(f"attrs.{a}" for a in visible_attrs(ctx, target))]
    values = choose_constraints(cols, target, pool, int(axes.m) - 1, pool_min(k), rng)
    user_id = pick(rng, ctx.user_ids)
    name = tables(ctx).said_name(category)
    slots: list[Slot] = [make_slot("discovery", "category", name, required=True)]
    slots += [make_slot("discovery", kind, values[kind]) for kind in values]
    slots.append(make_slot("discovery", "k_rec", k))
    visible = tables(ctx).visible(category)
    switch = plan_change("discovery", cols, slots, values, k, axes, rng, visible=visible)
    switch, cons, pref, fs = settle(
        ctx,
        cols,
        values,
        switch,
        partial(constraints_from, category),
        user_id,
        k=k,
        d=d,
        p_oos=float(axes.p_oos),
        rng=rng,
    )
    goal = {
        "category_name": name,
        "constraints": cons.to_dict(),
        "preference": pref.to_dict(),
        **goal_fields(ctx, cons, fs, k, d),
    }
    episode = {"user_id": user_id, "out_of_stock": fs.out_of_stock, "today": ctx.today.isoformat()}
    facts = {"priority": preference_fact(pref)}
    return Draft(slots=tuple(slots), goal=goal, episode=episode, switch=switch, facts=facts)


def said_words(slots: dict[str, dict[str, Any]], *, known: bool) -> list[Any]:
    """Searchable constraint words: brand and attribute values (said ones, or all if known)."""
    out = []
    for name, s in slots.items():
        if (name == "brand" or name.startswith("attrs.")) and (known or not s["omitted"]):
            out.append(s["value"])
    return out


def oracle(task: TaskRow) -> Oracle:
    """Ask for what was omitted and the preference, search, recommend the best shown list.

    The first turn asks (:func:`~shopgen.gen.tasks.recsearch.to_ask`) and, when B_tool
    allows a second call, searches with what was said; with a change of mind (said after the
    first turn) the later searches use the final values.
    """
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    slots = {s["name"]: s for s in script["slots"]}
    finals = final_values(slots, script.get("switch"))
    asked = to_ask(slots)
    name = goal["category_name"]
    said = query(*said_words(slots, known=False), name)
    first = [call("ask_user", question=ask_question(asked))] if asked else []
    if task.axis("B_tool") > 1 or not first:
        first.append(call("catalog_search", query=said))
    full = query(*said_words(finals, known=True), name)
    queries = [] if any(c[0] == "catalog_search" for c in first) and full == said else [full]
    attrs = list(goal["constraints"]["attrs"].values())
    return play(
        task,
        goal,
        script,
        first=first,
        queries=queries,
        focus_query=lambda *terms: query(*terms, *attrs, name),
        final=f"Here are {goal['k_rec']} {name} that meet all your requirements, best first:",
    )
