import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.gen.difficulty import theta
from shopgen.gen.noise import char_error_rate
from shopgen.gen.render import (
    REPLY_KINDS,
    STYLES,
    TemplateError,
    phrasings,
    render_first_message,
    render_user_reply,
)
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, example_slots, make_slot, slots
from shopgen.schemas.errors import ConfigError

PRIVATE = range(0xE000, 0xF900)


def _render(env, k, d, style=None, **kw):
    rng = stream(0, "test-render", env, d, k)
    goal = example_slots(env, rng, n=1 + k % 3)
    return goal, render_first_message(env, goal, d=d, rng=rng, style=style, **kw)


@pytest.mark.parametrize("env", ENVS)
def test_at_least_15_phrasings_over_all_styles(env):
    table = phrasings(f"{env}/first.j2")
    assert set(table) == set(STYLES)
    assert sum(len(v) for v in table.values()) >= 15


@pytest.mark.parametrize("env", ENVS)
def test_every_phrasing_renders_leak_free_at_all_levels(env):
    macros = set()
    for k in range(150):
        d = k % 16
        goal, r = _render(env, k, d, style=STYLES[k % len(STYLES)])
        macros.add(r.phrasing)
        assert r.text
        assert r.text == r.text.strip()
        for bad in ("{", "}", "None", "Undefined", "  "):
            assert bad not in r.clean, (bad, r.clean)
        assert "{" not in r.text
        assert "}" not in r.text
        assert not any(ord(ch) in PRIVATE for ch in r.text)
        required = {s.name for s in goal if s.required}
        assert required <= set(r.kept)
        assert set(r.kept) | set(r.dropped) == {s.name for s in goal}
        assert not set(r.kept) & set(r.dropped)
        assert not required & set(r.dropped)
    assert len(macros) >= 15  # the draws actually reach the phrasings


@pytest.mark.parametrize("env", ENVS)
def test_protected_values_verbatim_and_dropped_values_absent(env):
    for k in range(60):
        goal, r = _render(env, k, 12)
        by_name = {s.name: s for s in goal}
        for name, a, b in r.spans:
            assert r.text[a:b] == by_name[name].display()
        for s in goal:
            if s.name in r.kept and s.protected:
                assert s.display() in r.text
                assert any(n == s.name for n, _, _ in r.spans)
        # Protected values carry random digits (order refs, cents) so they occur nowhere else.
        for name in r.dropped:
            s = by_name[name]
            if s.kind in ("order_ref", "money", "id"):
                assert s.display() not in r.clean


def test_kept_optional_slots_are_said_in_clean_text():
    for env in ENVS:
        for k in range(40):
            # d=0 and no mobile style: no typos and no shorthand, so values read verbatim.
            goal, r = _render(env, k, 0, style=STYLES[k % 5])
            by_name = {s.name: s for s in goal}
            for name in r.kept:
                assert by_name[name].display() in r.clean


@pytest.mark.parametrize("d", [0, 3, 6, 10])
def test_omission_rate_matches_p_missing(d):
    dropped = optional = 0
    for k in range(400):
        goal, r = _render("discovery", k, d)
        optional += sum(not s.required for s in goal)
        dropped += len(r.dropped)
    p = theta(d).p_missing
    sd = (p * (1 - p) / optional) ** 0.5
    assert abs(dropped / optional - p) < 4 * sd + 1e-9


def test_omission_override_via_axes():
    goal, r = _render("policy", 1, 20, axes=theta(20, p_missing=0.0))
    assert r.dropped == ()
    goal, r = _render("policy", 1, 0, axes=theta(0, p_missing=1.0))
    assert set(r.dropped) == {s.name for s in goal if not s.required}


@pytest.mark.parametrize("d", [4, 8, 12])
def test_first_message_noise_rate_matches_p_noise(d):
    noisy, clean, chars = [], [], 0
    for env in ENVS:
        for k in range(120):
            _, r = _render(env, k, d)
            noisy.append(r.text)
            clean.append(r.clean)
            chars += r.unprotected_chars
    assert char_error_rate(noisy, clean, chars=chars) == pytest.approx(theta(d).p_noise, rel=0.1)


def test_noise_free_at_d0_and_noisy_text_differs_at_high_d():
    assert all(
        _render(e, k, 0)[1].text == _render(e, k, 0)[1].clean for e in ENVS for k in range(5)
    )
    assert (
        sum(_render("cart", k, 12)[1].text != _render("cart", k, 12)[1].clean for k in range(20))
        > 15
    )


def test_mobile_style_uses_shorthand():
    texts = [_render("discovery", k, 0, style="mobile")[1].text for k in range(40)]
    assert any(" 4 " in t or "pls" in t or "thx" in t for t in texts)


@given(st.sampled_from(ENVS), st.integers(0, 30), st.integers(0, 10**6))
@settings(max_examples=60)
def test_property_protected_spans_and_omission(env, d, seed):
    rng = stream(seed, "prop", env)
    goal = example_slots(env, rng, n=2)
    r = render_first_message(env, goal, d=d, rng=rng)
    by_name = {s.name: s for s in goal}
    assert all(r.text[a:b] == by_name[n].display() for n, a, b in r.spans)
    assert {n for n, _, _ in r.spans} == {n for n in r.kept if by_name[n].protected}
    assert not {s.name for s in goal if s.required} & set(r.dropped)


def test_same_key_same_text_and_different_key_differs():
    a = _render("returns", 3, 9)[1]
    b = _render("returns", 3, 9)[1]
    assert a == b
    assert len({_render("returns", k, 9)[1].text for k in range(20)}) == 20


_SCRIPT = """
from shopgen.gen.render import render_first_message, render_user_reply
from shopgen.gen.seeding import stream
from shopgen.gen.slots import ENVS, example_slots
for env in ENVS:
    for k in range(15):
        rng = stream(7, env, k)
        goal = example_slots(env, rng)
        r = render_first_message(env, goal, d=k, rng=rng)
        print(r.text, r.dropped)
        print(render_user_reply("answer", goal[:1], style=r.style, rng=rng, p_noise=0.1).text)
"""


def test_identical_across_processes_with_different_hash_seeds():
    outs = []
    for hs in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        outs.append(run.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert outs[0].count("\n") == 2 * 15 * len(ENVS)


@pytest.mark.parametrize("kind", REPLY_KINDS)
@pytest.mark.parametrize("style", STYLES)
def test_user_replies_state_their_slots(kind, style):
    rng = stream(3, "reply", kind, style)
    goal = example_slots("returns", rng)
    said = [s for s in goal if s.name in ("order_ref", "reason")]
    for i in range(10):
        r = render_user_reply(kind, said, style=style, rng=stream(3, kind, style, i), p_noise=0.05)
        assert r.text
        assert "{" not in r.text
        assert "}" not in r.text
        assert not any(ord(ch) in PRIVATE for ch in r.text)
        if kind in ("answer", "correct", "change_mind"):
            assert "#W" in r.text
            assert said[0].display() in r.text
            assert set(r.kept) == {"order_ref", "reason"}


@pytest.mark.parametrize("style", STYLES)
def test_an_answer_states_facts_and_no_yes_or_no(style):
    # Answers also reply to yes/no questions ("Is your budget $20?", "Is black OK?"): one
    # opening "Yes," confirmed what its facts then contradicted ("Yes, the budget is $25").
    goal = example_slots("discovery", stream(4, "yn"))
    for i in range(30):
        text = render_user_reply("answer", goal[:1], style=style, rng=stream(4, "yn", style, i))
        assert not re.match(r"(yes|no)\b", text.text.strip(), re.I), text.text


def test_user_reply_dont_know_reveals_nothing():
    goal = example_slots("returns", stream(0, "dk"))
    for i in range(20):
        r = render_user_reply("dont_know", goal, style=STYLES[i % 6], rng=stream(0, "dk", i))
        assert all(s.display() not in r.text for s in goal)


def test_bad_arguments_are_config_errors():
    goal = example_slots("cart", stream(0, "bad"))
    with pytest.raises(ConfigError, match="env='carts'"):
        render_first_message("carts", goal, d=1, rng=stream(0))
    with pytest.raises(ConfigError, match="style='shouty'"):
        render_first_message("cart", goal, d=1, rng=stream(0), style="shouty")
    with pytest.raises(ConfigError, match="d=-1"):
        render_first_message("cart", goal, d=-1, rng=stream(0))
    with pytest.raises(ConfigError, match="kind='wave'"):
        render_user_reply("wave", goal, style="terse", rng=stream(0))
    with pytest.raises(ConfigError, match="needs at least one slot"):
        render_user_reply("answer", (), style="terse", rng=stream(0))
    with pytest.raises(ConfigError, match="not in the cart vocabulary"):
        make_slot("cart", "items.0.colour", "red")
    with pytest.raises(ConfigError, match="braces"):
        make_slot("status", "item", "{order_ref}")
    with pytest.raises(ConfigError, match="always required"):
        make_slot("status", "want", "tracking number")
    with pytest.raises(ConfigError, match="needs slot 'topic'"):
        slots("policy", {"tier": "Gold"})


def test_template_that_forgets_a_slot_raises(monkeypatch):
    from shopgen.gen import render

    real = render._call
    monkeypatch.setattr(render, "_SKELETONS", {})  # a cached skeleton would skip the template
    monkeypatch.setattr(
        render, "_call", lambda path, macro, arg: real(path, macro, arg).replace("\ue000", "\ue002")
    )
    with pytest.raises(TemplateError):
        _render("bundle", 0, 0)


def test_axis_names_are_said_the_way_customers_say_them():
    from shopgen.gen.render import render_first_message as render
    from shopgen.gen.seeding import stream as rng_for
    from shopgen.gen.slots import make_slot, slot_label

    assert slot_label("kids_size") == "size"
    assert slot_label("shoe_size_us") == "size"
    assert slot_label("cable_length") == "cable length"
    slots = (
        make_slot("returns", "item", "graphic tee", required=True),
        make_slot("returns", "order_ref", "400-0074078-0066225", required=True),
        make_slot("returns", "action", "exchange", required=True),
        make_slot("returns", "exchange.kids_size", "Toddler 4T", required=True),
    )
    for k in range(20):
        text = render("returns", slots, d=0, rng=rng_for(0, "label", k)).text
        assert "kids_size" not in text
        assert "size Toddler 4T" in text


@pytest.mark.parametrize("style", ["chatty", "polite"])
def test_a_return_without_its_action_says_send_it_back(style):
    """ "Can I send back it?": the phrasings ending in "… it" put the pronoun after the
    particle when the customer did not say return or exchange."""
    from shopgen.gen.render import render_first_message as render
    from shopgen.gen.seeding import stream as rng_for

    slots = (
        make_slot("returns", "item", "desktop pc", required=True),
        make_slot("returns", "order_ref", "400-0074078-0066225", required=True),
    )
    texts = [
        render("returns", slots, d=0, rng=rng_for(0, "act", k), style=style).text for k in range(30)
    ]
    assert not any("send back it" in t for t in texts)
    assert any("send it back" in t for t in texts)
