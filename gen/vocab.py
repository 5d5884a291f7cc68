"""Vocabularies built once per seed with Faker: brand pools per department.

Faker is only a source of words here (DESIGN §6); every per-row choice happens in NumPy.
Its own RNG is seeded per department from the keyed hash, never globally.
"""

from __future__ import annotations

from functools import lru_cache

from faker import Faker

from shopgen.gen.seeding import stable_hash
from shopgen.schemas.taxonomy import Taxonomy

# Brand shapes seen on real marketplaces: a surname, a surname with a trade word, a coined
# compound. Each pool mixes them so brands in one department don't all look alike.
_TRADE_WORDS = ["Co.", "Labs", "Works", "& Sons", "Supply", "Goods", "Home", "Outfitters", "Studio"]
_COINED_TAILS = ["ify", "ora", "ex", "io", "ly", "on", "ix", "ara", "ent"]


def brand_pools(taxonomy: Taxonomy, seed: int) -> dict[str, tuple[str, ...]]:
    """Department id → its brands, distinct within the department, fixed by ``seed``."""
    return {dept.id: _pool(seed, dept.id, dept.brands) for dept in taxonomy.departments}


@lru_cache(maxsize=256)  # the catalog plan and the world both ask, in one process
def _pool(seed: int, dept_id: str, size: int) -> tuple[str, ...]:
    fake = Faker("en_US")
    fake.seed_instance(stable_hash(seed, "brands", dept_id))
    brands: list[str] = []
    while len(brands) < size:
        surname = fake.last_name()
        shape = fake.random_int(0, 9)
        if shape < 5:
            brand = surname
        elif shape < 7:
            brand = f"{surname} {fake.random_element(_TRADE_WORDS)}"
        else:
            brand = surname[: max(3, len(surname) - 2)] + fake.random_element(_COINED_TAILS)
        if brand not in brands:
            brands.append(brand)
    return tuple(brands)
