import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen import schedules
from shopgen.gen.difficulty import AXES, MAX_LEVELS, parse_d_range, theta
from shopgen.schemas.errors import ConfigError


def _sig(x):
    return 1 / (1 + math.exp(-x))


def _design(d):
    """DESIGN §5, written out independently of the implementation."""
    return {
        "m": 2 + math.floor(d / 2),
        "k_rec": min(10, 3 + math.floor(d / 3)),
        "T_max": 4 + math.floor(d / 2),
        "p_missing": 0.8 * _sig((d - 3) / 1.5),
        "p_noise": min(max(0.01 * d, 0), 0.125),
        "p_switch": 0.6 * _sig((d - 5) / 2),
        "top_k": max(20, 200 - 10 * d),
        "eps_rank": min(0.4, 0.02 * d),
        "p_oos": min(0.5, 0.05 * d),
        "H_orders": 1 + math.floor(d / 2),
        "B_branch": 1 + math.floor(d / 3),
        "B_tool": 1 + math.floor(d / 2),
    }


@pytest.mark.parametrize("d", range(31))
def test_formulas_match_design_table(d):
    got = theta(d).to_dict()
    want = _design(d)
    assert list(got) == list(want) == list(AXES)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name
        assert type(got[name]) is type(value) or isinstance(value, float), name


def test_named_values_at_known_levels():
    assert theta(0).p_noise == 0.0
    assert theta(20).p_noise == 0.125
    assert theta(3).p_missing == pytest.approx(0.4)
    assert theta(5).p_switch == pytest.approx(0.3)
    assert theta(30).top_k == 20
    assert theta(30).k_rec == 10


@given(st.integers(0, 60), st.sampled_from(AXES))
def test_override_replaces_only_that_axis(d, axis):
    base = theta(d).to_dict()
    value = 0.25 if isinstance(base[axis], float) else 7
    got = theta(d, **{axis: value}).to_dict()
    assert got[axis] == value
    assert {k: v for k, v in got.items() if k != axis} == {
        k: v for k, v in base.items() if k != axis
    }


@pytest.mark.parametrize(
    ("args", "kwargs", "needle"),
    [
        ((-1,), {}, "d=-1"),
        ((1.5,), {}, "d=1.5"),
        ((True,), {}, "d=True"),
        ((3,), {"p_nosie": 0.1}, "p_nosie"),
        ((3,), {"p_noise": 1.5}, "p_noise=1.5"),
        ((3,), {"m": 2.5}, "m=2.5"),
        ((3,), {"T_max": 0}, "T_max=0"),
    ],
)
def test_bad_input_names_the_value(args, kwargs, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        theta(*args, **kwargs)


def test_theta_is_frozen():
    t = theta(2)
    with pytest.raises(AttributeError):
        t.m = 9


@pytest.mark.parametrize("name", sorted(schedules.SCHEDULES))
def test_schedules_are_monotone_and_bounded(name):
    f = schedules.SCHEDULES[name]
    values = [f(d) for d in range(40)]
    assert values == sorted(values), name
    assert values[-1] > values[0], f"{name} never changes with d"
    if isinstance(values[0], float):
        assert values[0] >= 0
        assert values[-1] <= 1


def test_schedules_reject_negative_d():
    with pytest.raises(ConfigError, match="d=-2"):
        schedules.cart_items(-2)


def test_parse_d_range():
    assert parse_d_range("5") == [5]
    assert parse_d_range("0-3") == [0, 1, 2, 3]
    assert parse_d_range("1,4-5") == [1, 4, 5]
    # A level named twice is made once (each task of "5,5" was written twice).
    assert parse_d_range("5,5") == [5]
    assert parse_d_range("3,0-4,2") == [3, 0, 1, 2, 4]
    for bad in ("x", "5-2", "-1", ""):
        with pytest.raises(ConfigError):
            parse_d_range(bad)
    assert len(parse_d_range(f"0-{MAX_LEVELS - 1}")) == MAX_LEVELS
    for huge in (f"0-{MAX_LEVELS}", "0-100000000", f"0-{MAX_LEVELS // 2},1-{MAX_LEVELS // 2}"):
        with pytest.raises(ConfigError, match="more than"):  # at once, not after hours
            parse_d_range(huge)


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-c", "import sys; from shopgen.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_prints_table_and_grid():
    one = _cli("difficulty", "--d", "5")
    assert one.returncode == 0, one.stderr
    lines = one.stdout.splitlines()
    assert lines[0].split() == ["axis", "d=5"]
    row = {ln.split()[0]: ln.split()[1] for ln in lines[1:]}
    assert row["m"] == "4"
    assert row["top_k"] == "150"
    assert row["p_noise"] == "0.050"
    grid = _cli("difficulty", "--d", "0-12")
    assert grid.returncode == 0
    assert grid.stdout.splitlines()[0].split() == ["axis", *(f"d={d}" for d in range(13))]


def test_cli_bad_range_is_one_line():
    bad = _cli("difficulty", "--d", "9-3")
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1
    assert "9-3" in bad.stderr


def test_axis_names_agree_with_the_registry_and_task_schema():
    from shopgen.gen.difficulty import AXES as THETA_FIELDS
    from shopgen.schemas.axes import AXES, RATE_AXES
    from shopgen.schemas.tables import TASKS

    assert THETA_FIELDS == AXES
    theta_type = TASKS.field("theta").type
    assert [theta_type.field(i).name for i in range(theta_type.num_fields)] == list(AXES)
    assert {a for a in AXES if isinstance(getattr(theta(3), a), float)} == RATE_AXES
