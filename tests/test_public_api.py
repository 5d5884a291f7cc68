"""The public API is what ``__all__`` says, and every environment is documented."""

from pathlib import Path

import pytest

import shopgen
from shopgen.schemas.envs import ENVS

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("name", shopgen.__all__)
def test_every_public_name_resolves(name):
    assert getattr(shopgen, name) is not None


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError):
        _ = shopgen.no_such_thing


def test_every_registered_environment_is_in_the_readme():
    text = README.read_text()
    for spec in ENVS:
        assert f"| `{spec.name}` |" in text, spec.name


def test_every_environment_module_documents_its_contract():
    import importlib

    sections = (
        "Customer wants",
        "Tools offered",
        "Hidden goal",
        "Reward and is_correct",
        "Difficulty axes used",
        "Episode end",
        "Version history",
    )
    for spec in ENVS:
        doc = importlib.import_module(spec.generator.partition(":")[0]).__doc__ or ""
        missing = [s for s in sections if s not in doc]
        assert not missing, f"{spec.name}: {missing}"
