"""The verifiers' memos (issue #7's scoring throughput) grade exactly as the plain computation."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shopgen.env.episode import ShopEnv
from shopgen.env.verifier import Score, get_verifier
from shopgen.policies import play as play_policy
from shopgen.schemas.envs import ENV_NAMES
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import TaskFactory
from shopgen.verifiers import ranking
from shopgen.verifiers.replay import assistant_messages, play
from shopgen.verifiers.rows import decoded


@pytest.fixture(scope="module")
def shop(indexed_catalog_dir: Path) -> ShopEnv:
    return ShopEnv(indexed_catalog_dir)


@pytest.fixture(scope="module")
def factory(shop: ShopEnv) -> TaskFactory:
    return TaskFactory(shop, seed=0)


@pytest.mark.parametrize("env_name", ["discovery", "substitution"])
def test_ranking_grade_of_a_remembered_goal_equals_a_fresh_one(shop, factory, env_name):
    for d in (0, 5, 10):
        row = factory.make(env_name, d, 0).row
        for policy in ("oracle", "heuristic", "random"):
            play_policy(shop, row, policy)
            state = shop.state
            shared = decoded(row, "goal")
            first = ranking.grade(shared, state)
            assert ranking.grade(shared, state) == first  # the memo's hit
            assert ranking.grade(copy.deepcopy(shared), state) == first  # a miss: parsed anew


def test_journey_scores_of_a_remembered_row_equal_a_fresh_copy(shop, factory):
    row = factory.make("journey", 6, 0).row
    oracle = json.loads(row.oracle)
    score, _ = play(shop, row, oracle)
    again, _ = play(shop, row, oracle)  # the step rows remembered for this row object
    twin = TaskRow.model_validate(row.model_dump())  # another object: made anew
    fresh, _ = play(shop, twin, oracle)
    assert score == again == fresh
    assert get_verifier("journey") is not None


def test_per_object_remembers_by_identity_not_by_content():
    from shopgen.verifiers.rows import PerObject

    made = []
    memo = PerObject(lambda obj: made.append(obj) or len(made), limit=2)
    a, b = {"x": 1}, {"x": 1}
    assert memo(a) == 1
    assert memo(a) == 1  # remembered
    assert memo(b) == 2  # equal content, another object: made anew
    assert memo({"y": 2}) == 3  # full: starts over
    assert memo(a) == 4
    assert made == [a, b, {"y": 2}, a]


def test_journey_state_view_equals_dataclasses_replace(shop, factory):
    import dataclasses

    from shopgen.verifiers import journey

    row = factory.make("journey", 6, 1).row
    play(shop, row, json.loads(row.oracle))
    state = shop.state
    for changes in (
        {"final_text": "x", "extra": {"a": 1}},
        {"final_text": None, "extra": {}, "recommendations": ["p"]},
    ):
        view = journey._replace(state, **changes)
        ref = dataclasses.replace(state, **changes)
        assert view == ref
        for f in dataclasses.fields(state):  # the same objects shared, as replace shares them
            assert getattr(view, f.name) is getattr(ref, f.name)


@pytest.mark.parametrize("env_name", ["status", "policy"])
def test_remembered_text_grading_equals_a_fresh_grading(shop, factory, env_name):
    from shopgen.verifiers import policy, status

    for d in (0, 5, 10):
        for k in range(2):
            row = factory.make(env_name, d, k).row
            for name in ("oracle", "heuristic", "random"):
                play_policy(shop, row, name)
                state, verify = shop.state, get_verifier(env_name)
                warm = verify(row, state, shop.transcript)
                assert verify(row, state, shop.transcript) == warm  # a memo hit
                status._parts.cache_clear()
                policy._answer_right.cache_clear()
                assert verify(row, state, shop.transcript) == warm  # graded anew


_carts = st.dictionaries(
    st.tuples(st.sampled_from(["P1", "P2", "P3"]), st.sampled_from([None, "V1", "V2"])),
    st.integers(-1, 4),
    max_size=4,
)


@settings(max_examples=80)
@given(goal_cart=_carts, final=_carts)
def test_remembered_cart_grading_equals_grading_anew(goal_cart, final):
    from shopgen.env.state import EpisodeState
    from shopgen.verifiers import cart

    lines = [
        {"product_id": p, "variant_id": v, "quantity": q}
        for (p, v), q in goal_cart.items()
        if q > 0
    ]
    goal = json.dumps({"cart": lines, "min_turns": 2})
    row = TaskRow.model_construct(
        goal=goal, user_script=json.dumps({"slots": []}), theta={"T_max": 8}
    )
    state = EpisodeState(cart=dict(final), turns=3)
    first = cart.verify(row, state, [])
    first.details["missing"].append(["mutated by a caller"])  # must not reach the memo
    again = cart.verify(row, state, [])  # the memo's hit
    fresh = cart.grade(cart.goal_units(json.loads(goal)), dict(final))
    assert (again.r_task, again.details) == (
        round(fresh[0], 6),
        fresh[2],
    )
    assert again.is_correct == (fresh[1] and fresh[0] == 1.0)


def _reference_owned_lists(steps, lists):
    """owned_lists as it was before the category index: every step counted per list."""
    from shopgen.gen.tasks.journey import RECOMMEND_ENVS
    from shopgen.verifiers.journey import recommend_categories

    cats = {i: recommend_categories(s) for i, s in enumerate(steps) if s["env"] in RECOMMEND_ENVS}
    owned = {}
    for entry in lists:
        facts = entry.get("facts", {})
        found = [facts.get(pid, {}).get("category_id") for pid in entry["product_ids"]]
        counts = {i: sum(c in want for c in found) for i, want in cats.items()}
        best = max(counts, key=lambda i: (counts[i], -i), default=None)
        if best is not None and counts[best] > 0:
            owned[best] = entry
    return owned


_cat = st.sampled_from(["c1", "c2", "c3", "c4"])
_step = st.one_of(
    st.builds(lambda c: {"env": "discovery", "goal": {"constraints": {"category": c}}}, _cat),
    st.builds(
        lambda cs: {"env": "bundle", "goal": {"categories": [{"category": c} for c in cs]}},
        st.lists(_cat, min_size=1, max_size=3),
    ),
    st.just({"env": "status", "goal": {}}),
)
_pid = st.sampled_from(["P1", "P2", "P3", "P4", "P5"])
_list = st.builds(
    lambda pids, cats: {
        "product_ids": pids,
        "facts": {p: {"category_id": c} for p, c in zip(pids, cats, strict=False) if c},
    },
    st.lists(_pid, max_size=5),
    st.lists(st.none() | _cat, min_size=5, max_size=5),
)


@settings(max_examples=150)
@given(steps=st.lists(_step, max_size=5), lists=st.lists(_list, max_size=4))
def test_owned_lists_equals_the_reference(steps, lists):
    from shopgen.verifiers.journey import owned_lists

    assert owned_lists(steps, lists) == _reference_owned_lists(steps, lists)


@settings(max_examples=150)
@given(
    steps=st.lists(_step, max_size=5),
    lists=st.lists(_list, max_size=4),
    again=st.lists(_list, max_size=4),
)
def test_remembered_list_owners_equal_the_reference(steps, lists, again):
    """A plan's owner memo: the same lists again (same records), or other records, place alike."""
    from shopgen.gen.store import BoundedCache
    from shopgen.verifiers.journey import _make_steps_of_category, _owned

    steps_of, owners = _make_steps_of_category(steps), BoundedCache(64)
    for played in (lists, lists, again, copy.deepcopy(lists)):
        assert _owned(steps_of, played, owners) == _reference_owned_lists(steps, played)


def _reference_journey_steps(row, state):
    """Each step graded the way journey did before verdicts: one composed Score per step."""
    from shopgen.env.verifier import get_verifier as verifier_of
    from shopgen.gen.tasks.journey import sub_task
    from shopgen.verifiers import journey, layout

    steps = decoded(row, "goal")["steps"]
    per_step = layout.texts(state.final_text, tuple(s["env"] for s in steps))
    owned = journey.owned_lists(steps, state.extra.get("recommendation_lists", []))
    out = []
    for i, step in enumerate(steps):
        step_task = sub_task(row, step, i)
        listed = owned.get(i, {}) if step["env"] in journey.RECOMMEND_ENVS else None
        view = _reference_step_state(state, i, per_step[i], listed)
        score = verifier_of(step["env"])(step_task, view, [])
        out.append({"env": step["env"], "r_task": score.r_task, "is_correct": score.is_correct})
    return out


@pytest.mark.parametrize(
    "policy", ["oracle", "heuristic", "random", "recommend_every_hit", "made_up_ids"]
)
def test_journey_steps_weighed_as_their_own_scores(shop, factory, policy):
    from shopgen.env.state import ErrorRecord
    from shopgen.verifiers import journey

    for d in (0, 6, 12):
        row = factory.make("journey", d, 1).row
        play_policy(shop, row, policy)
        state = shop.state
        for failed in (False, True):  # a protocol failure: steps keep their unrounded r_task
            if failed:
                state.errors.append(ErrorRecord(1, None, "parse", "unreadable"))
            r_task, correct, details = journey.verdict(row, state)
            reference = _reference_journey_steps(row, state)
            assert details["steps"] == reference
            assert r_task == sum(s["r_task"] for s in reference) / len(reference)
            assert correct == all(s["is_correct"] for s in reference)


@pytest.mark.parametrize("policy", ["oracle", "heuristic", "random", "recommend_every_hit"])
def test_journey_reused_views_equal_step_state(shop, factory, policy):
    import dataclasses

    from shopgen.verifiers import journey, layout

    fields = [f.name for f in dataclasses.fields(journey.EpisodeState)]
    for d in (0, 6, 12):
        for k in range(2):
            row = factory.make("journey", d, k).row
            play_policy(shop, row, policy)
            state = shop.state
            plan = journey._plan(row)
            steps = decoded(row, "goal")["steps"]
            per_step = layout.texts(state.final_text, tuple(s["env"] for s in steps))
            owned = journey.owned_lists(steps, state.extra.get("recommendation_lists", []))
            for i, view in enumerate(journey._step_views(state, plan)):
                listed = owned.get(i, {}) if plan.steps[i].recommends else None
                asks = plan.steps[i].asks
                ref = _reference_step_state(state, i, per_step[i], listed, own_questions=asks)
                # The view is re-pointed for the next step: compare it now, field by field.
                for name in fields:
                    assert getattr(view, name) == getattr(ref, name), (policy, d, k, i, name)
                assert list(view.extra) == list(ref.extra)


@settings(max_examples=120)
@given(
    r_task=st.one_of(st.floats(-1, 1), st.sampled_from([-1.0, 0.0, 1.0, 0.9999999, 1 / 3])),
    correct=st.booleans(),
    unshown=st.integers(0, 2),
    failed=st.booleans(),
)
def test_task_terms_are_the_scores_r_task_and_correctness(r_task, correct, unshown, failed):
    from shopgen.env.state import EpisodeState, ErrorRecord
    from shopgen.verifiers.reward import compose, r_hall, task_terms

    row = TaskRow.model_construct(goal='{"min_turns": 2}', theta={"T_max": 8})
    state = EpisodeState()
    state.used_ids.extend(["a", "b"])
    state.unshown_used_ids.extend(["a", "b"][:unshown])
    if failed:
        state.errors.append(ErrorRecord(1, None, "unknown_tool", "no such tool"))
    hall = r_hall(state)
    # The Score's terms as DESIGN §9 states them (and compose computed them inline before):
    # a voided episode keeps r_task unrounded and is never correct.
    if failed:
        expected = (r_task, False)
    else:
        expected = (round(r_task, 6), bool(correct and r_task == 1.0 and hall == 0.0))
    score = compose(row, state, r_task, correct, {})
    assert (score.r_task, score.is_correct) == expected
    assert task_terms(r_task, correct, hall=hall, failed=failed) == expected


def _reference_step_state(state, i, text, listed=None, own_questions=True):
    """The shared final state as step ``i``'s verifier reads it, built afresh per step (the plain
    form ``journey._step_views`` re-points one view to equal): text ``text``, the step's own
    questions (the state's when not ``own_questions``), and its recommendations ``listed`` (the
    list it owns, or none) when given."""
    from shopgen.verifiers import journey

    extra = dict(state.extra)
    if own_questions:
        extra["questions"] = _reference_step_questions(state.extra.get("questions", []), i)
    if listed is None:
        return journey._replace(state, final_text=text, extra=extra)
    extra["recommended_facts"] = dict(listed.get("facts", {}))
    extra["recommended_turn"] = listed.get("turn")
    return journey._replace(
        state, final_text=text, extra=extra, recommendations=list(listed.get("product_ids", []))
    )


def _reference_step_questions(questions, i):
    """The per-step question rewrite as it was: one prefix test per answer and step."""
    prefix = f"steps.{i}."
    return [
        {
            **q,
            "answered": [
                a.removeprefix(prefix) for a in q.get("answered", []) if a.startswith(prefix)
            ],
        }
        for q in questions
    ]


_answer = st.one_of(
    st.builds(
        lambda i, sep, slot: f"steps.{i}{sep}{slot}",
        st.sampled_from(["0", "1", "2", "11", "01", "x", ""]),
        st.sampled_from([".", "", ".."]),
        st.sampled_from(["tier", "days", "", "a.b"]),
    ),
    st.sampled_from(["tier", "steps", "steps.", "step.1.tier"]),
)
_question = st.fixed_dictionaries(
    {"slot": st.sampled_from(["tier", "days"])},
    optional={"answered": st.lists(_answer, max_size=4)},
)


@settings(max_examples=200)
@given(questions=st.lists(_question, max_size=4), n=st.integers(1, 13))
def test_step_questions_equal_the_per_step_rewrite(questions, n):
    from shopgen.verifiers.journey import step_questions

    for i in range(n):
        assert step_questions(questions, n, i) == _reference_step_questions(questions, i)


@pytest.mark.parametrize("policy", ["oracle", "heuristic", "random"])
def test_steps_outside_question_envs_never_read_the_questions(shop, factory, policy):
    """journey gives only QUESTION_ENVS steps their own questions: the others' verdicts must not
    depend on them (no questions, or every slot answered, grade alike)."""
    from shopgen.gen.tasks.journey import sub_task
    from shopgen.verifiers import journey, layout

    seen = set()
    for d in (0, 6, 12):
        for k in range(3):
            row = factory.make("journey", d, k).row
            play_policy(shop, row, policy)
            state = shop.state
            texts = layout.texts(state.final_text, journey._plan(row).kinds)
            for i, step in enumerate(decoded(row, "goal")["steps"]):
                if step["env"] in journey.QUESTION_ENVS:
                    continue
                seen.add(step["env"])
                task = sub_task(row, step, i)
                slots = [s["name"] for s in json.loads(task.user_script).get("slots", [])]
                grades = []
                for questions in ([], [{"turn": 1, "question": "?", "answered": slots}]):
                    view = journey._replace(
                        state, final_text=texts[i], extra={**state.extra, "questions": questions}
                    )
                    grades.append(journey._sub_verdict(step["env"])(task, view)[:2])
                assert grades[0] == grades[1], (policy, d, k, step["env"])
    assert seen == {"status"}  # the one step environment that asks nothing


@pytest.mark.parametrize(("min_turns", "turns"), [(1, 1), (2, 5), (3, 2), (4, 12)])
def test_compose_reads_min_turns_from_the_verifiers_decoding(min_turns, turns, monkeypatch):
    from shopgen.env.state import EpisodeState
    from shopgen.verifiers.reward import compose, r_eff

    goal = json.dumps({"min_turns": min_turns, "other": f"goal {min_turns} {turns}"})
    row = TaskRow.model_construct(goal=goal, theta={"T_max": 12})
    assert decoded(row, "goal")["min_turns"] == min_turns  # what a verifier reads first
    loads: list[str] = []
    plain_loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, **kw: loads.append(text) or plain_loads(text))
    score = compose(row, EpisodeState(turns=turns), 1.0, True, {})
    assert loads == []  # the goal was not decoded again
    assert score.r_eff == round(r_eff(turns, min_turns=min_turns, T_max=12), 6)


def _emptied(value: object) -> None:
    """Clear every list and dict in ``value``, innermost first."""
    items = value.values() if isinstance(value, dict) else value
    for item in list(items):
        if isinstance(item, dict | list):
            _emptied(item)
    value.clear()


@pytest.mark.parametrize("env_name", ["discovery", "substitution", "bundle"])
def test_remembered_list_grading_hands_each_score_its_own_details(shop, factory, env_name):
    """The graders remember details; a caller changing a Score's details changes no other."""
    row = factory.make(env_name, 5, 0).row
    oracle = json.loads(row.oracle)
    first, _ = play(shop, row, oracle)
    kept = copy.deepcopy(first.details)
    _emptied(first.details)
    again, _ = play(shop, row, oracle)
    assert again.details == kept


def _reference_play(env, task, messages):
    """verifiers.replay.play as it was: every turn through step, the score read from info."""
    env.reset(task)
    info, done = {}, False
    for message in messages:
        _, done, _, info = env.step(message)
        if done:
            break
    if not done:
        _, _, _, info = env.step({"role": "assistant", "content": ""})
    score = info.get("score")
    return (Score(**score) if score else None), env.state, list(env.transcript)


@pytest.mark.parametrize("env_name", ENV_NAMES)
def test_replay_through_advance_equals_replay_through_step(shop, factory, env_name):
    """play's lean turns give step's score, state and transcript: whole, cut short, overlong."""
    for d in (0, 6):
        row = factory.make(env_name, d, 0).row
        for policy in ("oracle", "heuristic", "random"):
            play_policy(shop, row, policy)
            turns = assistant_messages(shop.transcript)
            for messages in (turns, turns[:1], [*turns, *turns]):
                score, state, transcript = _reference_play(shop, row, messages)
                got, got_state = play(shop, row, messages)
                assert got == score
                assert got_state == state
                assert shop.transcript == transcript
