"""Every registered environment keeps every promise (one parametrised suite, STYLE §7)."""

import importlib.util

import pytest

from shopgen.schemas.envs import ENVS
from shopgen.testing import check_env


def _built(spec) -> bool:
    return all(
        importlib.util.find_spec(ref.partition(":")[0]) is not None
        for ref in (spec.generator, spec.verifier)
    )


@pytest.mark.parametrize("spec", ENVS, ids=[s.name for s in ENVS])
def test_environment_conforms(spec, shop_env):
    if not _built(spec):
        pytest.fail(f"{spec.name} is registered but has no generator or verifier module")
    report = check_env(spec.name, shop_env, ds=(0, 6, 12), n=2)
    assert report.tasks == 6
    assert all(v <= 0 for v in report.degenerate_mean_reward.values())
