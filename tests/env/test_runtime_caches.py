"""Caches added for speed keep behaviour identical (issue #6 §5), and world lookups are exact."""

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv, TaskError
from shopgen.env.verifier import Score, get_verifier, set_verifier


def test_reset_of_the_same_row_object_is_cached_but_sees_replaced_values(store, env):
    row = make_row(store)
    first = env.reset(row)
    assert env.reset(row) == first
    row["catalog_id"] = "someone-else"
    with pytest.raises(TaskError, match="catalog"):
        env.reset(row)


def test_cached_reset_gives_a_fresh_transcript(store, env, picks):
    row = make_row(store)
    env.reset(row)
    env.step(call("catalog_get_product", product_id=picks["plain"]))
    obs = env.reset(row)
    assert len(env.transcript) == 2
    obs["messages"][0]["content"] = "mutated by the caller"
    assert env.reset(row)["messages"][0]["content"] != "mutated by the caller"


def test_verifier_registered_after_a_miss_is_used(store, env):
    row = {**make_row(store), "env": "zz_unverified"}  # an env no verifier module exists for
    assert get_verifier("zz_unverified") is None  # a cached miss

    def verify(task, state, transcript):
        return Score(reward=0.5, r_task=0.5, r_eff=1.0, r_hall=0.0, is_correct=False)

    set_verifier("zz_unverified", verify)
    try:
        env.reset(row)
        _, done, reward, _ = env.step({"role": "assistant", "content": "bye"})
        assert done
        assert reward == 0.5
    finally:
        set_verifier("zz_unverified", None)
    assert get_verifier("zz_unverified") is None


def test_score_false_plays_without_the_verifier(store):
    set_verifier("zz_unverified", lambda *a: 1 / 0)
    try:
        env = ShopEnv(store, score=False)
        env.reset({**make_row(store), "env": "zz_unverified"})
        _, done, reward, info = env.step({"role": "assistant", "content": "bye"})
    finally:
        set_verifier("zz_unverified", None)
    assert done
    assert reward is None
    assert info["state"]["final_text"] == "bye"


def test_shown_ids_are_collected_from_nested_results(store, env, picks):
    env.reset(make_row(store))
    obs, *_ = env.step(call("catalog_get_variants", product_id=picks["multi"]))
    shown = {v["variant_id"] for v in result(obs)["variants"]}
    assert shown <= env.state.shown_variant_ids
    assert picks["multi"] in env.state.shown_ids


def test_product_records_are_cached_and_equal_to_the_table(store, picks):
    a = store.product(picks["plain"])
    assert store.product(picks["plain"]) is a
    raw = store.products.filter(pl.col("product_id") == picks["plain"]).to_dicts()[0]
    assert a["title"] == raw["title"]
    assert store.variants_of(picks["multi"]) == store.variants_of(picks["multi"])
    assert store.product("NOPE") is None


@settings(max_examples=25)
@given(st.data())
def test_world_lookups_match_a_full_scan(store, data):
    users = store.read("users", columns=["user_id"])["user_id"].to_list()
    uid = data.draw(st.sampled_from(users))
    orders = store.read("orders")
    mine = orders.filter(pl.col("user_id") == uid)
    assert sorted(o["order_id"] for o in store.orders_of(uid)) == sorted(mine["order_id"])
    if mine.height:
        oid = data.draw(st.sampled_from(mine["order_id"].to_list()))
        assert store.order(oid)["user_id"] == uid
        lines = store.read("order_lines").filter(pl.col("order_id") == oid)
        assert [ln["line_no"] for ln in store.lines_of(oid)] == sorted(lines["line_no"])
    visits = store.read("visits").filter(pl.col("user_id") == uid)
    assert len(store.visits_of(uid)) == visits.height
    assert store.user(uid)["user_id"] == uid


def test_world_lookups_of_unknown_ids_are_empty(store):
    assert store.orders_of("UNOPE") == []
    assert store.order("000-0000000-0000000") is None
    assert store.lines_of("x" * 40) == []
    assert store.user("") is None


# -- the scoring fast paths (issue #7) equal the plain computations they replace -------------

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["product_id", "variant_id", "product_ids", "x", "é"]) | st.text(),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


@settings(max_examples=60)
@given(st.dictionaries(st.text(), _JSON_VALUES, max_size=4), st.data())
def test_encoded_object_equals_encoding_the_whole_dict(fields, data):
    from shopgen.env.tools.registry import encoded, encoded_object

    pre = {k: encoded(v) if data.draw(st.booleans()) else v for k, v in fields.items()}
    whole = encoded(fields)
    spliced = encoded_object(**pre)
    assert spliced.text == whole.text
    assert set(spliced.product_ids) == set(whole.product_ids)
    assert set(spliced.variant_ids) == set(whole.variant_ids)


def _reference_validate(spec, arguments, loose):
    """ToolSpec.validate as it was before its fast path: every value through _convert, then
    the argument's declared limits (``Param.limits``)."""
    from shopgen.env.tools.registry import ToolError, _convert

    known = {p.name for p in spec.params}
    extra = sorted(set(arguments) - known)
    if extra:
        allowed = ", ".join(sorted(known)) or "none"
        raise ToolError(
            f"{spec.name} has no argument {extra[0]!r} (arguments: {allowed})", "bad_arguments"
        )
    out = {}
    for p in spec.params:
        if p.name not in arguments:
            if p.required:
                raise ToolError(f"{spec.name} needs argument {p.name!r}", "bad_arguments")
            continue
        out[p.name] = _convert(spec.name, p.name, arguments[p.name], p.annotation, loose)
        for limit in p.limits:
            breach = limit.breach(out[p.name])
            if breach is not None:
                raise ToolError(f"{spec.name}: argument {p.name!r} {breach}", "bad_arguments")
    return out


def _outcome(fn, *args):
    from shopgen.env.tools.registry import ToolError

    try:
        value = fn(*args)
    except ToolError as exc:
        return ("error", exc.kind, exc.message)
    return ("ok", value, [type(v) for v in value.values()])


@settings(max_examples=150)
@given(st.data())
def test_fast_validate_equals_the_reference(data):
    from shopgen.env.tools import REGISTRY

    spec = REGISTRY[data.draw(st.sampled_from(sorted(REGISTRY)))]
    names = [p.name for p in spec.params] + ["bogus"]
    value = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
    value = value | st.lists(value, max_size=3)
    arguments = data.draw(st.dictionaries(st.sampled_from(names), value, max_size=4))
    loose = data.draw(st.booleans())
    fast = _outcome(lambda: spec.validate(arguments, loose=loose))
    reference = _outcome(lambda: _reference_validate(spec, arguments, loose))
    assert repr(fast) == repr(reference)  # repr: nan != nan, and 1 == 1.0 == True


@settings(max_examples=100)
@given(st.data())
def test_fast_validate_of_list_arguments_equals_the_reference(data):
    """Lists of exactly the item type are copied as they are; any other list is walked."""
    from shopgen.env.tools import REGISTRY

    specs = sorted(n for n, s in REGISTRY.items() if any(p.item_exact for p in s.params))
    assert specs, "some tool takes a list argument"
    spec = REGISTRY[data.draw(st.sampled_from(specs))]
    item = st.text(max_size=4) | st.integers() | st.floats(allow_nan=False) | st.booleans()
    arguments = {
        p.name: data.draw(st.lists(item, max_size=4) | st.lists(st.text(max_size=4), max_size=4))
        for p in spec.params
        if p.item_exact
    }
    loose = data.draw(st.booleans())
    fast = _outcome(lambda: spec.validate(arguments, loose=loose))
    reference = _outcome(lambda: _reference_validate(spec, arguments, loose))
    assert repr(fast) == repr(reference)
    if fast[0] == "ok":  # a copy: the tool may keep it without sharing the caller's list
        assert all(fast[1][k] is not v for k, v in arguments.items())


def _reference_checked(spec, arguments, loose):
    """The validation and the product ids invoke records as used, as it computed them inline."""
    args = spec.validate(arguments, loose=loose)
    used = []
    for key in spec.id_params:
        value = args.get(key)
        for pid in value if isinstance(value, list) else [value] if value else []:
            used.append(pid)
    return args, used


def _checked_outcome(fn):
    from shopgen.env.tools.registry import ToolError

    try:
        args, used = fn()
    except ToolError as exc:
        return ("error", exc.kind, exc.message)
    return ("ok", args, [type(v) for v in args.values()], list(used))


@settings(max_examples=100)
@given(st.data())
def test_remembered_validation_equals_validate(data):
    """invoke's ``shared`` validation: a hit is the first validation, a failure raises again."""
    from shopgen.env.tools import REGISTRY
    from shopgen.env.tools.registry import _checked, _validated

    spec = REGISTRY[data.draw(st.sampled_from(sorted(REGISTRY)))]
    names = [p.name for p in spec.params] + ["bogus"]
    value = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=5)
        | st.lists(st.text(max_size=3), max_size=3)
    )
    arguments = data.draw(st.dictionaries(st.sampled_from(names), value, max_size=4))
    loose = data.draw(st.booleans())
    reference = _checked_outcome(lambda: _reference_checked(spec, arguments, loose))
    assert repr(_checked_outcome(lambda: _checked(spec, arguments, loose))) == repr(reference)
    assert repr(_checked_outcome(lambda: _validated(spec, arguments, loose))) == repr(reference)
    assert repr(_checked_outcome(lambda: _validated(spec, arguments, loose))) == repr(reference)
    if data.draw(st.booleans()):  # another tool's validation of the same dict is not reused
        other = REGISTRY[data.draw(st.sampled_from(sorted(REGISTRY)))]
        expected = _checked_outcome(lambda: _reference_checked(other, arguments, loose))
        assert repr(_checked_outcome(lambda: _validated(other, arguments, loose))) == repr(expected)


def test_arguments_handed_over_as_a_dict_are_read_anew_each_step(store, env, picks):
    """A caller reusing its own arguments dict is not answered from a remembered validation."""
    row = make_row(store)
    arguments = {"product_id": picks["plain"]}
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "catalog_get_product", "arguments": arguments},
            }
        ],
    }
    env.reset(row)
    first, _, _, _ = env.step(message)
    arguments["product_id"] = "B0NOSUCH00"
    env.reset(row)
    second, _, _, _ = env.step(message)
    assert result(first)["product_id"] == picks["plain"]
    assert result(second)["error"] == "not_found"


def test_only_remembered_parses_have_their_validation_remembered(store, env, picks):
    """A dict of arguments the caller owns is validated each step and never held by the memo."""
    from shopgen.env.parsing import parse_shared
    from shopgen.env.tools.registry import _VALIDATED

    def message(arguments):
        call = {"name": "catalog_get_product", "arguments": arguments}
        return {"role": "assistant", "content": "", "tool_calls": [{"function": call}]}

    as_dict = message({"product_id": picks["plain"]})
    as_text = message(json.dumps({"product_id": picks["plain"]}))
    assert not parse_shared(as_dict).shared
    assert parse_shared(as_text).shared
    assert parse_shared(as_text) is parse_shared(as_text)
    row = make_row(store)
    env.reset(row)
    held = set(_VALIDATED.data)
    env.step(as_dict)
    assert set(_VALIDATED.data) == held
    env.reset(row)
    env.step(as_text)
    assert id(parse_shared(as_text).items[0].arguments) in _VALIDATED.data


def test_memoised_catalog_reads_show_each_episodes_own_stock(store, picks):
    """A read remembered in one episode is not shown in another whose stock differs."""
    warm = ShopEnv(store)
    rules = {
        "out_of_stock": [picks["variant"]],
        "stock_overrides": {picks["plain"]: 1, picks["plain_variant"]: 1},
    }
    plain_row, ruled_row = make_row(store), make_row(store, episode=rules)
    reads = [
        call("catalog_get_variants", product_id=picks["multi"]),
        call("catalog_get_product", product_id=picks["plain"]),
        call("catalog_get_variants", product_id=picks["plain"]),
    ]
    seen = {}
    for row in (plain_row, ruled_row, plain_row, ruled_row):
        for message in reads:
            fresh = ShopEnv(store)  # an empty memo: the plain computation
            fresh.reset(row)
            warm.reset(row)
            want = fresh.step(message)[0]["messages"][0]["content"]
            assert warm.step(message)[0]["messages"][0]["content"] == want
            assert warm.state.shown_variant_ids == fresh.state.shown_variant_ids
            seen.setdefault(str(message), set()).add(want)
    assert all(len(texts) == 2 for texts in seen.values())  # the rules did change each read


def test_memoised_cart_summaries_equal_fresh_ones(store, picks):
    warm = ShopEnv(store, score=False)  # the hand-made row has no goal
    steps = [
        call("cart_add", product_id=picks["plain"], quantity=2),
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant"]),
        call("cart_view"),
        call("cart_update_quantity", product_id=picks["plain"], quantity=1),
        call("cart_remove", product_id=picks["multi"]),
        call("cart_view"),
    ]
    for _ in range(2):
        fresh = ShopEnv(store, score=False)
        row = make_row(store, T_max=12)
        fresh.reset(row)
        warm.reset(row)
        for message in steps:
            want = fresh.step(message)[0]["messages"][0]["content"]
            assert warm.step(message)[0]["messages"][0]["content"] == want
        assert warm.state.shown_ids == fresh.state.shown_ids
        assert warm.state.cart == fresh.state.cart


@pytest.mark.parametrize("field", ["goal", "episode", "user_script", "tools", "oracle"])
def test_verifiers_decode_row_fields_like_the_row(store, field):
    from shopgen.schemas.task import TaskRow
    from shopgen.verifiers.rows import decoded

    row = TaskRow.from_row(make_row(store, episode={"today": "2026-02-03"}))
    assert decoded(row, field) == row.decoded(field)
    assert decoded(row, field) is decoded(row, field)  # decoded once per distinct text


def test_verifiers_decoded_rejects_a_field_that_is_not_json(store):
    from shopgen.schemas.task import TaskRow
    from shopgen.verifiers.rows import decoded

    with pytest.raises(KeyError, match="not a JSON field"):
        decoded(TaskRow.from_row(make_row(store)), "env")


def test_remembered_policy_searches_equal_fresh_ones(store):
    warm = ShopEnv(store, score=False)
    queries = ["return window for electronics", "restocking fee opened item"] * 2
    for query in queries:
        row = make_row(store, env="policy")
        fresh = ShopEnv(store, score=False)
        fresh.reset(row)
        warm.reset(row)
        want = fresh.step(call("policy_search", query=query))[0]["messages"][0]["content"]
        assert warm.step(call("policy_search", query=query))[0]["messages"][0]["content"] == want
        assert "results" in want


_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda c: (
        st.lists(c, max_size=3)
        | st.lists(c, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4), c, max_size=3)
    ),
    max_leaves=12,
)


@given(_data)
def test_copy_data_is_a_deep_copy(value):
    import copy

    from shopgen.env.verifier import copy_data

    copied = copy_data(value)
    assert copied == copy.deepcopy(value)
    assert type(copied) is type(value)

    def containers(v):
        if isinstance(v, dict):
            yield v
            for item in v.values():
                yield from containers(item)
        elif isinstance(v, list | tuple):
            if isinstance(v, list):
                yield v
            for item in v:
                yield from containers(item)

    originals = {id(c) for c in containers(value)}
    assert not originals & {id(c) for c in containers(copied)}  # no dict or list shared


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("recommend_products", {"product_ids": ["P2", "P1", "P3"]}),
        ("catalog_get_product", {"product_id": "P1"}),
        ("cart_view", {}),
    ],
)
def test_checked_calls_name_the_product_ids_they_use_in_order(tool, arguments):
    from shopgen.env.tools import REGISTRY
    from shopgen.env.tools.registry import _checked

    spec = REGISTRY[tool]
    args, used = _reference_checked(spec, arguments, False)
    assert _checked(spec, arguments, False) == (args, tuple(used))


def test_remembered_recommendation_facts_equal_a_cold_store(store, picks):
    """recommend_products' facts per (product, stock): a warm memo records what a cold one does."""
    warm = ShopEnv(store)
    pids = [picks["plain"], picks["multi"]]
    plain = make_row(store, env="discovery")
    ruled = make_row(store, env="discovery", episode={"stock_overrides": {picks["plain"]: 0}})
    recorded = []
    for row in (plain, ruled, plain, ruled):
        fresh = ShopEnv(store)  # an empty memo: the plain computation
        for shop in (fresh, warm):
            shop.reset(row)
            shop.step(call("recommend_products", product_ids=pids))
        assert warm.state.extra["recommended_facts"] == fresh.state.extra["recommended_facts"]
        recorded.append(warm.state.extra["recommended_facts"][picks["plain"]])
    assert recorded[0]["stock_qty"] != recorded[1]["stock_qty"]  # the rules did change it
    assert recorded[2] is recorded[0]  # one shared record per (product, stock)
    assert recorded[3] is recorded[1]
