"""Aggregating scored trajectories: pass^k's estimator, reward parts, verifier versions."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.schemas.envs import env_spec
from shopgen.schemas.errors import DatasetError
from shopgen.verifiers.score import Result, check_versions, pass_hat, score_lines, summarize


def _result(task_id: str, correct: bool, reward: float = 0.5) -> Result:
    return Result(task_id, "cart", 3, reward, reward, 1.0, 0.0, correct)


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_hat_is_the_chance_k_trials_all_succeed(nc):
    n, c = nc
    assert pass_hat(n, c, 1) == pytest.approx(c / n)
    values = [pass_hat(n, c, k) for k in range(1, n + 1)]
    assert values == sorted(values, reverse=True)  # more trials can only be harder
    assert values[-1] == (1.0 if c == n else 0.0)
    trials = [i < c for i in range(n)]  # c correct trials out of n
    for k in range(1, min(n, 8) + 1):  # against drawing k of the n trials in every way
        draws = list(itertools.combinations(trials, k))
        assert pass_hat(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))


@given(
    st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=6), st.randoms()
)
def test_pass_k_does_not_depend_on_the_order_of_trials(outcomes, random):
    results = [_result(f"t{i}", ok) for i, trials in enumerate(outcomes) for ok in trials]
    shuffled = results[:]
    random.shuffle(shuffled)
    assert summarize(results) == summarize(shuffled)
    (row,) = summarize(results)
    assert row["pass^1"] == pytest.approx(row["success"], abs=1e-4)


def test_one_right_one_wrong_trial_is_half_at_k1_and_none_at_k2():
    for order in ((True, False), (False, True)):
        (row,) = summarize([_result("a", ok) for ok in order])
        assert (row["pass^1"], row["pass^2"]) == (0.5, 0.0)


def test_summary_rows_carry_the_reward_parts():
    (row,) = summarize([_result("a", True, 0.9), _result("b", False, -0.5)])
    assert (row["mean_reward"], row["mean_r_task"], row["mean_r_eff"], row["mean_r_hall"]) == (
        0.2,
        0.2,
        1.0,
        0.0,
    )


def test_tasks_for_another_verifier_version_are_refused():
    # check_versions reads a row's env and verifier_version only
    row = SimpleNamespace(env="status", verifier_version=env_spec("status").version)
    check_versions([row], allow_mixed=False)  # the version this shopgen grades with: scored
    old = SimpleNamespace(env="status", verifier_version="0.9")
    with pytest.raises(DatasetError, match=r"made for verifier 0\.9.*grades with"):
        check_versions([old], allow_mixed=False)
    with pytest.raises(DatasetError, match="not comparable"):
        check_versions([row, old], allow_mixed=False)
    check_versions([row, old], allow_mixed=True)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[1, 2]", "not a JSON object with task_id and messages"),
        ('"str"', "not a JSON object with task_id and messages"),
        ('{"task_id": "x"}', "not a JSON object with task_id and messages"),
        ('{"task_id": "x", "messages": {}}', "messages must be a list"),
        ('{"task_id": "x", "mess', "not JSON: Unterminated string starting at (column 18)"),
    ],
)
def test_a_line_that_is_no_trajectory_says_why(line, problem):
    (result,) = score_lines(None, {}, [line])  # never reaches the runtime
    assert (result.task_id, result.error) == ("line 1", problem)
