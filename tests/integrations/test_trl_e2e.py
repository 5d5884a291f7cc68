"""TRL itself, end to end: two GRPO steps with shopgen's environment class and rewards (issue #8).

Slow (about two minutes on two cores: a catalog, its index, a warm start and the trainer), so
it runs with ``make test-all``; ``python -m bench trl_e2e`` prints the same run's figures.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("jmespath")  # TRL's tool-response parser on transformers < 5.13

from shopgen.verifiers.reward import MAX_REWARD

# bench/ is not an installed package; load the script by path whatever the pytest entry point.
_SPEC = importlib.util.spec_from_file_location(
    "bench_trl_e2e", Path(__file__).parents[2] / "bench" / "trl_e2e.py"
)
_BENCH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_BENCH)


@pytest.fixture(scope="module")
def result():
    return _BENCH.train(quick=True)


@pytest.mark.slow
def test_two_grpo_steps_run_with_shopgen_rewards(result):
    figures, rollouts = result
    assert figures["steps"] == 2
    assert len(rollouts) == 4  # 2 steps x 1 prompt x num_generations=2
    for r in rollouts:
        # The reward TRL logged is the verifier's reward of that rollout's replayed episode.
        assert r["score"]["reward"] is not None
        assert r["reward"] == pytest.approx(r["score"]["reward"])
        assert math.isfinite(r["reward"])
        assert r["reward"] <= MAX_REWARD
        assert r["is_correct"] == (r["reward"] == pytest.approx(MAX_REWARD))


@pytest.mark.slow
def test_tool_calls_are_parsed_by_trl_and_run_by_the_shopgen_runtime(result):
    figures, rollouts = result
    assert figures["tool_calls_parsed"] >= 1
    for r in rollouts:
        # Every call TRL parsed and dispatched reached ShopgenEnvironment's runtime episode.
        assert r["executed_calls"] <= len(r["parsed_calls"])
        assert all(name in r["task"]["tools"] for name in r["parsed_calls"][: r["executed_calls"]])
    assert figures["tool_calls_executed"] >= 1
