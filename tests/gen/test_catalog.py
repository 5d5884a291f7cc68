"""Catalog generation: determinism across layouts and processes, and realism invariants."""

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from shopgen.gen.catalog import BLOCK, generate_rows
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.plan import UNORDERED_AXES, compile_plan
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError


@pytest.fixture(scope="module")
def plan():
    return compile_plan(0)


def test_prefix_of_a_bigger_catalog_is_the_smaller_catalog(plan):
    small, small_v = generate_rows(plan, 0, 2_000)
    big, big_v = generate_rows(plan, 0, 2 * BLOCK + 500)
    assert_frame_equal(small, big.head(2_000))
    ids = set(small["product_id"])
    assert_frame_equal(
        small_v.sort("variant_id"), big_v.filter(pl.col("product_id").is_in(ids)).sort("variant_id")
    )


@settings(max_examples=10, deadline=None)
@given(start=st.integers(0, 3 * BLOCK), length=st.integers(1, 300))
def test_any_row_range_equals_the_same_rows_of_one_run(plan, start, length):
    window, _ = generate_rows(plan, start, start + length)
    whole, _ = _whole(plan)
    assert_frame_equal(window, whole.slice(start, length))


_WHOLE = {}


def _whole(plan):
    if "rows" not in _WHOLE:
        _WHOLE["rows"] = generate_rows(plan, 0, 3 * BLOCK + 300)
    return _WHOLE["rows"]


def test_workers_and_shard_layout_do_not_change_rows(tmp_path):
    config = CatalogConfig(size=2_500, seed=5)
    one = write_catalog(config, tmp_path / "one", workers=1, shard_rows=1_000)
    two = write_catalog(config, tmp_path / "two", workers=2, shard_rows=1_000)
    single = write_catalog(config, tmp_path / "single", shard_rows=10_000)
    assert {k: v.sha256 for k, v in one.files.items()} == {
        k: v.sha256 for k, v in two.files.items()
    }
    for table in ("products", "variants"):
        a = CatalogStore(tmp_path / "one").read(table).sort(pl.first())
        b = CatalogStore(tmp_path / "single").read(table).sort(pl.first())
        assert_frame_equal(a, b)
    assert single.dataset_id != one.dataset_id  # different files, same rows


def test_same_seed_is_byte_identical_across_processes(tmp_path):
    digests = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / f"c{hash_seed}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "shopgen",
                "catalog",
                "--size",
                "1500",
                "--seed",
                "9",
                "--out",
                str(out),
            ],
            env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
            check=True,
            capture_output=True,
        )
        manifest = json.loads((out / "manifest.json").read_text())
        digests.append({k: v["sha256"] for k, v in manifest["files"].items()})
    assert digests[0] == digests[1]


def test_different_seeds_differ(plan):
    a, _ = generate_rows(plan, 0, 50)
    b, _ = generate_rows(compile_plan(1), 0, 50)
    assert not set(a["product_id"]) & set(b["product_id"])
    assert a["title"].to_list() != b["title"].to_list()


def test_config_rejects_bad_values():
    with pytest.raises(ConfigError, match="size=0"):
        CatalogConfig(size=0)
    with pytest.raises(ConfigError, match="seed=-1"):
        CatalogConfig(size=10, seed=-1)


def test_categories_appear_in_proportion(store):
    plan = compile_plan(0)
    counts = Counter(store.products["category_id"].to_list())
    n = store.products.height
    shares = np.diff(np.concatenate([[0.0], plan.leaf_cum]))
    expected = {
        leaf.category_id: share * n for leaf, share in zip(plan.leaves, shares, strict=True)
    }
    # Pearson chi-square against the configured shares, loose enough for a 3k-row sample.
    chi2 = sum((counts.get(k, 0) - e) ** 2 / e for k, e in expected.items())
    dof = len(expected) - 1
    assert chi2 < dof + 6 * np.sqrt(2 * dof)


def test_attribute_values_belong_to_their_category(store):
    tax = compile_plan(0).taxonomy
    cats = {c.id: c for _, c in tax.leaves()}
    for cat_id, attrs in store.products.select("category_id", "attributes").iter_rows():
        cat = cats[cat_id]
        values = json.loads(attrs)
        assert set(values) == set(cat.attributes)
        for name, value in values.items():
            spec = tax.attribute(cat, name)
            if spec.type == "enum":
                assert value in spec.values
            elif spec.type == "numeric":
                assert spec.min <= value <= spec.max
            else:
                assert isinstance(value, bool)


def test_titles_contain_brand_and_noun(store):
    cats = {c.id: c for _, c in compile_plan(0).taxonomy.leaves()}
    for title, brand, cat_id in store.products.select("title", "brand", "category_id").iter_rows():
        assert brand in title
        assert any(noun in title for noun in cats[cat_id].nouns)
        assert "  " not in title
        assert not title.endswith(",")
        assert ", ," not in title


def test_department_price_levels_follow_the_taxonomy(store):
    plan = compile_plan(0)
    configured = {}
    for leaf in plan.leaves:
        configured.setdefault(leaf.department, []).append(leaf.price_median)
    medians = store.products.group_by("department").agg(pl.col("price").median()).rows()
    observed = dict(medians)
    for dept, med in observed.items():
        lo, hi = min(configured[dept]), max(configured[dept])
        assert lo / 2.5 <= med <= hi * 2.5, dept
    cheap = min(observed, key=observed.get)
    dear = max(observed, key=observed.get)
    assert observed[dear] > 3 * observed[cheap]


def test_most_apparel_has_size_by_colour_variants(store):
    plan = compile_plan(0)
    apparel = {
        leaf.category_id
        for leaf in plan.leaves
        if "apparel" in plan.taxonomy.leaves()[leaf.code][1].tags
    }
    products = store.products.filter(pl.col("category_id").is_in(apparel))
    two_axis = {
        leaf.category_id
        for leaf in plan.leaves
        if leaf.category_id in apparel and len(leaf.axes) == 2
    }
    share = products.filter(
        pl.col("category_id").is_in(two_axis) & (pl.col("n_variants") > 0)
    ).height
    assert share / products.height >= 0.6


def test_variants_are_consistent_with_their_product(store):
    products = store.products.select("product_id", "stock_qty", "n_variants", "category_id")
    totals = store.variants.group_by("product_id").agg(
        pl.col("stock_qty").sum().alias("vs"), pl.len().alias("n")
    )
    joined = products.join(totals, on="product_id", how="inner")
    assert (joined["stock_qty"] == joined["vs"]).all()
    assert (joined["n_variants"] == joined["n"]).all()
    assert (store.variants["price_delta"] >= 0).all()
    assert store.variants["variant_id"].n_unique() == store.variants.height


def test_sized_axes_are_contiguous_runs(store):
    plan = compile_plan(0)
    sized = [leaf for leaf in plan.leaves if leaf.axes and leaf.axes[0] not in UNORDERED_AXES]
    assert sized
    leaf = sized[0]
    axis = leaf.axes[0]
    order = {v: i for i, v in enumerate(plan.axis_values[axis])}
    pids = store.products.filter(pl.col("category_id") == leaf.category_id)["product_id"].to_list()[
        :50
    ]
    for pid in pids:
        positions = sorted({order[v["attributes"][axis]] for v in store.variants_of(pid)})
        assert positions == list(range(positions[0], positions[-1] + 1))


def test_some_products_are_out_of_stock(store):
    zero = (store.products["stock_qty"] == 0).sum()
    assert 0 < zero < store.products.height * 0.2
