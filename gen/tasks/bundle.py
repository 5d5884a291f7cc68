"""bundle — "everything I need for my project".

Customer wants:
    one product of each kind their project needs ("weekend camping trip": a tent, a sleeping
    bag, a lantern), each in stock, and, from d = 1 on more and more often, the whole set
    within a budget. The kinds are a subset of one taxonomy project's categories (the customer
    already owns the rest), named by a noun of each category ("sleeping bag"). The customer
    lists them in the first message or, with probability p_missing(d), names only the project
    and lists them when asked (then never every kind of the project, so the list cannot be
    guessed from the project); a stated budget is always said, so nothing needed is unknowable.
Tools offered:
    catalog_search, catalog_get_product, catalog_get_variants, recommend_products, the cart
    tools (not graded), ask_user.
Hidden goal:
    ``{project, categories: [{category, noun, aliases}], budget, listed}``. Every
    ``category`` is a leaf id of the catalog's own taxonomy (the products' ``category_id``);
    ``noun`` (what the customer says) and ``aliases`` (the category's other names) are words
    that, in this catalog, appear only in titles of that category — so a search card's title
    tells what kind of product it is. ``budget`` (whole dollars or
    None) is ≥ the sum of the cheapest in-stock product of each category, with slack that
    shrinks as d grows.
Reward and is_correct:
    ``verifiers.bundle`` reads the runtime's ``recommended_facts``: coverage F1 between the
    recommended products' categories (only in-stock ones cover) and the required ones, halved
    when the total price exceeds the budget; r_task = 2·that − 1 (−1 with no recommendation).
    Correct iff every required category is covered exactly once, by in-stock products only,
    within budget. A withheld list must have been asked for (its must-have slots answered):
    otherwise r_task is at most 0 and the task is not correct.
Difficulty axes used:
    p_missing (the list is withheld), p_oos (the cheapest products of each category are out of
    stock in the episode), p_switch (lower the budget / add a kind mid-conversation), top_k and
    eps_rank (what each search shows), T_max and B_tool (how many kinds fit the turns), p_noise;
    the local schedules :func:`n_categories`, :func:`p_budget` and :func:`budget_quantile`.
Episode end:
    the first assistant message without a tool call.
Version history:
    1.0 — first version.
    1.1 — a withheld list holds fewer kinds than the project has. Before, in 10 of 17 withheld
          draws it held every kind, and recommending the whole project without asking was
          correct on 46% of tasks (d 0–12, 5k products).
    1.2 — a listed first message says the list is complete ("…, and all I need is a tent and
          a lantern"). It said "put together everything I need…, and it has to include a tent
          and a lantern", a minimum, while any kind beyond the list is graded wrong; asking
          "only these?" got "it doesn't matter to me". The listed kinds are fewer than the
          project's in 40/40, 30/40, 13/40, 2/40 and 0/40 tasks at d = 0/2/4/8/12 (5k
          products), so an agent completing the project failed there. Goals are unchanged.
          A customer who does not know the answer no longer says it does not matter ("I'm not sure,
          it doesn't matter to me", "No idea. Doesn't matter."): said to any question the script
          does not answer, it told an agent asking which order or which format that any would do (13
          of 90 unanswerable questions in journey, cart and status tasks at d = 4/8/12 on 5k
          products). Replies only; tasks are drawn as before.
          A must-have a change of mind adds is said as extra ("the extra must-have should be
          sleeping bag as well", as cart's added items are): "the must-have is now sleeping
          bag" read as a swap for one of the kinds said, and asked which, the customer did not
          know (5 of 100 tasks at d = 4–12 on 5k products add one). Replies only.
    1.3 — a must-have added by a change of mind is in the customer's list once said: "Which items do
          you need for the project?" (the oracle's question) and "Can you list everything again?"
          left it out (2 of 2 tasks of 78 at d = 0–12 on 5k products that add one; now none).
          Replies only.
          Asked whether there is anything ("Is that all?", "Does the item need to be compatible with
          anything?"), a customer who has stated every fact in the question's scope says so
          (``env.user``: reply kinds ``all_said`` and ``nothing``), where they said "I'm not sure",
          and such a question no longer gets the request's own item for an answer. "Is that all?" at
          the first turn gets "that's all" on 4 of 39 tasks at d = 0–12 on 5k products (the others'
          first messages leave a must-have or the budget unsaid).
          Also, a product's price proposed over the bundle's budget is rejected ("Is a $44 one
          OK?": "No, that's not right: the budget is $36."; 33 of 33 tasks with a budget, d = 0–12,
          3 per d, 5k products), where it got "I'm not sure"; a price under it still does (the
          other products must fit too). Replies only.
    1.4 — a non-native customer's answer opens "Sorry," where it opened "Yes,": answers also
          reply to yes-or-no questions, and "Is your budget $20?" got "Yes, the budget is $25"
          (``templates/user/answer.j2``; the same reply in every environment). Replies only.
          Also, a price under the budget ("Would $30 be OK?") or weighed against it without a
          money word ("Is $30 too much?") gets the budget stated, where it got "I'm not sure"
          (36 of 36 tasks with a budget, each wording, d = 2–12, 5k products; none now); it is
          still not confirmed: the other products must fit too. Replies only.
    1.5 — a product, variant or order id holding a NUL names nothing (a fixed-width id array
          compared "ID" and "ID" + NUL equal): NUL-padded copies of one product counted as k
          distinct real recommendations and as products the stock check did not know.
          Padded copies of the oracle's first pick scored r_task −0.33 and −0.67 at d = 3 and
          8 on 5k products; now −1. Every task id changes with the version.
    1.6 — a withheld list must be asked for: a recommendation made without the customer's
          must-have slots answered is a guess from the project and earns at most 0, never
          correct. The whole project, the dearest kind dropped until the budget fits,
          recommended without asking scored +0.65 mean reward and was correct on 16 of 149
          withheld tasks (d = 0–12, 5k products); now 0 of 58, +0.00.
          Also, a noun that names a node of another leaf's taxonomy path is no kind's name
          (``_names_another_path``): "athletic shoes", unique in kids' sneaker titles, is the
          parent of running shoes, whose cards its search showed 7 to 1 and whose path says
          "Athletic Shoes"; an honest agent's running shoes were graded the wrong kind (4 of
          260 tasks, d = 0–12, 5k products). Kids' sneakers had no other name, so the back to
          school project draws without them (118 kinds of 119).
    1.7 — the customer answers "What's it for?", "What's the occasion?" (the project: 44
          of 44 asks got "I'm not sure"), "What's on your list?", "Which items should I get?",
          "What should I add?" (the must-haves: 74 of 74 each) and "What's your max?" (the
          budget), as discovery 1.10 tells. Replies only; every task id changes with the
          version.
          Also, asked openly for more with facts left unsaid, the customer asks what the agent
          wants to know (discovery 1.10), where they said "I don't know".
          Also, typo noise keeps numbers as written (discovery 1.10): every noisy first
          message changes.
    1.8 — a change of budget lowers it (switch kind ``lower_budget``, :func:`_lowered`). It
          raised it by a quarter, and every set within a budget fits a higher one, so an
          agent that ignored the change of mind was always correct (154 of 440 tasks at
          d = 2–12 on 5k products changed their budget, none what was correct). The lowered
          budget is a whole dollar under a set the first allowed (each kind's dearest product
          at or under the first budget's price quantile) and at most the sum of half those
          quantiles, yet above the cheapest set: 141 of 440 tasks lower it, to a median 0.77
          of the first (0.31–0.94). Draws whose cheapest shown products exceed it are redrawn
          (52 redraws for 440 tasks, 26 before). Every task id changes with the version.
          Also, the system prompt states the turn and call budget, as discovery 1.11's does (at
          d = 0–1 the oracle uses every turn).
          Also, a withheld list must have been heard before the list recommended: only
          answers from turns before the latest ``recommend_products`` count
          (``verifiers.reward.as_asked``). A guessed set recommended first and the list asked
          for in the same turn or after was correct on 43 of 295 withheld tasks (5k products,
          d = 0–12); now none.
    1.9 — "need" alone no longer asks for the must-haves: "When do you need it by?" and "Do
          you need it gift-wrapped?" got the project's list (130 of 130 tasks, 5k, d = 0–12);
          "What do you need?", "What else do you need?" and "Which items do you need?" still
          do. Replies only; every task id changes with the version.
    1.10 — as cart 1.11: "What should I put in your cart?" and "What did you need again?" get
          the must-haves (they got "I don't know"). Replies only; every task id changes with
          the version.
    1.11 — as discovery 1.15, after a second bank of agents' questions written apart from the customer (216: six
          wordings of each of 36 facts, asked of 280 tasks, 5k, d = 0–12): "What
          are you putting together?", "… what the purchases are for?" and "What's the overall
          goal behind this shopping trip?" get the project, "Items needed?" and "Could you
          list the things you'll need?" the must-haves (40 of 40 got "I don't know" each).
          Replies only; every task id changes with the version.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.difficulty import Theta, check_d
from shopgen.gen.slots import make_slot
from shopgen.gen.switches import Switch, apply_switch, plan_switch
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw, call, per_root, pick
from shopgen.schemas.task import TaskRow

#: The cheapest in-stock products of each required category that p_oos may take off the shelf.
OOS_CANDIDATES = 6
#: Fewest in-stock products a category needs to be asked for (a search must be able to show one).
MIN_IN_STOCK = 3
#: A lowered budget is at most the sum of the price quantiles at this share of the first's.
LOWER_SHARE = 0.5
#: What the oracle asks when the customer named only the project.
ASK_LIST = "Which items do you need for the project?"


def n_categories(d: int) -> int:
    """Kinds of product the customer needs: 2 at d = 0, one more every 3 levels, at most 6."""
    return min(6, 2 + check_d(d) // 3)


def p_budget(d: int) -> float:
    """Probability the customer states a budget: none at d = 0, always from d = 4."""
    return min(1.0, 0.25 * check_d(d))


def budget_quantile(d: int) -> float:
    """Price quantile per category the budget sums: 0.8 at d = 0 down to 0.3 (tighter)."""
    return max(0.3, 0.8 - 0.05 * check_d(d))


@dataclass(frozen=True)
class Kind:
    """A category a customer can ask for: its noun and in-stock products, cheapest first."""

    category: str
    noun: str
    aliases: tuple[str, ...]
    product_ids: tuple[str, ...]
    prices: np.ndarray
    #: (q, what was taken off the shelf) → price quantile; filled by :meth:`price_quantile`.
    _quantiles: dict[tuple[float, int | tuple[int, ...]], float] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def price_quantile(self, q: float, out: tuple[int, ...]) -> float:
        """The q-quantile price of the products left when those at positions ``out`` are gone.

        ``out`` is ascending (positions in :attr:`product_ids`). np.quantile costs far more
        than a look-up, and tasks keep asking for the same few values: stock-outs only hit
        the cheapest products of a kind, and the (linear) quantile of the k prices left out
        of n reads only the order statistics at floor((n - k - 1)·q) and the next one. When
        every product taken off lies below them, those statistics are the same whichever k
        products went (prices are sorted: the i-th kept price is then prices[i + k]), so the
        value is remembered per k; otherwise per exact set of positions.
        """
        k = len(out)
        first_read = math.floor((len(self.prices) - k - 1) * q)
        # One position of margin, so float rounding of the read index cannot matter.
        key = (q, k) if not out or out[-1] < first_read + k - 1 else (q, out)
        found = self._quantiles.get(key)
        if found is None:
            found = self._quantiles[key] = float(np.quantile(np.delete(self.prices, out), q))
        return found

    def dearest_within(self, price: float, out: tuple[int, ...]) -> float:
        """The dearest price left (positions ``out`` gone) that is at most ``price``.

        The cheapest price left when none is (a quantile is never below it).
        """
        i = int(np.searchsorted(self.prices, price, side="right")) - 1
        while i >= 0 and i in out:
            i -= 1
        if i < 0:
            return self.price_quantile(0.0, out)
        return float(self.prices[i])


class _Index:
    """Per-catalog facts bundle tasks draw from, computed once per :class:`GenContext`."""

    def __init__(self, ctx: GenContext) -> None:
        self.ctx = ctx

    @cached_property
    def kinds(self) -> dict[str, Kind]:
        """Project categories whose noun names only them in this catalog's titles."""
        tax = self.ctx.store_taxonomy
        wanted = {item.category for p in tax.projects for item in p.items}
        nouns = {cat.id: cat.nouns for _, cat in tax.leaves() if cat.id in wanted}
        products = self.ctx.products.select(
            "product_id", "category_id", "price", "stock_qty", pl.col("title").str.to_lowercase()
        )
        in_stock = products.filter(pl.col("stock_qty") > 0).sort("price", "product_id")
        groups = {
            key[0]: frame for key, frame in in_stock.group_by("category_id", maintain_order=True)
        }
        naming = titles_naming(products, [n for cat in sorted(nouns) for n in nouns[cat]])
        paths = {cat.id: {p.lower() for p in cat.path} for _, cat in tax.leaves()}
        out: dict[str, Kind] = {}
        for cat in sorted(nouns):
            frame = groups.get(cat)
            if frame is None or frame.height < MIN_IN_STOCK:
                continue
            counts = {}
            for n in nouns[cat]:
                count, cats = naming.get(n.lower(), (0, []))
                unique = cats == [cat] and not _names_another_path(n, cat, paths)
                counts[n.lower()] = count if unique else None
            aliases = tuple(n for n, c in counts.items() if c is not None)
            if aliases:
                out[cat] = Kind(
                    category=cat,
                    noun=max(aliases, key=lambda n: (counts[n], n)),
                    aliases=aliases,
                    product_ids=tuple(frame["product_id"].to_list()),
                    prices=frame["price"].to_numpy(),
                )
        return out

    @cached_property
    def projects(self) -> list[tuple[str, list[str]]]:
        """(project name, usable categories in file order) for projects with two or more."""
        out = []
        for project in self.ctx.store_taxonomy.projects:
            cats = list(
                dict.fromkeys(i.category for i in project.items if i.category in self.kinds)
            )
            if len(cats) >= 2:
                out.append((project.name, cats))
        return out


def _names_another_path(noun: str, category: str, paths: dict[str, set[str]]) -> bool:
    """Whether ``noun`` names a taxonomy node on another leaf's path but not on its own.

    Such a noun is ambiguous to an agent who reads paths: "athletic shoes", unique in kids'
    sneaker titles, is also the parent of running shoes ("Shoes > Athletic Shoes > Running
    Shoes"), so running shoes found for it were graded the wrong kind.
    """
    pattern = noun_pattern(noun)
    own = paths[category]
    return any(
        pattern.search(node)
        for leaf, nodes in paths.items()
        if leaf != category
        for node in nodes
        if node not in own
    )


def titles_naming(products: pl.DataFrame, nouns: list[str]) -> dict[str, tuple[int, list[str]]]:
    """Lower-cased noun → (how many titles name it as a word, their distinct categories).

    ``products`` holds lower-cased titles. Matching each noun's pattern against every title
    costs one full scan per noun (seconds on a large catalog); instead one Aho-Corasick pass
    finds the titles holding each noun as a substring — every title the pattern can match —
    and the pattern then runs on those few only. Nouns no title names are left out.
    """
    lowered = sorted({n.lower() for n in nouns})
    if not lowered:
        return {}
    candidates = (
        products.select(
            "category_id",
            "title",
            noun=pl.col("title").str.extract_many(lowered, overlapping=True),
        )
        .with_row_index("i")
        .explode("noun")
        .drop_nulls("noun")
        .unique(maintain_order=True)  # a title holding a noun twice is one title
    )
    out: dict[str, tuple[int, list[str]]] = {}
    for (noun,), frame in candidates.partition_by("noun", as_dict=True).items():
        hits = frame.filter(pl.col("title").str.contains(noun_pattern(noun).pattern))
        if hits.height:
            out[noun] = (hits.height, hits["category_id"].unique().to_list())
    return out


@lru_cache(maxsize=4096)
def noun_pattern(noun: str) -> re.Pattern[str]:
    """A lower-cased title names ``noun``: the word or its plural, not a longer word.

    Remembered: the oracle tests every shown card against each kind's names.
    """
    return re.compile(rf"\b{re.escape(noun.lower())}s?\b")


def _index(ctx: GenContext) -> _Index:
    return per_root(ctx, _Index)


def generate(ctx: GenContext, d: int, axes: Theta, rng: np.random.Generator) -> Draft:
    """Draw a project, the kinds the customer needs, stock-outs, a budget and a switch."""
    index = _index(ctx)
    name, cats = pick(rng, index.projects)
    T, B = int(axes.T_max), int(axes.B_tool)
    # p_missing acts on the whole list at once: a partly listed set would leave the agent
    # unable to know that more is needed; all listed or none (then ask_user reveals it).
    listed = bool(rng.random() >= axes.p_missing) or B * (T - 3) < 2
    ask = 0 if listed else 1
    # A withheld list is never the whole project (the customer owns at least one of its
    # kinds), so it must be asked for: "recommend every kind of the project" cannot stand in.
    n = min(n_categories(d), len(cats) - ask, B * (T - 2 - ask))
    picked = sorted(rng.choice(len(cats), size=n, replace=False).tolist())
    kinds = [index.kinds[cats[i]] for i in picked]
    spare = [index.kinds[c] for i, c in enumerate(cats) if i not in picked]
    has_budget = bool(rng.random() < p_budget(d))
    gone, q = _stock_outs(kinds + spare, float(axes.p_oos), rng), budget_quantile(d)
    out_of_stock = [k.product_ids[i] for k in kinds + spare for i in gone[k.category]]
    budget = _budget(kinds, gone, q) if has_budget else None
    must = [make_slot("bundle", f"must.{i}", k.noun, required=True) for i, k in enumerate(kinds)]
    said = [make_slot("bundle", "project", name, required=True), *(must if listed else [])]
    if budget is not None:
        said.append(make_slot("bundle", "budget", budget, required=True))
    searching = ask + math.ceil(n / B)  # oracle turns before it recommends
    options: dict[str, dict[str, list[Any]]] = {}
    if budget is not None:
        # A lowered budget, not a raised one: every set within a budget fits any higher one,
        # so a raise never changed what is correct (an agent ignoring it was always right).
        lowered = _lowered(kinds, gone, q)
        if lowered is not None:
            options["lower_budget"] = {"budget": [lowered]}
    # One more search turn must fit; a withheld list stays short of the whole project.
    if len(spare) > ask and searching + 3 <= T:
        options["add_item"] = {f"must.{n}": [k.noun for k in spare]}
    switch = plan_switch(
        "bundle", said, p_switch=float(axes.p_switch), T_max=T, rng=rng, options=options
    )
    added = None
    if switch is not None:
        # Said while the agent is still searching, so acting on it never needs a turn more
        # than the one reserved above.
        switch = Switch(kind=switch.kind, turn=min(switch.turn, searching), changes=switch.changes)
        if switch.kind == "add_item":
            added = next(k for k in spare if k.noun == switch.changes[0][1])
            if budget is not None:  # the one budget the customer states covers everything
                budget = _budget([*kinds, added], gone, q)
                said = [
                    make_slot("bundle", "budget", budget, required=True)
                    if s.name == "budget"
                    else s
                    for s in said
                ]
    final = dict((s.name, s.value) for s in apply_switch(said, switch, env="bundle"))
    goal = {
        "project": name,
        "categories": [
            {"category": k.category, "noun": k.noun, "aliases": list(k.aliases)}
            for k in [*kinds, *([added] if added else [])]
        ],
        "budget": final.get("budget"),
        "listed": listed,
    }
    facts = (
        {}
        if listed
        else {m.name: {"value": m.value, "kind": "text", "label": m.label} for m in must}
    )
    episode = {"today": ctx.today.isoformat(), "out_of_stock": out_of_stock}
    return Draft(slots=tuple(said), goal=goal, episode=episode, switch=switch, facts=facts)


def _stock_outs(
    kinds: list[Kind], p_oos: float, rng: np.random.Generator
) -> dict[str, tuple[int, ...]]:
    """Category → positions of its cheapest few products, each out of stock with prob. p_oos.

    The cheapest are the ones a budget-minded agent reaches for first, so they are the ones
    whose stock-out the agent must notice (stock 0 on the card). One always stays in stock.
    Positions (ascending) rather than ids: they are what :meth:`Kind.price_quantile` reads.
    The uniforms of all kinds come in one draw, read in kind order: ``rng.random`` yields
    the same doubles in one call as in one call per kind (``tests/gen/test_bundle_fast.py``).
    """
    sizes = [min(OOS_CANDIDATES, len(kind.product_ids) - 1) for kind in kinds]
    draws = rng.random(sum(sizes)).tolist()
    out: dict[str, tuple[int, ...]] = {}
    start = 0
    for kind, size in zip(kinds, sizes, strict=True):
        out[kind.category] = tuple(
            i for i, u in enumerate(draws[start : start + size]) if u < p_oos
        )
        start += size
    return out


def _budget(kinds: list[Kind], gone: dict[str, tuple[int, ...]], q: float) -> int:
    """Whole dollars: the sum over kinds of the q-quantile in-stock price (≥ the cheapest sum)."""
    total = 0.0
    for kind in kinds:
        total += kind.price_quantile(q, gone[kind.category])
    return math.ceil(total)


def _lowered(kinds: list[Kind], gone: dict[str, tuple[int, ...]], q: float) -> int | None:
    """A lower budget that rules out a set the first one allowed (None when none can).

    That set holds each kind's dearest product at or under its q-quantile price, the prices
    the first budget sums, so it fits the first budget; the lowered one is a whole dollar
    under its total, and at most the sum of the ``q·LOWER_SHARE`` quantiles. It still covers
    each kind's cheapest product left, so the task stays solvable.
    """
    cents = cheapest = 0
    for kind in kinds:
        out = gone[kind.category]
        cents += round(kind.dearest_within(kind.price_quantile(q, out), out) * 100)
        cheapest += round(kind.price_quantile(0.0, out) * 100)
    lowered = min(_budget(kinds, gone, q * LOWER_SHARE), math.ceil(cents / 100) - 1)
    return lowered if lowered * 100 >= cheapest else None


def answer(goal: dict[str, Any], chosen: list[dict[str, Any]]) -> str:
    """The final message: what was picked for each kind, the total and the budget."""
    lines = [f"- {c['noun']}: {c['title']} (${c['price']:.2f})" for c in chosen]
    total = sum(round(c["price"] * 100) for c in chosen) / 100
    budget = f", within your budget of ${goal['budget']}" if goal["budget"] is not None else ""
    return (
        f"Here is your {goal['project']} set, one of each kind you need:\n"
        + "\n".join(lines)
        + f"\nTotal: ${total:.2f}{budget}."
    )


def oracle(task: TaskRow) -> Oracle:
    """Ask for the list if it was not given; one search per kind; cheapest in-stock match each.

    The hidden goal decides which kinds are known when: the initial ones at once (or after the
    ask), a switched-in kind from the turn the customer says it. Only cards a search showed are
    recommended; a search that shows no in-stock match, or picks over budget, is redrawn.
    """
    goal = task.decoded("goal")
    script = task.decoded("user_script")
    switch = script.get("switch")
    B = task.axis("B_tool")
    kinds = goal["categories"]
    added = kinds[-1]["noun"] if switch and switch["kind"] == "add_item" else None
    known = [k["noun"] for k in kinds if k["noun"] != added]
    turn = 0
    if not goal["listed"]:
        yield [call("ask_user", question=ASK_LIST)]
        turn = 1
    cards: dict[str, list[dict[str, Any]]] = {}
    while True:
        if added and added not in known and turn >= switch["turn"]:
            known.append(added)
        todo = [k for k in known if k not in cards][:B]
        if not todo:
            break
        results = yield [call("catalog_search", query=noun) for noun in todo]
        turn += 1
        for noun, result in zip(todo, results, strict=False):
            cards[noun] = result.get("results", [])
    aliases = {k["noun"]: tuple(k["aliases"]) for k in kinds}
    chosen = [_cheapest(noun, aliases[noun], cards[noun]) for noun in known]
    total = sum(round(c["price"] * 100) for c in chosen)
    if goal["budget"] is not None and total > goal["budget"] * 100:
        raise Redraw("the cheapest shown matches exceed the budget")
    yield [call("recommend_products", product_ids=[c["product_id"] for c in chosen])]
    yield answer(goal, chosen)


def _cheapest(noun: str, aliases: tuple[str, ...], cards: list[dict[str, Any]]) -> dict[str, Any]:
    """The cheapest in-stock card whose title names the kind (by any of its names).

    Ties on price go to the smaller product id. One pass that tests a title only when its
    card would beat the best so far: the title test is the costly part, and about half the
    in-stock cards of a page are dearer than an earlier match (``tests/gen/test_bundle_fast.py``
    compares this with the filter-then-``min`` formulation).
    """
    best, key = None, None
    for card in cards:
        if card["stock_qty"] <= 0:
            continue
        price = card["price"]
        if key is not None and (
            price > key[0] or (price == key[0] and card["product_id"] >= key[1])
        ):
            continue
        if title_names(card["title"], aliases):
            best, key = card, (price, card["product_id"])
    if best is None:
        raise Redraw(f"no in-stock {noun} shown")
    return {**best, "noun": noun}


@lru_cache(maxsize=1 << 15)
def title_names(title: str, aliases: tuple[str, ...]) -> bool:
    """A title names a kind by any of its names (see :func:`noun_pattern`).

    Remembered: each search for a kind shows mostly the same few titles again, and a
    look-up costs a fraction of lower-casing the title and running the patterns.
    """
    low = title.lower()
    return any(noun_pattern(a).search(low) for a in aliases)
