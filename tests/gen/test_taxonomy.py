import pytest
import yaml

from shopgen.gen.taxonomy import load_taxonomy
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.taxonomy import NumericAttr


def test_packaged_taxonomy_is_a_department_store():
    tax = load_taxonomy()
    assert len(tax.departments) >= 20
    assert len(tax.leaves()) >= 200
    for _, cat in tax.leaves():
        assert len(cat.attributes) >= 4
        assert cat.nouns


def test_projects_and_complements_name_real_categories():
    tax = load_taxonomy()
    ids = {c.id for _, c in tax.leaves()}
    assert tax.projects
    for project in tax.projects:
        assert {i.category for i in project.items} <= ids
    assert any(c.complements for _, c in tax.leaves())


def _minimal() -> dict:
    return yaml.safe_load(
        """
version: 1
attributes:
  color: {type: enum, values: [Black, White]}
variant_axes:
  size: [S, M, L]
departments:
  - id: home
    name: Home
    brands: 5
    lines: [A, B, C]
    weight: 1
    price: {median: 20, sigma: 0.5}
    rating: {mean: 4.2, sd: 0.4}
    ship: {days: [2, 3], weights: [1, 1]}
    stock: {p_zero: 0.1, median: 20}
    categories:
      - id: lamps
        name: Lamps
        path: [Home, Lamps]
        nouns: [Lamp]
        attributes:
          color: color
          watts: {type: numeric, unit: W, min: 5, max: 60, step: 5}
          dimmable: {type: boolean, label: Dimmable}
          style: {type: enum, values: [Modern, Classic]}
        key_attrs: [watts]
        title: "{brand} {noun}, {watts}"
"""
    )


def _load(tmp_path, doc) -> None:
    path = tmp_path / "tax.yaml"
    path.write_text(yaml.safe_dump(doc))
    load_taxonomy(path)


def test_minimal_taxonomy_loads(tmp_path):
    _load(tmp_path, _minimal())


def _with_kinds_and_audience() -> dict:
    """The minimal taxonomy whose lamps come in two kinds and for two audiences."""
    doc = _minimal()
    doc["attributes"]["gender"] = {"type": "enum", "values": ["Boys'", "Girls'"]}
    lamps = doc["departments"][0]["categories"][0]
    lamps.update(
        nouns=["Table Lamp", "Desk Lamp"],
        kinds=[["Table Lamp"], ["Desk Lamp"]],
        audience="gender",
        title="{brand} {gender} {noun}, {watts}",
    )
    lamps["attributes"]["gender"] = "gender"
    return doc


def test_kinds_and_audience_load(tmp_path):
    _load(tmp_path, _with_kinds_and_audience())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c.update(kinds=[["Table Lamp"]]), "kinds must group every noun exactly once"),
        (
            lambda c: c.update(kinds=[["Table Lamp", "Desk Lamp"], ["Desk Lamp"]]),
            "kinds must group every noun exactly once",
        ),
        (lambda c: c.update(audience="colour"), "audience names 'colour'"),
        (lambda c: c.update(audience="color"), "title must show the audience {color}"),
    ],
)
def test_malformed_kinds_or_audience_name_the_problem(tmp_path, mutate, message):
    doc = _with_kinds_and_audience()
    mutate(doc["departments"][0]["categories"][0])
    with pytest.raises(ConfigError, match="invalid taxonomy") as err:
        _load(tmp_path, doc)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["departments"][0]["categories"][0]["attributes"].update(color="colour"),
            "unknown shared attribute 'colour'",
        ),
        (
            lambda d: d["departments"][0]["categories"][0].update(title="{brand} {noun} {size}"),
            "title uses {size}",
        ),
        (
            lambda d: d["departments"][0]["categories"][0].update(complements=["sofas"]),
            "complement 'sofas'",
        ),
        (
            lambda d: d["departments"][0]["categories"][0].update(key_attrs=["weight"]),
            "key_attrs names 'weight'",
        ),
        (
            lambda d: d["departments"][0]["categories"][0].update(variant_axes=["width"]),
            "unknown variant axis 'width'",
        ),
        (
            lambda d: d["departments"][0]["categories"][0]["attributes"].pop("style"),
            "at least 4 attributes",
        ),
        (
            lambda d: d["departments"][0]["categories"][0].update(path=["Garden", "Lamps"]),
            "path must start",
        ),
        (lambda d: d["departments"][0]["categories"][0].update(colour="red"), "Extra inputs"),
    ],
)
def test_malformed_taxonomy_names_the_category_and_problem(tmp_path, mutate, message):
    doc = _minimal()
    mutate(doc)
    with pytest.raises(ConfigError, match="invalid taxonomy") as err:
        _load(tmp_path, doc)
    assert message in str(err.value)


def test_invalid_yaml_and_missing_file_are_config_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("departments: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_taxonomy(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_taxonomy(tmp_path / "missing.yaml")


def test_numeric_grid_covers_range():
    attr = NumericAttr(type="numeric", unit="W", min=5, max=60, step=5)
    assert attr.grid() == [5.0 * k for k in range(1, 13)]
