"""discovery and substitution: a change of budget changes what is correct.

A budget raised by a quarter mostly let in nothing the customer ranks among the best, so the
list best under the first budget still passed: an agent that ignored the change of mind was
correct (21 of 25 discovery and 51 of 60 substitution raises on 5k products). Such a raise is
now a lowered budget, under the dearest product of that list (``recsearch.settle``).
"""

from __future__ import annotations

import numpy as np
import pytest

from shopgen.gen.tasks.constraints import Constraints, preference, rank, tables


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
