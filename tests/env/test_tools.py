import json

import pytest
from runtime_helpers import call, make_row, result

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import ENV_TOOLS, REGISTRY, env_tool_schemas
from shopgen.env.tools.registry import build_spec, parse_docstring


def play(env, store, *messages, episode=None, env_name="cart"):
    env.reset(make_row(store, env=env_name, episode=episode, T_max=50, B_tool=5))
    outs = []
    for m in messages:
        obs, _, _, info = env.step(m)
        outs.append((result(obs), info["errors"]))
    return outs


def test_schemas_are_derived_from_signatures_and_docstrings():
    fn = REGISTRY["cart_add"].schema["function"]
    params = fn["parameters"]
    assert params["additionalProperties"] is False
    assert params["required"] == ["product_id"]
    assert params["properties"]["quantity"]["type"] == "integer"
    assert "not a variant_id" in params["properties"]["product_id"]["description"]
    assert REGISTRY["recommend_products"].schema["function"]["parameters"]["properties"][
        "product_ids"
    ]["items"] == {"type": "string"}
    assert REGISTRY["cart_view"].kind == "read"
    assert REGISTRY["cart_add"].kind == "write"
    for name, spec in REGISTRY.items():
        assert spec.schema["function"]["description"], name


def test_model_card_tools_keep_their_parameters():
    props = {n: set(REGISTRY[n].schema["function"]["parameters"]["properties"]) for n in REGISTRY}
    assert props["catalog_search"] == {"query"}
    assert props["catalog_get_variants"] == {"product_id"}
    assert props["cart_add"] == {"product_id", "variant_id", "quantity"}
    assert props["cart_view"] == set()
    assert props["user_get_visit_history"] == set()


def test_every_env_lists_only_registered_tools():
    for env in ENV_TOOLS:
        env_tool_schemas(env)


def test_undocumented_argument_is_rejected_at_registration():
    def bad(ctx, x: int) -> dict:
        """No args section."""

    with pytest.raises(ValueError, match="no docstring entry"):
        build_spec(bad, "read")


def test_docstring_parser_joins_continuation_lines():
    summary, args = parse_docstring(
        "Do it.\n\nMore.\n\nArgs:\n    a: first\n        line two.\n    b (int): second.\n\nReturns:\n    x"
    )
    assert summary == "Do it. More."
    assert args == {"a": "first line two.", "b": "second."}


def test_get_product_and_variants(env, store, picks):
    (prod, _), (vars_, _), (plain_vars, _) = play(
        env,
        store,
        call("catalog_get_product", product_id=picks["multi"]),
        call("catalog_get_variants", product_id=picks["multi"]),
        call("catalog_get_variants", product_id=picks["plain"]),
    )
    assert prod["product_id"] == picks["multi"]
    assert prod["n_variants"] == len(vars_["variants"]) >= 2
    assert picks["variant"] in {v["variant_id"] for v in vars_["variants"]}
    assert len(plain_vars["variants"]) == 1
    assert env.state.shown_ids == {picks["multi"], picks["plain"]}
    assert picks["variant"] in env.state.shown_variant_ids


def test_unknown_ids_and_variant_ids_in_product_slot_are_not_found(env, store, picks):
    (a, ea), (b, _eb) = play(
        env,
        store,
        call("catalog_get_product", product_id="B000000000"),
        call("catalog_get_variants", product_id=picks["variant"]),
    )
    assert a["error"] == b["error"] == "not_found"
    assert picks["multi"] in b["message"]
    assert ea[0]["protocol"] is False
    assert env.state.unshown_used_ids == ["B000000000", picks["variant"]]


def test_cart_add_success_and_accumulates(env, store, picks):
    (a, _), (_b, _), (c, _) = play(
        env,
        store,
        call("cart_add", product_id=picks["plain"]),
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant"], quantity=2),
        call("cart_add", product_id=picks["plain"], quantity=1),
    )
    view = c["cart"]
    assert a["added"]["variant_id"] == picks["plain_variant"]
    assert env.state.cart == {
        (picks["plain"], picks["plain_variant"]): 2,
        (picks["multi"], picks["variant"]): 2,
    }
    assert view["items"] == 4
    assert view["total"] == pytest.approx(sum(line["line_total"] for line in view["lines"]))


@pytest.mark.parametrize(
    ("args", "kind", "text"),
    [
        ({"variant_id": None}, "refused", "variants"),
        ({"variant_id": "V000000000"}, "not_found", "no variant"),
        ({"variant_id": "foreign"}, "refused", "belongs to"),
        ({"variant_id": "variant", "quantity": 0}, "bad_arguments", "quantity"),
        ({"variant_id": "variant", "quantity": 10_000}, "bad_arguments", "quantity"),
        ({"variant_id": "variant", "quantity": "2"}, "bad_arguments", "must be integer"),
        ({"variant_id": "variant", "colour": "red"}, "bad_arguments", "no argument 'colour'"),
    ],
)
def test_cart_add_failures(env, store, picks, args, kind, text):
    args = {
        k: picks.get(v, picks["foreign_variant"] if v == "foreign" else v)
        if isinstance(v, str)
        else v
        for k, v in args.items()
    }
    ((r, errors),) = play(env, store, call("cart_add", product_id=picks["multi"], **args))
    assert r["error"] == kind
    assert text in r["message"]
    assert env.state.cart == {}
    assert errors[0]["kind"] == kind


def test_cart_add_plain_product_rejects_a_variant_and_missing_product_id(env, store, picks):
    (a, _), (b, _) = play(
        env,
        store,
        call("cart_add", product_id=picks["plain"], variant_id=picks["variant"]),
        call("cart_add", quantity=1),
    )
    assert a["error"] == "refused"
    assert b["error"] == "bad_arguments"
    assert "needs argument 'product_id'" in b["message"]


def test_stock_limits_and_episode_overrides(env, store, picks):
    episode = {"stock_overrides": {picks["variant"]: 1}, "out_of_stock": [picks["plain2"]]}
    outs = play(
        env,
        store,
        call("cart_add", product_id=picks["plain"], quantity=picks["plain_stock"] + 1),
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant"], quantity=2),
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant"], quantity=1),
        call("cart_add", product_id=picks["plain2"]),
        call("catalog_get_product", product_id=picks["plain2"]),
        episode=episode,
    )
    assert [o[0].get("error") for o in outs[:4]] == ["refused", "refused", None, "refused"]
    assert "out of stock" in outs[3][0]["message"]
    assert outs[4][0]["stock_qty"] == 0


def test_cart_view_remove_and_update(env, store, picks):
    outs = play(
        env,
        store,
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant"]),
        call("cart_add", product_id=picks["multi"], variant_id=picks["variant2"]),
        call("cart_remove", product_id=picks["multi"]),
        call(
            "cart_update_quantity",
            product_id=picks["multi"],
            variant_id=picks["variant"],
            quantity=2,
        ),
        call("cart_remove", product_id=picks["multi"], variant_id=picks["variant2"]),
        call("cart_update_quantity", product_id=picks["multi"], quantity=0),
        call("cart_view"),
        call("cart_remove", product_id=picks["plain"]),
        call("cart_update_quantity", product_id=picks["plain"], quantity=1),
    )
    kinds = [o[0].get("error") for o in outs]
    assert kinds == [None, None, "refused", None, None, None, None, "not_found", "not_found"]
    assert outs[3][0]["cart"]["items"] == 3
    assert outs[6][0] == {"lines": [], "items": 0, "total": 0.0}


def test_update_quantity_checks_stock(env, store, picks):
    outs = play(
        env,
        store,
        call("cart_add", product_id=picks["plain"]),
        call("cart_update_quantity", product_id=picks["plain"], quantity=picks["plain_stock"] + 1),
    )
    assert outs[1][0]["error"] == "refused"
    assert env.state.cart == {(picks["plain"], picks["plain_variant"]): 1}


def test_visit_history_shows_ids(env, store, picks):
    visits = [{"product_id": picks["plain"], "title": "t", "viewed_at": "2024-05-01T10:00:00"}]
    ((r, _),) = play(env, store, call("user_get_visit_history"), episode={"visit_history": visits})
    now = f"{store.manifest.config['today']}T12:00"  # "yesterday" counts from the world's noon
    assert r == {"now": now, "visits": visits}
    assert picks["plain"] in env.state.shown_ids
    ((empty, _),) = play(env, store, call("user_get_visit_history"))
    assert empty == {"now": now, "visits": []}
    episode = {"visit_history": visits, "today": "2024-05-03"}  # a journey's own day wins
    ((r, _),) = play(env, store, call("user_get_visit_history"), episode=episode)
    assert r["now"] == "2024-05-03T12:00"


def test_recommend_products(env, store, picks):
    outs = play(
        env,
        store,
        call("recommend_products", product_ids=[picks["plain"], picks["multi"]]),
        call("recommend_products", product_ids=[]),
        call("recommend_products", product_ids=[picks["plain"], picks["plain"]]),
        call("recommend_products", product_ids=[picks["plain"], "B000000000"]),
        call("recommend_products", product_ids=picks["plain"]),
        env_name="discovery",
    )
    assert outs[0][0]["recommended"] == [picks["plain"], picks["multi"]]
    assert [o[0].get("error") for o in outs[1:]] == [
        "bad_arguments",
        "bad_arguments",
        "not_found",
        "bad_arguments",
    ]
    assert env.state.recommendations == [picks["plain"], picks["multi"]]
    assert env.state.unshown_used_ids[:2] == [picks["plain"], picks["multi"]]


def test_loose_parameter_values_are_converted(env, store, picks):
    env.reset(make_row(store, T_max=9, B_tool=5))
    text = (
        f"<tool_call><function=cart_add><parameter=product_id>\n{picks['plain']}\n</parameter>"
        "<parameter=quantity>\n2\n</parameter></function></tool_call>"
        "<tool_call><function=cart_add><parameter=product_id>x</parameter><parameter=quantity>two</parameter></function></tool_call>"
    )
    obs, *_ = env.step(text)
    assert result(obs, 0)["added"]["quantity"] == 2
    assert result(obs, 1)["error"] == "bad_arguments"


def test_search_without_an_index_is_a_graceful_error(env, store):
    ((r, _errors),) = play(env, store, call("catalog_search", query="boots"))
    assert r["error"] == "unavailable"


def test_search_with_a_stub_index_records_shown_ids(store, picks):
    class Card:
        def __init__(self, pid):
            self.pid = pid

        def model_dump(self):
            return {"product_id": self.pid, "title": "t"}

    class StubIndex:
        def __init__(self):
            self.calls = []

        def search(self, query, **kw):
            self.calls.append((query, kw["call_index"]))
            return [Card(picks["plain"])]

    index = StubIndex()
    env = ShopEnv(store, search=index)
    outs = play(env, store, call("catalog_search", query="a"), call("catalog_search", query="b"))
    assert outs[0][0] == {"results": [{"product_id": picks["plain"], "title": "t"}]}
    assert index.calls == [("a", 0), ("b", 1)]
    assert env.state.shown_ids == {picks["plain"]}


def test_blank_search_is_refused_without_counting_as_a_search(store, picks):
    class StubIndex:
        def __init__(self):
            self.calls = []

        def search(self, query, **kw):
            self.calls.append((query, kw["call_index"]))
            return []

    index = StubIndex()
    env = ShopEnv(store, search=index)
    outs = play(env, store, call("catalog_search", query="  "), call("catalog_search", query="b"))
    assert outs[0][0]["error"] == "bad_arguments"
    assert not outs[0][1][0]["protocol"]
    assert index.calls == [("b", 0)]


def test_tool_not_offered_and_unknown_tool(env, store, picks):
    outs = play(env, store, call("recommend_products", product_ids=[picks["plain"]]), call("rm_rf"))
    assert [o[0]["error"] for o in outs] == ["not_offered", "unknown_tool"]
    assert all(o[1][0]["protocol"] for o in outs)
    assert env.state.recommendations == []


def test_tool_results_are_compact_json(env, store, picks):
    env.reset(make_row(store))
    obs, *_ = env.step(call("catalog_get_product", product_id=picks["plain"]))
    content = obs["messages"][0]["content"]
    assert ", " not in content[:40]
    assert ": " not in content[:40]
    assert json.loads(content)["product_id"] == picks["plain"]
