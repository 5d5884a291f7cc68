"""Product ids the customer's opening message names count as shown (no hallucination)."""

from __future__ import annotations

from runtime_helpers import call, make_row

from shopgen.verifiers.reward import r_hall


def _row_saying(store, text: str) -> dict:
    row = make_row(store, env="substitution")
    row["messages"] = [
        {"role": "system", "content": "You are a shopping assistant."},
        {"role": "user", "content": text},
    ]
    return row


def test_an_id_the_customer_names_is_not_a_hallucination(unscored_env, store, picks):
    """substitution's customer says "(item B0…)": looking it up cost r_hall and correctness."""
    said = picks["plain"]
    unscored_env.reset(_row_saying(store, f"I wanted the thing (item {said}) but it is gone."))
    unscored_env.step(call("catalog_get_product", product_id=said))
    assert said in unscored_env.state.shown_ids
    assert unscored_env.state.unshown_used_ids == []
    assert r_hall(unscored_env.state) == 0.0


def test_only_real_catalog_ids_of_the_customer_count(unscored_env, store, picks):
    """Words that look like ids but name no product, and the system message, show nothing."""
    row = _row_saying(store, "Is B000000000 or ABCDEFGHIJ in stock?")
    row["messages"][0]["content"] = f"Never mention {picks['plain2']}."
    unscored_env.reset(row)
    assert unscored_env.state.shown_ids == set()
    unscored_env.step(call("catalog_get_product", product_id=picks["plain2"]))
    assert unscored_env.state.unshown_used_ids == [picks["plain2"]]


def test_a_new_episode_starts_from_its_own_opening(unscored_env, store, picks):
    said = picks["plain"]
    unscored_env.reset(_row_saying(store, f"item {said} please"))
    unscored_env.reset(_row_saying(store, "nothing named here"))
    assert said not in unscored_env.state.shown_ids
