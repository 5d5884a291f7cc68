"""substitution: a substitute is of the original's kind and for the same people.

A leaf may hold several kinds (collars, harnesses, leashes) or audiences (boys', girls'): the
ideal list and the feasible set keep only the original's, the grader breaks a product of
another ("kind", or its audience attribute), and the customer says which when asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from shopgen.env.episode import ShopEnv
from shopgen.gen.tasks.constraints import Constraints
from shopgen.gen.tasks.kinds import title_noun
from shopgen.gen.tasks.substitution import kind_facts
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.taskgen import TaskFactory, assistant_message
from shopgen.verifiers.replay import play

ENV = "substitution"
LEAVES = {c.id: c for _, c in load_taxonomy().leaves()}


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="module")
def products(indexed_catalog_dir: Path) -> dict[str, dict]:
    frame = pl.read_parquet(indexed_catalog_dir / "products" / "*.parquet")
    return {r["product_id"]: r for r in frame.iter_rows(named=True)}


@pytest.fixture(scope="module")
def rows(shop: ShopEnv) -> list:
    """Tasks whose leaf holds several kinds or audiences."""
    factory = TaskFactory(shop, seed=0)
    drawn = [factory.make(ENV, d, k).row for d in (2, 5, 8, 11) for k in range(25)]
    out = []
    for row in drawn:
        leaf = LEAVES[row.decoded("goal")["constraints"]["category"]]
        if leaf.kinds or leaf.audience:
            out.append(row)
    assert len(out) >= 5, "too few tasks of mixed leaves in the fixture"
    return out


def _signature(product: dict, leaf) -> tuple:
    """What a card's title says of a product: its kind (noun group) and audience value."""
    out: list = []
    if leaf.kinds:
        noun = title_noun(product["title"], [n for g in leaf.kinds for n in g])
        out.append(next(i for i, g in enumerate(leaf.kinds) if noun in g))
    if leaf.audience:
        out.append(json.loads(product["attributes"]).get(leaf.audience))
    return tuple(out)


def test_ideal_and_feasible_products_share_the_originals_kind_and_audience(rows, products):
    for row in rows:
        goal = row.decoded("goal")
        leaf = LEAVES[goal["constraints"]["category"]]
        want = _signature(products[goal["original_id"]], leaf)
        for pid in [*goal["product_ids"], *(p for p, *_ in goal["feasible"])]:
            assert _signature(products[pid], leaf) == want, (goal["original_id"], pid)
        assert goal["feasible_in_stock"] >= goal["k_rec"]


def test_a_product_of_another_kind_is_graded_broken(shop, rows, products):
    tried = 0
    for row in rows:
        goal = row.decoded("goal")
        if not goal["constraints"].get("kind"):
            continue
        out = set(row.decoded("episode")["out_of_stock"])
        loose = {**goal["constraints"], "kind": [], "other_kinds": []}
        cons = Constraints.from_dict(loose)
        other = next(
            (
                pid
                for pid, p in sorted(products.items())
                if pid not in out
                and p["stock_qty"] > 0
                and cons.holds(pid, {**p, "attributes": json.loads(p["attributes"])})
                and not Constraints.from_dict(goal["constraints"]).holds(
                    pid, {**p, "attributes": json.loads(p["attributes"])}
                )
            ),
            None,
        )
        if other is None:
            continue
        oracle = json.loads(row.oracle)
        for message in oracle:
            for tc in message.get("tool_calls") or ():
                if tc["function"]["name"] == "recommend_products":
                    args = json.loads(tc["function"]["arguments"])
                    args["product_ids"][-1] = other
                    tc["function"]["arguments"] = json.dumps(args)
        score, _ = play(shop, row, oracle)
        items = {i["product_id"]: i for i in score.details["items"]}
        assert items[other]["broken"] == ["kind"]
        assert not score.is_correct
        tried += 1
    assert tried, "no task with a product of another kind to swap in"


@pytest.mark.parametrize(
    "question",
    [
        "Does it have to be the same kind of product?",
        "Would any type be fine?",
        "Which features must the substitute share with the original?",
    ],
)
def test_asked_the_customer_says_the_kind(shop, rows, question):
    asked = total = 0
    for row in rows:
        goal = row.decoded("goal")
        if not goal.get("kind"):
            continue
        total += 1
        shop.reset(row)
        obs, *_ = shop.step(assistant_message(1, [("ask_user", {"question": question})]))
        reply = json.loads(obs["messages"][-1]["content"])["reply"]
        # Typo noise may touch a word; the kind's first noun survives in most replies.
        asked += any(n.lower() in reply.lower() for n in goal["kind"])
    assert total
    assert asked >= total / 2


@pytest.mark.parametrize("question", ["Is it for boys or girls?", "Who is it for?"])
@pytest.mark.parametrize("value", ["Girls'", "Boys'", "Men's", "Unisex Kids'"])
def test_asked_the_customer_says_whom_it_is_for(shop, rows, question, value):
    """The audience fact a generator writes is said when asked whom the product is for.

    A 3k-product fixture holds too few products of one audience for a task that keeps
    2·k_rec of them in stock, so the fact ``kind_facts`` writes is put into real rows' scripts.
    """
    said = 0
    replies = []
    for row in rows:
        script = row.decoded("user_script")
        for name, fact in kind_facts((), (), {"kids_gender": value}).items():
            script["slots"].append({"name": name, "omitted": False, **fact})
        shop.reset(row.model_copy(update={"user_script": json.dumps(script)}))
        obs, *_ = shop.step(assistant_message(1, [("ask_user", {"question": question})]))
        reply = json.loads(obs["messages"][-1]["content"])["reply"]
        # The value's longest word ("girls" of "Girls'"); typo noise may touch a few replies.
        head = max(value.lower().replace("'", "").split(), key=len)
        said += head in reply.lower().replace("'", "")
        replies.append(reply)
    assert said >= len(rows) / 2, replies


def test_the_system_prompts_say_a_substitute_is_of_the_same_kind_and_people(shop, rows):
    """Boys' or girls' is no "feature that must match" an agent would think to ask about."""
    journey = TaskFactory(shop, seed=0).make("journey", 6, 0).row
    for row in (rows[0], journey):
        system = next(m.content for m in row.messages if m.role == "system")
        assert "same kind of product for the same people" in system
