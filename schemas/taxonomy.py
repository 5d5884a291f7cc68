"""The taxonomy file's schema: departments, leaf categories, typed attributes, projects.

The taxonomy is the one vocabulary of shopgen (DESIGN §6): the catalog draws products from it,
the policy engine conditions on its categories and tags, bundles name its categories, and the
substitution environment matches its compatibility attributes. Everything is checked at load,
so a typo in the data file fails with the category and field instead of producing odd data.
"""

from __future__ import annotations

import math
import string
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shopgen.schemas.errors import ConfigError

Slug = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]

#: Tags a leaf can carry; the policy engine's rules condition on them.
PolicyTag = Literal[
    "electronics",
    "hygiene",
    "perishable",
    "final_sale",
    "apparel",
    "large_item",
    "hazmat",
    "media",
    "personalised",
    "jewelry",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EnumAttr(_Strict):
    """An attribute with a closed set of values."""

    type: Literal["enum"]
    values: list[str] = Field(min_length=2, description="allowed values, most common first")
    weights: list[float] | None = Field(None, description="sampling weights; uniform if absent")

    @model_validator(mode="after")
    def _weights_match(self) -> EnumAttr:
        if self.weights is not None and len(self.weights) != len(self.values):
            raise ValueError(f"{len(self.weights)} weights for {len(self.values)} values")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"duplicate values in {self.values}")
        return self


class NumericAttr(_Strict):
    """A number with a unit, drawn uniformly on a grid of ``step`` between ``min`` and ``max``."""

    type: Literal["numeric"]
    unit: str = Field(description="unit shown to shoppers, e.g. 'W', 'in', 'mAh'")
    min: float
    max: float
    step: float = Field(1, gt=0)
    fmt: str = Field("{v} {unit}", description="how the value reads in titles and cards")

    @model_validator(mode="after")
    def _range(self) -> NumericAttr:
        if not self.min < self.max:
            raise ValueError(f"min={self.min} must be < max={self.max}")
        if self.fmt.replace("{v}", "").replace("{unit}", "").count("{"):
            raise ValueError(f"fmt {self.fmt!r} may only use {{v}} and {{unit}}")
        return self

    def grid(self) -> list[float]:
        """Every value this attribute can take."""
        n = math.floor((self.max - self.min) / self.step + 1e-9) + 1
        return [round(self.min + i * self.step, 6) for i in range(n)]


class BoolAttr(_Strict):
    """A yes/no feature; ``label`` is what a title says when it is true."""

    type: Literal["boolean"]
    label: str
    p_true: float = Field(0.5, ge=0, le=1)


Attribute = Annotated[EnumAttr | NumericAttr | BoolAttr, Field(discriminator="type")]


class LognormalPrice(_Strict):
    """Price in USD: lognormal with the given median and log-space sigma."""

    median: float = Field(gt=0)
    sigma: float = Field(gt=0, le=2)


class RatingDist(_Strict):
    """Star rating: normal(mean, sd) clipped to [1, 5], one decimal."""

    mean: float = Field(ge=1, le=5)
    sd: float = Field(gt=0, le=2)


class ShipDist(_Strict):
    """Shipping days: the values and their weights."""

    days: list[int] = Field(min_length=1)
    weights: list[float] = Field(min_length=1)

    @model_validator(mode="after")
    def _same_length(self) -> ShipDist:
        if len(self.days) != len(self.weights):
            raise ValueError("days and weights differ in length")
        return self


class StockDist(_Strict):
    """Stock: zero with probability ``p_zero``, else lognormal around ``median`` units."""

    p_zero: float = Field(ge=0, lt=1)
    median: float = Field(gt=0)


class Category(_Strict):
    """A leaf category: what products in it are, how they are described and priced."""

    id: Slug
    name: str
    path: list[str] = Field(min_length=2, description="department name first, leaf name last")
    nouns: list[str] = Field(min_length=1, description="what a title calls the product")
    lines: list[str] | None = Field(None, description="product-line words; department's if absent")
    attributes: dict[Slug, Attribute | Slug] = Field(
        description="name → inline definition, or the name of a shared attribute"
    )
    key_attrs: list[Slug] = Field(min_length=1, max_length=4, description="shown on product cards")
    title: str = Field(description="title pattern: {brand} {line} {noun} and attribute names")
    variant_axes: list[Slug] = Field(default_factory=list, max_length=2)
    compat: list[Slug] = Field(
        default_factory=list, description="attributes substitutes and complements must match"
    )
    kinds: list[list[str]] = Field(
        default_factory=list,
        description=(
            "the nouns grouped by the kind of product they name, when the leaf holds several"
            " kinds a customer does not swap (collars, harnesses, leashes); empty when every"
            " noun names one kind. A product's kind is that of the longest noun its title holds"
        ),
    )
    audience: Slug | None = Field(
        None,
        description=(
            "the attribute saying whom a product is for (boys' or girls'), shown in its title:"
            " a substitute is for the same people"
        ),
    )
    complements: list[Slug] = Field(
        default_factory=list, description="categories bought with this one"
    )
    tags: list[PolicyTag] = Field(default_factory=list)
    weight: float = Field(1.0, gt=0, description="relative share of the department's products")
    price: LognormalPrice | None = None
    rating: RatingDist | None = None
    ship: ShipDist | None = None
    stock: StockDist | None = None


class Department(_Strict):
    """A department: defaults its leaves inherit, and the leaves."""

    id: Slug
    name: str
    brands: int = Field(ge=3, le=200, description="size of the department's brand pool")
    lines: list[str] = Field(min_length=3)
    weight: float = Field(gt=0, description="relative share of all products")
    price: LognormalPrice
    rating: RatingDist
    ship: ShipDist
    stock: StockDist
    categories: list[Category] = Field(min_length=1)


class ProjectItem(_Strict):
    """One required category of a bundle project, with how many are needed."""

    category: Slug
    quantity: int = Field(1, ge=1, le=10)


class Project(_Strict):
    """A bundle project such as 'home office': categories a customer needs together."""

    id: Slug
    name: str
    items: list[ProjectItem] = Field(min_length=2)


class Taxonomy(_Strict):
    """The whole taxonomy file."""

    version: int = Field(ge=1)
    attributes: dict[Slug, Attribute]
    variant_axes: dict[Slug, Annotated[list[str], Field(min_length=2, max_length=16)]] = Field(
        description="axis name → its values, smallest first for sized axes"
    )
    departments: list[Department] = Field(min_length=1)
    projects: list[Project] = Field(default_factory=list)

    @model_validator(mode="after")
    def _cross_references(self) -> Taxonomy:
        problems = list(_cross_reference_problems(self))
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def leaves(self) -> list[tuple[Department, Category]]:
        """Every leaf with its department, in file order (the order codes are assigned in)."""
        return [(dept, cat) for dept in self.departments for cat in dept.categories]

    def attribute(self, cat: Category, name: str) -> EnumAttr | NumericAttr | BoolAttr:
        """The resolved definition of one of a leaf's attributes."""
        spec = cat.attributes[name]
        return self.attributes[spec] if isinstance(spec, str) else spec


_FIXED_FIELDS = {"brand", "line", "noun"}


def _cross_reference_problems(tax: Taxonomy):
    ids = [cat.id for _, cat in tax.leaves()]
    seen: set[str] = set()
    for dup in (i for i in ids if i in seen or seen.add(i)):
        yield f"category id {dup!r} is used twice"
    known = set(ids)
    for dept, cat in tax.leaves():
        where = f"category {cat.id!r}"
        if cat.path[0] != dept.name or cat.path[-1] != cat.name:
            yield f"{where}: path must start with {dept.name!r} and end with {cat.name!r}"
        if len(cat.attributes) < 4:
            yield f"{where}: needs at least 4 attributes, has {len(cat.attributes)}"
        for name, spec in cat.attributes.items():
            if isinstance(spec, str) and spec not in tax.attributes:
                yield f"{where}: attribute {name!r} refers to unknown shared attribute {spec!r}"
        for field in ("key_attrs", "compat"):
            for name in getattr(cat, field):
                if name not in cat.attributes:
                    yield f"{where}: {field} names {name!r}, which is not one of its attributes"
        if cat.kinds and sorted(n for kind in cat.kinds for n in kind) != sorted(cat.nouns):
            yield f"{where}: kinds must group every noun exactly once"
        if cat.audience is not None and cat.audience not in cat.attributes:
            yield f"{where}: audience names {cat.audience!r}, which is not one of its attributes"
        for axis in cat.variant_axes:
            if axis not in tax.variant_axes:
                yield f"{where}: unknown variant axis {axis!r}"
            if axis in cat.attributes:
                yield f"{where}: {axis!r} is both an attribute and a variant axis"
        for comp in cat.complements:
            if comp not in known:
                yield f"{where}: complement {comp!r} is not a category"
        fields = {f for _, f, _, _ in string.Formatter().parse(cat.title) if f}
        for field in fields - _FIXED_FIELDS - set(cat.attributes):
            yield f"{where}: title uses {{{field}}}, which is not an attribute"
        if not {"brand", "noun"} <= fields:
            yield f"{where}: title must contain {{brand}} and {{noun}}"
        if cat.audience is not None and cat.audience not in fields:
            yield f"{where}: title must show the audience {{{cat.audience}}}"
    for project in tax.projects:
        for item in project.items:
            if item.category not in known:
                yield f"project {project.id!r}: unknown category {item.category!r}"


def parse_taxonomy(raw: object, *, source: str) -> Taxonomy:
    """Validate a parsed taxonomy document, turning pydantic's report into a ConfigError."""
    try:
        return Taxonomy.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ConfigError(
            f"{source}: invalid taxonomy: {f'{where}: ' if where else ''}{message}{more}"
        ) from None
