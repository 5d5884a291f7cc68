"""A change of budget changes what is correct.

discovery and substitution: a budget raised by a quarter mostly let in nothing the customer
ranks among the best, so the list best under the first budget still passed: an agent that
ignored the change of mind was correct (21 of 25 discovery and 51 of 60 substitution raises
on 5k products). Such a raise is now a lowered budget, under the dearest product of that list
(``recsearch.settle``).

bundle: any set within a budget fits a raised one, so a raise never changed what is correct;
its change of budget is a lowering, under a set the first budget allowed (``bundle._lowered``).
"""

from __future__ import annotations

import numpy as np
import pytest

from shopgen.gen.tasks.bundle import budget_quantile
from shopgen.gen.tasks.constraints import Constraints, preference, rank, tables
from shopgen.verifiers import bundle as bundle_verifier


def _first_best(factory, row):
    """The list an agent ignoring the change makes: best k under the first budget."""
    goal, script = row.decoded("goal"), row.decoded("user_script")
    first = next(s["value"] for s in script["slots"] if s["name"] == "price_max")
    cons = Constraints.from_dict({**goal["constraints"], "price_max": first})
    ctx = factory.ctx
    cols = tables(ctx).columns(cons.category)
    episode = row.decoded("episode")
    rows = np.flatnonzero(cons.mask(cols) & cols.in_stock)
    ranked = rank(cols, preference(ctx, episode["user_id"], cons), rows)
    marked = set(episode["out_of_stock"])
    return [pid for pid, _ in ranked if pid not in marked][: goal["k_rec"]], cols


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_a_lowered_budget_breaks_the_list_made_for_the_first(factory, env):
    lowered = 0
    for d in range(4, 13):
        for k in range(12):
            row = factory.make(env, d, k).row
            switch = row.decoded("user_script").get("switch")
            if not switch or switch["kind"] != "lower_budget":
                continue
            budget = dict(switch["changes"])["price_max"]
            assert row.decoded("goal")["constraints"]["price_max"] == budget
            best, cols = _first_best(factory, row)
            # Fewer than k in stock under the first budget, or one of them over the new one.
            goal = row.decoded("goal")
            assert (
                len(best) < goal["k_rec"]
                or max(cols.price[cols.position[p]] for p in best) > budget
            )
            lowered += 1
    assert lowered >= 2


def _set_at_quantile(factory, row, d: int) -> list[dict]:
    """Each required kind's dearest in-stock product at or under its first-budget quantile.

    The prices the first budget sums (``bundle.budget_quantile``): a set it allows.
    """
    marked = set(row.decoded("episode")["out_of_stock"])
    records = []
    for kind in row.decoded("goal")["categories"]:
        cols = tables(factory.ctx).columns(kind["category"])
        left = np.array(
            sorted(
                float(cols.price[i])
                for i in range(len(cols.price))
                if cols.in_stock[i] and cols.product_id[i] not in marked
            )
        )
        price = left[left <= np.quantile(left, budget_quantile(d))].max()
        records.append({"price": float(price), "category_id": kind["category"], "stock_qty": 1})
    return records


def test_a_lowered_bundle_budget_rejects_a_set_the_first_allowed(factory):
    lowered = 0
    for d in range(4, 13):
        for k in range(12):
            row = factory.make("bundle", d, k).row
            switch = row.decoded("user_script").get("switch")
            assert not switch or switch["kind"] in ("lower_budget", "add_item")
            if not switch or switch["kind"] != "lower_budget":
                continue
            goal = row.decoded("goal")
            first = next(
                s["value"] for s in row.decoded("user_script")["slots"] if s["name"] == "budget"
            )
            final = dict(switch["changes"])["budget"]
            assert goal["budget"] == final < first
            records = _set_at_quantile(factory, row, d)
            total = sum(round(r["price"] * 100) for r in records) / 100
            assert final < total <= first
            parsed = bundle_verifier._parse(goal)
            assert not bundle_verifier._grade(goal, parsed, tuple(records))[1]
            heard_first = {**goal, "budget": first}
            assert bundle_verifier._grade(heard_first, parsed, tuple(records))[1]
            lowered += 1
    assert lowered >= 2
