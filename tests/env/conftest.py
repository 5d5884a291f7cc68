"""Fixtures for runtime tests: a shared store, task rows built by hand, products picked by shape."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from shopgen.env.episode import ShopEnv
from shopgen.gen.store import CatalogStore


@pytest.fixture(scope="session")
def store(catalog_dir) -> CatalogStore:
    return CatalogStore(catalog_dir)


@pytest.fixture
def env(store) -> ShopEnv:
    return ShopEnv(store)


@pytest.fixture
def unscored_env(store) -> ShopEnv:
    """For hand-made rows whose goal is empty: the rules of play, without a verifier."""
    return ShopEnv(store, score=False)


@pytest.fixture(scope="session")
def picks(store) -> dict[str, Any]:
    """Products chosen by shape (never by title or category, which other work changes)."""
    products = store.products
    # A product with exactly one variant needs no variant_id (the catalog may have no
    # variant-less products at all).
    single = products.filter(pl.col("n_variants") == 1)["product_id"].to_list()
    plain = [p for p in single if store.variants_of(p)[0]["stock_qty"] >= 3][:2]
    multi = products.filter(pl.col("n_variants") >= 2)
    assert len(plain) == 2, "the fixture catalog needs one-variant products"
    assert multi.height >= 2, "the fixture catalog needs many-variant products"
    with_variants = multi["product_id"][0]
    variants = store.variants_of(with_variants)
    in_stock = [v for v in variants if v["stock_qty"] >= 2]
    other_variant = store.variants_of(multi["product_id"][1])[0]["variant_id"]
    return {
        "plain": plain[0],
        "plain2": plain[1],
        "plain_variant": store.variants_of(plain[0])[0]["variant_id"],
        "plain_stock": int(store.variants_of(plain[0])[0]["stock_qty"]),
        "multi": with_variants,
        "variant": in_stock[0]["variant_id"],
        "variant2": next(v for v in variants if v["variant_id"] != in_stock[0]["variant_id"])[
            "variant_id"
        ],
        "variant_stock": int(in_stock[0]["stock_qty"]),
        "foreign_variant": other_variant,
    }
