"""bundle: generation, determinism, an independently recomputed answer, axes, grading."""

import json
import re

import duckdb
import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.env.state import EpisodeState
from shopgen.gen.store import CatalogStore
from shopgen.gen.tasks.bundle import (
    Kind,
    _index,
    budget_quantile,
    n_categories,
    noun_pattern,
    p_budget,
    title_names,
    titles_naming,
)
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.schemas.errors import ConfigError
from shopgen.taskgen import TaskFactory
from shopgen.testing import DEGENERATE, run_policy
from shopgen.verifiers.bundle import verify
from shopgen.verifiers.replay import play


@pytest.fixture(scope="module")
def store(indexed_catalog_dir):
    return CatalogStore(indexed_catalog_dir)


@pytest.fixture(scope="module")
def rows(factory):
    """Two tasks per level 0..12 (each proven by the factory: the oracle replays correct)."""
    return [factory.make("bundle", d, k).row for d in range(13) for k in range(2)]


def _with(shop_env, **overrides):
    return TaskFactory(shop_env, seed=0, overrides=overrides)


def test_bad_input_is_rejected(factory):
    with pytest.raises(ConfigError):
        factory.make("bundle", -1, 0)
    for schedule in (n_categories, p_budget, budget_quantile):
        with pytest.raises(ConfigError):
            schedule(-2)


def test_same_key_same_task(factory, rows):
    again = factory.make("bundle", 7, 1).row
    assert again == rows[7 * 2 + 1]
    assert again.task_id != factory.make("bundle", 7, 0).row.task_id


def test_oracle_is_correct_at_every_level(shop_env, rows):
    assert {r.d for r in rows} == set(range(13))
    for row in rows:
        score, _ = play(shop_env, row, json.loads(row.oracle))
        assert score.is_correct
        assert score.reward == pytest.approx(0.9)


def test_goal_recomputed_from_the_catalog(rows, store):
    """Categories come from the named project; nouns name only their category; budget feasible."""
    tax = load_taxonomy(store.manifest.config.get("taxonomy"))
    projects = {p.name: {i.category for i in p.items} for p in tax.projects}
    con = duckdb.connect()
    con.register("products", store.products.to_arrow())
    for row in rows:
        goal, episode = row.decoded("goal"), row.decoded("episode")
        cats = [c["category"] for c in goal["categories"]]
        assert len(set(cats)) == len(cats) >= 2
        assert set(cats) <= projects[goal["project"]]
        for c in goal["categories"]:
            for name in c["aliases"]:
                pattern = rf"\b{re.escape(name)}s?\b"
                owners = con.execute(
                    "select distinct category_id from products where regexp_matches(lower(title), ?)",
                    [pattern],
                ).fetchall()
                assert owners == [(c["category"],)], (name, owners)
        if goal["budget"] is not None:
            gone = episode["out_of_stock"] or ["-"]
            cheapest = con.execute(
                f"""select sum(m) from (select min(price) m from products
                    where stock_qty > 0 and category_id in ({",".join("?" * len(cats))})
                    and product_id not in ({",".join("?" * len(gone))}) group by category_id)""",
                [*cats, *gone],
            ).fetchone()[0]
            assert goal["budget"] >= cheapest


def test_kinds_are_knowable_from_what_the_customer_says(rows):
    """Listed in the first message, or held by the customer's script for ask_user."""
    for row in rows:
        goal, script = row.decoded("goal"), row.decoded("user_script")
        must = {s["value"] for s in script["slots"] if s["name"].startswith("must.")}
        added = {
            v for n, v in (script["switch"] or {"changes": []})["changes"] if n.startswith("must.")
        }
        assert {c["noun"] for c in goal["categories"]} == must | added
        budget = [s for s in script["slots"] if s["name"] == "budget"]
        assert bool(budget) == (goal["budget"] is not None)
        assert all(not s["omitted"] for s in script["slots"])


def test_difficulty_grows_the_task(rows):
    by_d = {d: [r for r in rows if r.d == d] for d in (0, 12)}
    size = {d: sum(len(r.decoded("goal")["categories"]) for r in rs) for d, rs in by_d.items()}
    assert size[12] > size[0]
    assert all(r.decoded("goal")["budget"] is None for r in by_d[0])
    assert all(r.decoded("goal")["budget"] is not None for r in by_d[12])


def test_p_oos_takes_products_off_the_shelf(shop_env):
    def oos(p):
        f = _with(shop_env, p_oos=p)
        return sum(
            len(f.make("bundle", 4, k).row.decoded("episode")["out_of_stock"]) for k in range(4)
        )

    assert oos(0.0) == 0
    assert oos(0.5) > 0


def test_p_missing_withholds_the_list(shop_env):
    def listed(p):
        f = _with(shop_env, p_missing=p)
        return sum(f.make("bundle", 6, k).row.decoded("goal")["listed"] for k in range(4))

    assert listed(0.0) == 4
    assert listed(1.0) == 0


def test_a_withheld_list_is_never_the_whole_project(shop_env):
    """Recommending every kind of the named project must not stand in for asking."""
    f = _with(shop_env, p_missing=1.0, p_switch=1.0)
    projects = dict(_index(f.ctx).projects)
    sizes = []
    for d in (3, 6, 9, 12):  # below d = 2 the asking turn does not fit: the list is said
        for k in range(6):
            goal = f.make("bundle", d, k).row.decoded("goal")
            kinds = {c["category"] for c in goal["categories"]}
            assert not goal["listed"]
            assert kinds < set(projects[goal["project"]]), (d, k)
            sizes.append(len(projects[goal["project"]]) - len(kinds))
    assert min(sizes) == 1  # the kinds still reach up to one short of the project


def test_p_switch_schedules_a_change_of_mind(shop_env):
    def switches(p):
        f = _with(shop_env, p_switch=p)
        return sum(
            f.make("bundle", 8, k).row.decoded("user_script")["switch"] is not None
            for k in range(4)
        )

    assert switches(0.0) == 0
    assert switches(1.0) == 4


def test_top_k_changes_what_search_shows(shop_env):
    def cards(top_k):
        row = _with(shop_env, top_k=top_k).make("bundle", 2, 0).row
        play(shop_env, row, json.loads(row.oracle))
        results = [
            json.loads(m["content"])
            for m in shop_env.transcript
            if m.get("name") == "catalog_search"
        ]
        return sum(len(r["results"]) for r in results) / len(results)

    assert cards(200) > cards(20)


def test_eps_rank_changes_what_search_shows(shop_env):
    def shown(eps):
        row = _with(shop_env, eps_rank=eps).make("bundle", 3, 0).row
        play(shop_env, row, json.loads(row.oracle))
        return [
            json.loads(m["content"])
            for m in shop_env.transcript
            if m.get("name") == "catalog_search"
        ]

    assert shown(0.0) != shown(0.4)


def _state(store, ids, out_of_stock=(), asked=()):
    state = EpisodeState()
    state.turns = 3
    state.extra["questions"] = [{"turn": 1, "answered": list(asked)}]
    state.recommendations = list(ids)
    state.extra["recommended_facts"] = {
        pid: {
            "category_id": (p := store.product(pid))["category_id"],
            "price": p["price"],
            "stock_qty": 0 if pid in out_of_stock else p["stock_qty"],
        }
        for pid in ids
    }
    state.shown_ids = set(ids)
    state.used_ids = list(ids)
    return state


def _oracle_ids(row):
    rec = next(
        tc
        for m in json.loads(row.oracle)
        for tc in m.get("tool_calls", [])
        if tc["function"]["name"] == "recommend_products"
    )
    return json.loads(rec["function"]["arguments"])["product_ids"]


def test_grading_is_exact(rows, store):
    for row in rows[::3]:
        ids = _oracle_ids(row)
        goal = row.decoded("goal")
        must = _musts(row)
        full = verify(row, _state(store, ids, asked=must), [])
        assert full.is_correct
        assert full.r_task == 1
        assert (
            verify(row, _state(store, ids[::-1], asked=must), []).r_task == 1
        )  # order is not graded
        fewer = verify(row, _state(store, ids[1:], asked=must), [])
        assert fewer.r_task < 1
        assert not fewer.is_correct
        oos = verify(row, _state(store, ids, {ids[0]}, asked=must), [])
        assert oos.r_task < 1
        assert not oos.is_correct
        same_cat = [
            p
            for p in store.products.filter(
                store.products["category_id"] == goal["categories"][0]["category"]
            )["product_id"].to_list()
            if p not in ids
        ][:1]
        twice = verify(row, _state(store, ids + same_cat, asked=must), [])
        assert twice.r_task < 1
        assert not twice.is_correct
        if goal["budget"] is not None:
            poorer = {**goal, "budget": 1}
            tight = row.model_copy(update={"goal": json.dumps(poorer)})
            over = verify(tight, _state(store, ids, asked=must), [])
            assert over.r_task < 1
            assert not over.is_correct
        assert verify(row, _state(store, [], asked=must), []).r_task == -1


def _musts(row):
    """The must-have slots of a row's customer (listed or told when asked)."""
    return [s["name"] for s in row.decoded("user_script")["slots"] if s["name"].startswith("must.")]


def test_a_withheld_list_must_be_asked(rows, store):
    """Recommending the right kinds without asking for a withheld list is a guess: ≤ 0."""
    withheld = [row for row in rows if not row.decoded("goal")["listed"]]
    assert withheld
    for row in withheld:
        ids = _oracle_ids(row)
        must = _musts(row)
        assert verify(row, _state(store, ids, asked=must), []).is_correct
        for heard in ([], must[:-1]):
            guessed = verify(row, _state(store, ids, asked=heard), [])
            assert not guessed.is_correct
            assert guessed.r_task == 0
        wrong = verify(row, _state(store, ids[1:]), [])
        assert wrong.r_task <= 0
        assert not wrong.is_correct
    listed = next(row for row in rows if row.decoded("goal")["listed"])
    assert verify(listed, _state(store, _oracle_ids(listed)), []).is_correct


def test_degenerate_policies_never_win(shop_env, rows):
    sample = rows[::4]
    for label, policy in DEGENERATE.items():
        rewards = []
        for row in sample:
            score = run_policy(shop_env, row, policy)
            assert not score.is_correct, label
            assert -1 <= score.reward <= 1
            rewards.append(score.reward)
        assert sum(rewards) / len(rewards) <= 0, label


def test_first_message_lists_the_kinds_when_listed(rows):
    for row in rows:
        goal = row.decoded("goal")
        text = row.messages[1].content
        said = {
            s["value"] for s in row.decoded("user_script")["slots"] if s["name"].startswith("must.")
        }
        if goal["listed"] and row.theta["p_noise"] == 0:
            assert said
            assert all(noun in text for noun in said)


def _titles_naming_reference(products, noun):
    """The plain definition titles_naming speeds up: one pattern scan over every title."""
    hits = products.filter(pl.col("title").str.contains(noun_pattern(noun).pattern))
    return (hits.height, hits["category_id"].unique().to_list()) if hits.height else None


def _naming_agrees(products, nouns):
    fast = titles_naming(products, nouns)
    for noun in {n.lower() for n in nouns}:
        ref = _titles_naming_reference(products, noun)
        got = fast.get(noun)
        if ref is None:
            assert got is None, noun
        else:
            assert got is not None, noun
            assert (got[0], sorted(got[1])) == (ref[0], sorted(ref[1])), noun
    assert set(fast) <= {n.lower() for n in nouns}


def test_titles_naming_equals_one_scan_per_noun_on_the_catalog(store):
    tax = load_taxonomy(store.manifest.config.get("taxonomy"))
    nouns = [n for _, cat in tax.leaves() for n in cat.nouns]
    products = store.products.select("category_id", pl.col("title").str.to_lowercase())
    _naming_agrees(products, nouns)


_WORDS = ["bag", "bags", "sleeping", "sleeping bag", "tent", "tents", "t-shirt", "sbag", "bag-s"]


@given(
    titles=st.lists(
        st.tuples(
            st.lists(st.sampled_from([*_WORDS, "x", "é", "_", ",", "2"]), max_size=6),
            st.sampled_from(["c1", "c2", "c3"]),
        ),
        max_size=12,
    ),
    nouns=st.lists(st.sampled_from(["Bag", "Sleeping Bag", "Tent", "T-Shirt", "ag"])),
)
def test_titles_naming_equals_one_scan_per_noun(titles, nouns):
    """Nested nouns, plurals, longer words and duplicate titles count as the plain scan does."""
    products = pl.DataFrame(
        {
            "category_id": [c for _, c in titles],
            "title": [" ".join(ws).replace(" é ", "é").replace(" _ ", "_") for ws, _ in titles],
        },
        schema={"category_id": pl.String, "title": pl.String},
    )
    _naming_agrees(products, nouns)


@given(
    prices=st.lists(st.floats(1, 500, allow_nan=False), min_size=2, max_size=40),
    gones=st.lists(st.sets(st.integers(0, 45), max_size=8), min_size=1, max_size=6),
    q=st.sampled_from([0.3, 0.55, 0.8]),
)
def test_price_quantile_equals_the_quantile_of_what_stays(prices, gones, q):
    """Exact, whatever stock-out sets were asked before on the same kind (remembered values)."""
    prices = sorted(prices)
    ids = tuple(f"P{i:03d}" for i in range(len(prices)))
    kind = Kind(category="c", noun="n", aliases=("n",), product_ids=ids, prices=np.array(prices))
    for gone in [*gones, *gones]:
        keep = np.array([i not in gone for i in range(len(ids))])
        if keep.any():
            want = float(np.quantile(np.array(prices)[keep], q))
            out = tuple(sorted(i for i in gone if i < len(ids)))
            assert kind.price_quantile(q, out) == want


@given(
    words=st.lists(st.sampled_from(["Tent", "tents", "Tentacle", "sleeping", "Bag", "bags,", "x"])),
    aliases=st.lists(st.sampled_from(["tent", "sleeping bag", "bag"]), min_size=1, max_size=3),
)
def test_title_names_is_any_alias_as_a_word_or_plural(words, aliases):
    """The remembered check agrees with matching each name in the lower-cased title, twice."""
    title = " ".join(words)
    want = any(re.search(rf"\b{re.escape(a)}s?\b", title.lower()) for a in aliases)
    for _ in range(2):
        assert title_names(title, tuple(aliases)) == want


def test_a_listed_first_message_says_the_list_is_complete(shop_env):
    """The listed kinds are all the customer needs: extras are graded wrong, so say so.

    "Put together everything I need…, and it has to include X and Y" read as a minimum: an
    agent adding the project's other kinds failed (listed tasks name fewer kinds than the
    project has at d 0–4), and asking "only these?" got "it doesn't matter to me".
    """
    f = _with(shop_env, p_missing=0.0, p_noise=0.0)
    for d in (0, 3, 6, 9, 12):
        for k in range(3):
            row = f.make("bundle", d, k).row
            text = row.messages[1].content
            nouns = [c["noun"] for c in row.decoded("goal")["categories"]]
            assert "has to include" not in text, text
            assert "all I need is " + nouns[0] in text, text


def test_no_kind_is_named_by_another_leafs_path(factory):
    """A kind's names never name a taxonomy node on another leaf's path (off its own)."""
    tax = factory.ctx.store_taxonomy
    paths = {cat.id: {p.lower() for p in cat.path} for _, cat in tax.leaves()}
    kinds = _index(factory.ctx).kinds
    assert len(kinds) >= 50
    for category, kind in kinds.items():
        for alias in kind.aliases:
            for leaf, nodes in paths.items():
                off_path = nodes - paths[category] if leaf != category else set()
                assert not any(noun_pattern(alias).search(node) for node in off_path), alias
    assert "kids_sneakers" not in kinds  # "athletic shoes" also heads running shoes' path
