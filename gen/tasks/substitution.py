"""substitution — "this is out of stock, what else fits?".

Customer wants:
    k_rec(d) substitutes for a product they looked at (it is in their visit history) that is
    out of stock in the episode. A substitute must be compatible — same leaf category and the
    same values of the leaf's ``compat`` attributes (from the taxonomy; only attributes the
    original has), of the original's kind and audience when the leaf holds several (a leash
    for a leash, a boys' coat for a boys' coat: ``original_kind``, read from titles) — cost
    at most 1.2× the original (``price_max``), and meet up to m(d) − 2
    further constraints (rating, shipping days, brand, other attributes) drawn from a real
    compatible product, so the set is never empty. Omitted constraints must be asked for.
    Decidable from cards: compat and attribute values are key attributes a card lists
    (originals whose compat value a card does not show are redrawn), and the preference is
    stated in full when asked (the ``priority`` fact, as in discovery).
    With p_switch(d) they change one constraint after the first turn: a raised price ceiling
    (×1.25; lowered instead where a raise would change no answer, ``recsearch.settle``) or
    another value of a stated non-compat attribute (``recsearch.plan_change``).
Tools offered:
    catalog_search, catalog_get_product, catalog_get_variants, user_get_visit_history,
    recommend_products, ask_user.
Hidden goal:
    as discovery (``constraints`` with the compat attributes and the original excluded,
    ``preference``, ``feasible``, ``product_ids``, ``k_rec``, ``ndcg_threshold``), plus
    ``original_id`` and ``compat`` (attribute → value that must match), ``kind`` (the
    original's nouns) and ``audience`` (attribute → value) when the leaf has them; the
    constraints hold them too (``kind``/``other_kinds``, the audience among ``attrs``).
Reward and is_correct:
    ``verifiers.substitution`` via ``verifiers.ranking.grade``: compatibility is a hard
    constraint like the others; correct iff exactly k_rec substitutes, all compatible, feasible
    and in stock, with nDCG ≥ 0.95 (0.85 at d ≤ 1) against the ideal list (findable by construction, see
    ``gen.tasks.recsearch``).
Difficulty axes used:
    m, k_rec, p_missing, p_oos (feasible substitutes marked out of stock), top_k and eps_rank
    (search), p_switch (a changed constraint; the goal is the final intent), T_max, B_tool,
    p_noise.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    1.1 — p_switch: a changed price ceiling or attribute value, said after the first turn.
    1.2 — decidable from cards: attribute constraints only on key attributes whose value names
          that attribute alone in the category (``constraints.visible_attrs``); the
          ``priority`` fact states the whole preference (four factors in weight order with a
          strength word each, ``Preference.statement``) and the ranking uses exactly the
          stated weights (``constraints.LEVELS``).
    1.3 — as discovery 1.4: the stated preference names the utility's anchors (exactly
          computable from cards), nDCG gains are utilities above the goal's ``gain_floor``
          at a threshold of 0.85, and the oracle asks for the preference; worst-first lists
          of feasible substitutes were correct on 40% of tasks and search order on 65% (now
          0% and 28%, cat5k, n = 40).
    1.4 — the oracle searches only with words it was told or shown
          (``recsearch.KnownWords``): it searched the brands of the best substitutes it had
          not seen, which no card had shown and the customer never said (at d = 12, 51 of 133
          searches on 5k products, typo corrections aside), so a task could be solvable only
          by knowing the answer. Once its searches by the product's name are not enough, it
          aims one search at each best substitute it has not seen, by the brand and key
          attribute values a card or the customer gave (goal ``feasible`` rows carry the key
          attribute values). Redraws per task on 100k products at d = 5 / 10 / 12: 0.17 /
          0.5 / 0.6, against 0.65 / 13.3 / 18.6 before, when 40 attempts gave up on 5–12% of
          tasks at d ≥ 10 and aborted the run (40 tasks each, seed 11). An open question
          gets every constraint, as in discovery 1.5. Asked which features a substitute must
          share ("must match", "compatible", …, or openly), the customer names the compat
          values (``compat_facts``): the system prompt asks for "the features that must match"
          and nothing answered which they are. The system prompt asks for substitutes within
          the customer's budget ("a substitute may cost less than the original"), not "at a
          similar price": the budget is the only price graded, and 96 of 100 tasks at d = 0–12
          on 5k products ranked a product under 70% of the original's price in the ideal
          list. A chatty customer says constraints as "It has to be …", not "Ideally …".
    1.5 — the product id the customer names in the first message ("(item B02VNNMGUS)")
          counts as shown (``env.episode._said_ids``): an agent that looked it up with
          catalog_get_product was charged a hallucinated id (r_hall −0.2, never correct),
          on 7 of 20 tasks at d = 1–12 on 5k products. As discovery 1.6, the customer
          states their preference however they are asked how much a factor matters (39 of
          40 tasks answered "how important are price, rating, delivery and brand?" without
          it before). An attribute is asked for by its label's head word as in cart 1.2
          ("Which type?" for a litter type). The features a substitute must share are also
          asked for by "match", "same", "in common" and "work with" (``COMPAT_WORDS``): "What
          must it have in common with the original?" or "What should the replacement
          match?" got "I don't know" on 5 of 5 tasks with compat values in 60. The system
          prompt says how many substitutes to recommend: as many as the customer asks for,
          asking when they have not said. It named no number while exactly ``k_rec`` (3–7)
          is graded, the first message leaves it out on 38 of 60 tasks, and most of its
          wordings ask for one ("Would you kindly recommend a substitute?", "Give me a
          replacement", "Find me the closest alternative"). An open question beside a
          specific one still gets every constraint, as in discovery 1.6 (the count alone on
          47 of 47 tasks that left a constraint out, the budget alone on 39).
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
    1.6 — a substitute is of the original's kind and for the same people: a leaf may hold
          several kinds (collars, harnesses and leashes; boxer briefs and trunks; jackets and
          coats: the taxonomy's ``kinds``, 33 leaves) or audiences (boys', girls' and unisex
          kids'; men's and women's: ``audience``, 19 leaves), and the feasible set and ideal
          list held any of them, so an agent recommending leashes for a leash failed nDCG. On
          5k products 17 / 17 / 24 / 20 of 100 tasks at d = 0 / 5 / 10 / 12 ranked a product
          of another kind or audience in the ideal list (21 / 18 / 26 / 20 in the feasible
          set), on 100k 5 and 8 of 30 at d = 5 and 12; none now. Decidable from cards: the
          kind is the longest of the leaf's nouns the title holds (``gen.tasks.kinds``), the
          audience value is in the title too; the grader reads the title
          (``recommend_products`` records it) and breaks "kind" or the audience attribute.
          Asked whether another kind would do, what kind or type, whom it is for, or what it
          must match, the customer says it ("the kind is Dog Leash, not Dog Collar or Dog
          Harness", "the audience is Girls'"). Redraws per task on 5k products at d = 5 / 10
          / 12: 0.46 / 0.98 / 1.59, from 0.32 / 0.83 / 1.22 (100 tasks each; the added ones
          are the cheap early "too few compatible substitutes" draws: a kind or audience of
          a 5k leaf holds a handful of products, so fewer tasks come from such leaves, 10 /
          14 / 5 of 100 from 18 / 27 / 20). Heuristic baseline at d = 0 / 4 / 8 / 12:
          20 / 17 / 10 / 5 of 24, from 23 / 20 / 10 / 4: it recommended other audiences and
          kinds, which the grader now counts. The system prompt says substitutes are "the
          same kind of product for the same people, as the titles name them".
          Also, as discovery 1.7, a ranking that ignores the stated preference no longer passes: at
          least 2·k_rec feasible substitutes stay in stock (``constraints.pool_min``), the
          utility's anchors are the feasible substitutes' own price, rating and delivery
          range, and a list must reach nDCG ≥ 0.95. Given every feasible in-stock
          substitute, the best order by one factor alone was correct on 68–88% of tasks at
          d = 0/4/8/12 (fastest first 68–88%, cheapest first 46–60%; 5k products, 50 tasks
          each), now 24–30% (each order 8–30%); the stated order on 100%. Redraws per task
          at d = 5/10/12 (5k products, 40 tasks): 1.07/1.55/2.30 against 0.47/0.85/1.07, all
          of the increase cheap rejections before the oracle plays (fewer than 2·k_rec
          compatible or feasible substitutes in stock; the findability check redraws 2/0/0
          tasks against 2/7/5); on 100k products (20 tasks) 0.15 and 0.40 at d = 5 and 12,
          against 0.10 and 0.95.
          Also, asked whether the substitute must be compatible with, work with or match anything
          (``COMPAT_WORDS``) when the original's must share no feature, the customer says "No,
          nothing in particular" (reply kind ``nothing``): 42 of 47 tasks at d = 0–12 on 5k
          products (6 per d, those whose change of mind is said first left out) have no such
          feature, and "Does the replacement product need to be compatible with anything?" got
          "the product is <the original>" on all 42, "Does it need to work with anything in
          particular?" "I'm not sure" on all 42; now "nothing in particular" on every one. Asked whether there is anything ("Is that
          all?", "Anything else I should add?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope, in the first
          message or a reply, says so (new reply kinds ``all_said``: "Nothing else, that's all.",
          and ``nothing``), where they said "I'm not sure"; one with a fact unsaid still does not
          know. Such a question no longer gets the request's own item or product for an answer: the
          bare noun matched the item's label, and the customer said "the item is <the item>".
          "Do you have a preferred brand?" states the preference, which names the favourite brands
          ("I'm not sure" on 16 of 16 tasks whose favourites count and whose brand is no constraint,
          d = 0–12 on 5k products). A yes-or-no question about the product ("Is the product still
          needed in black?") no longer gets the original's name for an answer.
          "Any particular brand?" states the preference too (16 of 16 such tasks said "I'm not
          sure"), and "Do you need it fast?" the delivery limit and the preference ("I'm not sure"
          on 23 of 23 at d = 0–12, 3 per d, 5k products).
          Also, a proposal put to the customer is confirmed or rejected where the script can check
          it (discovery 1.7's): "Is a $30 one OK?" is answered on 24 of 24 tasks (18 yes, 6 no,
          d = 0–12, 3 per d, 5k products), a price $1 under the budget confirmed and one 20% over
          rejected on 24 of 24 each, where all got "I'm not sure". Replies only.
          Also, as discovery 1.7: a list must reach nDCG ≥ 0.85, not 0.95, at d ≤ 1, where one
          search is allowed (substitution had redrawn 25.6 and 18 draws a task at d = 0 and 1 on
          100k products, 2.4 and 1.4 now).
          Also, asked whether the substitute must share one feature with the original, or what
          it must share ("Does it need the same fit as the original?", "Does it need to match
          the original's size?", "What must it have in common with the original?"), a customer
          whose original must share none says "No, nothing in particular", where they said
          "I'm not sure" and an agent could not tell "any fit will do" from "I forget which":
          18 of 18 compat-free tasks whose change of mind was not said first, of 50 at d = 2 /
          5 / 8 / 11 / 12 on 5k products, for each of four such wordings; none now. Not "fit"
          alone ("Does it need a relaxed fit?") nor a proposal ("Is the same one fine?"); a
          kind or audience is still named (9 of 9 such tasks). A question of those that asks
          for requirements too ("Which features must it share with the original?", "Does it
          need to match any feature of the original?": "feature") got the unsaid constraints, or
          the said ones again (6 of 29 compat-free tasks without a change of mind), and never
          that no feature must be shared; the reply now ends so ("Sure: the budget is $44. No,
          nothing in particular.") on 29 of 29, unless a kind or audience must be. Replies only.
          Also, as discovery 1.7: a customer says their factors by rank, the top one "very
          much", the next "quite a lot", the other two "not at all". A list ranked by price,
          rating and delivery weighed alike, given every feasible in-stock substitute, was
          correct on 84/60/62/66% of tasks at d = 0/4/8/12 (5k products, 150 tasks each), now
          71/31/23/19%; one factor alone 13–28% at d ≥ 4, now 22–35%; the stated order 100%.
          Redraws per task at d = 0/5/12 (5k products, 60 tasks): 1.53/1.72/3.13 against
          1.52/1.65/3.23; 100k (12 tasks) 1.50/0.33/0.50 against 2.42/0.42/0.42.
    1.7 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, as discovery 1.8: a price weighed against the budget without a money word ("Is
          $30 too much?") gets the budget stated (34 of 34 tasks with a budget said "I'm not
          sure" to each of four wordings, d = 2–12, 5k products; none now). Replies only.
    1.8 — a product, variant or order id holding a NUL names nothing (a fixed-width id array
          compared "ID" and "ID" + NUL equal): NUL-padded copies of one product counted as k
          distinct real recommendations and as products the stock check did not know.
          The oracle's first pick padded k ways scored r_task 1.0 (reward +0.83) at d = 3
          and 8 on 5k products; now −1 (−0.83). Every task id changes with the version.
    1.9 — the customer understands the everyday words an assistant asks in, as discovery
          1.10's ("What's your spending limit?", "How long can you wait?", "How many products
          should I recommend?", "What else should I know?"). Replies only; every task id
          changes with the version.
          Also, graded as discovery 1.10: a list recommended without asking for the
          preference and the left-out facts earns at most 0 and is not correct.
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
          Also, a change of budget changes what is correct, as discovery 1.10's: the list best
          under the first budget passed 51 of 60 budget changes (5k products) and 23 of 24
          (100k); now 43 of 60 and 15 of 24 (tight substitute pools leave fewer budgets to
          lower).
    1.10 — the system prompt states the turn and call budget, as discovery 1.11's does
          (at d = 0–1 the oracle uses every turn). Every task id changes with the version.
          Also, what must be asked counts only when heard before the list recommended, as
          discovery 1.11 tells.
    1.11 — as discovery 1.12: "Which brand do you want?" and "How soon do you need it
          delivered?" get the priorities where no limit is held (130 and 74 of 130 tasks got
          "I'm not sure"; none now)
          (``env.user.words.WEAK_WORDS["preference"]``). Replies only; every task id changes with
          the version.
    1.12 — as discovery 1.13 ("How many units do you need?": the number of options on 65
          of 65 tasks), and "What kind of product?" gets the kind alone, not the original
          product besides: a fact asked of the item no longer says the item back (6 of 65).
          Replies only; every task id changes with the version.
    1.13 — as discovery 1.14: questions of other environments ("Where are we shipping this
          order to?", "How would you prefer to send it back?") get "I don't know", where they
          got the priorities, and "What did you order?" the original product. Replies only;
          every task id changes with the version.
    1.14 — as discovery 1.15: the priorities, the number of options and "Within how many
          days …?" are understood in the second bank's wordings, and "What state is it
          shipping to?" no longer gets the delivery time (21 of 40 tasks). Replies only; every
          task id changes with the version.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from shopgen.gen.difficulty import Theta
from shopgen.gen.slots import COMPAT_WORDS, Slot, make_slot, slot_label
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, pick
from shopgen.gen.tasks.constraints import (
    Constraints,
    choose_constraints,
    constraints_from,
    draw_category,
    goal_fields,
    pool_min,
    preference_fact,
    tables,
    visible_attrs,
)
from shopgen.gen.tasks.kinds import title_noun
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
from shopgen.schemas.taxonomy import Category

#: A substitute may cost at most this much more than the original.
PRICE_FACTOR = 1.2
#: Other products the visit history shows besides the original.
HISTORY_OTHERS = 3


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw the original, its compatibility, constraints a real substitute meets, the set."""
    k = int(axes.k_rec)
    category = draw_category(ctx, rng)
    cols = tables(ctx).columns(category)
    original = cols.row(int(rng.integers(len(cols))))
    leaf = tables(ctx).leaf(category)
    compat = {a: original[f"a.{a}"] for a in leaf.compat if original.get(f"a.{a}")}
    visible = tables(ctx).visible(category)
    if any(v not in visible.get(a, ()) for a, v in compat.items()):
        raise Redraw("a compatibility value search cards do not show")
    kind, others = original_kind(leaf, original["title"])
    audience = {a: v for a in (leaf.audience,) if a and (v := original.get(f"a.{a}"))}
    same = {"attrs": {**compat, **audience}, "kind": kind, "other_kinds": others}
    price_max = float(math.ceil(original["price"] * PRICE_FACTOR))
    base = Constraints(
        category=category, price_max=price_max, exclude=(original["product_id"],), **same
    )
    candidates = np.flatnonzero(base.mask(cols) & cols.in_stock)
    if len(candidates) < k:
        raise Redraw(f"only {len(candidates)} compatible substitutes in stock")
    model = cols.row(int(candidates[int(rng.integers(len(candidates)))]))
    pool = ["rating_min", "ship_days_max", "brand"]
    pool += [f"attrs.{a}" for a in visible_attrs(ctx, model) if a not in same["attrs"]]
    values = choose_constraints(
        cols, model, pool, max(0, int(axes.m) - 2), pool_min(k), rng, base=base
    )
    stated = {"price_max": price_max, **values}
    title = original["title"].split(",")[0]
    slots: list[Slot] = [
        make_slot("substitution", "product_title", title, required=True),
        make_slot("substitution", "product_id", original["product_id"]),
        make_slot("substitution", "price_max", price_max),
        *(make_slot("substitution", kind, v) for kind, v in values.items()),
        make_slot("substitution", "k_rec", k),
    ]
    no_price = Constraints(category=category, exclude=(original["product_id"],), **same)
    switch = plan_change(
        "substitution", cols, slots, stated, k, axes, rng, base=no_price, visible=visible
    )
    user_id = pick(rng, ctx.user_ids)
    switch, cons, pref, fs = settle(
        ctx,
        cols,
        stated,
        switch,
        partial(constraints_from, category, exclude=(original["product_id"],), **same),
        user_id,
        k=k,
        d=d,
        p_oos=float(axes.p_oos),
        rng=rng,
    )
    goal = {
        "original_id": original["product_id"],
        "category_name": leaf.name.lower(),
        "compat": compat,
        **({"kind": list(kind)} if kind else {}),
        **({"audience": audience} if audience else {}),
        "constraints": cons.to_dict(),
        "preference": pref.to_dict(),
        **goal_fields(ctx, cons, fs, k, d),
    }
    episode = {
        "user_id": user_id,
        "visit_history": _history(ctx, original, rng),
        "out_of_stock": [original["product_id"], *fs.out_of_stock],
        "today": ctx.today.isoformat(),
    }
    facts = {
        "priority": preference_fact(pref),
        **compat_facts(compat),
        **kind_facts(kind, others, audience),
    }
    return Draft(slots=tuple(slots), goal=goal, episode=episode, switch=switch, facts=facts)


def compat_facts(compat: dict[str, str]) -> dict[str, dict[str, Any]]:
    """What the customer says, asked, about the features a substitute must share.

    The system prompt says substitutes must match "the features that must match", and which
    those are is the taxonomy's: asked ("Which features must it share with the original?", or
    openly), the customer names them ("the dog size is Medium"). Before, nothing answered it.
    """
    return {
        f"compat.{name}": {
            "value": value,
            "kind": "attr",
            "label": slot_label(name),
            "keywords": COMPAT_WORDS,
        }
        for name, value in compat.items()
    }


def original_kind(leaf: Category, title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The original's kind (its nouns) and the leaf's other kinds' nouns; both empty if one kind.

    A leaf of several kinds (``Category.kinds``: collars, harnesses, leashes) takes only
    substitutes of the original's: a customer whose leash is out of stock wants another leash.
    The kind is read from the title (``gen.tasks.kinds``), as an agent reads it on a card.

    Raises:
        Redraw: the title holds none of the leaf's nouns (the taxonomy's titles always do).
    """
    if not leaf.kinds:
        return (), ()
    noun = title_noun(title, [n for group in leaf.kinds for n in group])
    mine = next((tuple(group) for group in leaf.kinds if noun in group), None)
    if mine is None:
        raise Redraw(f"no noun of {leaf.id} in the title {title!r}")
    return mine, tuple(n for group in leaf.kinds if tuple(group) != mine for n in group)


#: How an agent asks whether a substitute must be of the same kind or for the same people.
KIND_WORDS = [
    "kind",
    "type",
    "same kind",
    "same type",
    "any kind",
    "any type",
    "any of them",
    "gender",
    "who is it for",
    "for whom",
    "boys",
    "girls",
    "men",
    "women",
    "unisex",
]


def kind_facts(
    kind: tuple[str, ...], others: tuple[str, ...], audience: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """What the customer says, asked, about the kind of product a substitute must be.

    A leash for a leash, a boys' jacket for a boys' jacket: asked whether another kind would
    do ("Would a harness be fine?", "Does it have to be the same type?") or whom it is for,
    the customer says the original's kind ("a Dog Leash, not a Dog Collar or Dog Harness")
    and audience ("the audience is Boys'"), as the grading requires. The other kinds' nouns are question
    words too: naming one asks whether it would do.
    """
    out: dict[str, dict[str, Any]] = {}
    if kind:
        words = [*KIND_WORDS, *COMPAT_WORDS, *kind, *others]
        named = " or ".join(kind)
        value = f"{named}, not {' or '.join(others)}"
        out["kind"] = {"value": value, "kind": "attr", "label": "kind", "keywords": words}
    for name, value in audience.items():
        out[f"audience.{name}"] = {
            "value": value,
            "kind": "attr",
            "label": "audience",
            "keywords": [*KIND_WORDS, *COMPAT_WORDS],
        }
    return out


def _history(ctx: GenContext, original: dict, rng: np.random.Generator) -> list[dict]:
    """Recent views, newest first: the original among a few other products."""
    store = ctx.store
    rows = [int(r) for r in rng.integers(store.products.height, size=HISTORY_OTHERS)]
    views = [
        (store.product_field_at(r, "product_id"), store.product_field_at(r, "title")) for r in rows
    ]
    views.insert(int(rng.integers(len(views) + 1)), (original["product_id"], original["title"]))
    return [
        {"product_id": pid, "title": title, "viewed_at": ctx.days_ago(i + 1)}
        for i, (pid, title) in enumerate(views)
    ]


def oracle(task: TaskRow) -> Oracle:
    """Ask for what was omitted and the preference, search by the product's name, recommend.

    The first turn asks (:func:`~shopgen.gen.tasks.recsearch.to_ask`); with a change of mind
    (said after the first turn) the later searches use the final values.
    """
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    slots = {s["name"]: s for s in script["slots"]}
    asked = to_ask(slots)
    title = slots["product_title"]["value"]

    def words(known: dict[str, dict[str, Any]], *, all_known: bool) -> list[Any]:
        return [
            s["value"]
            for n, s in known.items()
            if (n == "brand" or n.startswith("attrs.")) and (all_known or not s["omitted"])
        ]

    first = [call("ask_user", question=ask_question(asked))] if asked else []
    if script.get("switch") and not first:
        first.append(call("catalog_search", query=query(*words(slots, all_known=False), title)))
    # The kind and audience a substitute must share narrow the searches aimed at one product.
    kind = [n for n in goal.get("kind", ()) if n.lower() in title.lower()][:1]
    compat = [*goal["compat"].values(), *goal.get("audience", {}).values(), *kind]
    finals = final_values(slots, script.get("switch"))
    full = query(*words(finals, all_known=True), title)
    return play(
        task,
        goal,
        script,
        first=first,
        queries=[] if first and first[-1][1].get("query") == full else [full],
        focus_query=lambda *terms: query(*terms, *compat, goal["category_name"]),
        final=f"{title} is out of stock; here are {goal['k_rec']} compatible substitutes:",
    )
