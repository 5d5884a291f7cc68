import pytest

from shopgen.gen.difficulty import theta
from shopgen.gen.render import render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import example_slots, slots
from shopgen.gen.switches import ENV_SWITCHES, Switch, apply_switch, plan_switch, switch_slots
from shopgen.schemas.errors import ConfigError

CART_OPTIONS = {
    "swap_item": {"items.0.desc": ["phone case", "notebook"]},
    "change_variant": {"items.0.variant.color": ["red", "navy"], "items.0.variant.size": ["M"]},
    "add_item": {"items.1.desc": ["wool socks"]},
}


@pytest.mark.parametrize("d", [0, 5, 10])
def test_switch_rate_matches_p_switch(d):
    th = theta(d)
    n = 3000
    hits = 0
    for k in range(n):
        goal = example_slots("cart", stream(0, "sw-goal", k), n=1)
        sw = plan_switch(
            "cart",
            goal,
            p_switch=th.p_switch,
            T_max=th.T_max,
            rng=stream(0, "sw", d, k),
            options=CART_OPTIONS,
        )
        if sw is not None:
            hits += 1
            assert 1 <= sw.turn <= th.T_max - 1
    sd = (th.p_switch * (1 - th.p_switch) / n) ** 0.5
    assert abs(hits / n - th.p_switch) < 4 * sd


def test_switch_kinds_and_turns_all_occur():
    kinds, turns = set(), set()
    goal = example_slots("cart", stream(0, "g"), n=1)
    for k in range(300):
        sw = plan_switch(
            "cart", goal, p_switch=1.0, T_max=6, rng=stream(1, k), options=CART_OPTIONS
        )
        kinds.add(sw.kind)
        turns.add(sw.turn)
    assert kinds == set(ENV_SWITCHES["cart"])
    assert turns == {1, 2, 3, 4, 5}


def test_apply_switch_gives_final_intent_and_is_pure():
    goal = slots("bundle", {"project": "garden", "budget": 100}, required=["project"])
    sw = Switch(kind="lower_budget", turn=2, changes=(("budget", 80),))
    final = apply_switch(goal, sw)
    assert [(s.name, s.value) for s in final] == [("project", "garden"), ("budget", 80)]
    assert goal[1].value == 100
    assert apply_switch(goal, None) == goal


def test_add_item_switch_adds_a_typed_slot():
    goal = example_slots("cart", stream(0, "add"), n=1)
    sw = Switch(kind="add_item", turn=1, changes=(("items.1.desc", "wool socks"),))
    final = apply_switch(goal, sw, env="cart")
    added = final[-1]
    assert (added.name, added.required, added.kind) == ("items.1.desc", True, "text")
    with pytest.raises(ConfigError, match="pass env="):
        apply_switch(goal, sw)


def test_never_switches_to_the_current_value():
    goal = slots("bundle", {"project": "garden", "budget": 100}, required=["project"])
    for k in range(50):
        sw = plan_switch(
            "bundle",
            goal,
            p_switch=1.0,
            T_max=5,
            rng=stream(2, k),
            options={"lower_budget": {"budget": [100]}},
        )
        assert sw is None


def test_status_and_policy_never_switch():
    goal = example_slots("status", stream(0, "st"))
    assert (
        plan_switch(
            "status",
            goal,
            p_switch=1.0,
            T_max=8,
            rng=stream(0),
            options=CART_OPTIONS | {"raise_budget": {"budget": [5]}},
        )
        is None
    )


def test_switch_round_trips_and_reply_states_new_value():
    goal = example_slots("cart", stream(0, "rt"), n=1)
    sw = plan_switch(
        "cart",
        goal,
        p_switch=1.0,
        T_max=6,
        rng=stream(3),
        options={"change_variant": {"items.0.variant.size": ["XXL"]}},
    )
    assert Switch.from_dict(sw.to_dict()) == sw
    reply = render_user_reply(
        "change_mind", switch_slots(goal, sw, env="cart"), style="polite", rng=stream(3, "r")
    )
    assert "XXL" in reply.text


def test_bad_switch_arguments():
    goal = example_slots("cart", stream(0, "b"), n=1)
    with pytest.raises(ConfigError, match=r"p_switch=1\.5"):
        plan_switch("cart", goal, p_switch=1.5, T_max=4, rng=stream(0), options={})
    with pytest.raises(ConfigError, match="teleport"):
        plan_switch("cart", goal, p_switch=0.5, T_max=4, rng=stream(0), options={"teleport": {}})
