"""The world beside the catalog: integrity, lifecycle, visits ↔ orders, determinism."""

import hashlib
import json
import shutil
import subprocess
import sys
from datetime import date
from importlib import resources
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from shopgen.gen import policy
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.policy import PolicyEngine, parse_policies_text
from shopgen.gen.store import CatalogStore
from shopgen.gen.users import USER_BLOCK
from shopgen.gen.validate import validate_dataset
from shopgen.gen.world_writer import USER_SHARD_ROWS, _context, _write_shard
from shopgen.schemas.errors import ConfigError

TODAY = date(2026, 3, 2)


@pytest.fixture(scope="module")
def world(catalog_dir):
    store = CatalogStore(catalog_dir)
    return {
        t: store.read(t)
        for t in ("users", "orders", "order_lines", "visits", "products", "policy_rules")
    }


def test_fixture_world_validates_and_has_the_default_size(catalog_dir, world):
    assert validate_dataset(catalog_dir) == []
    assert world["users"].height == world["products"].height // 10
    assert world["orders"].height > 5 * world["users"].height
    assert world["visits"].height > 5 * world["orders"].height
    config = json.loads((catalog_dir / "manifest.json").read_text())["config"]
    assert config["today"] == TODAY.isoformat()


def test_lifecycle_states_all_occur_and_dates_follow_placed(world):
    orders = world["orders"]
    statuses = set(orders["status"])
    assert {"delivered", "in_transit", "cancelled", "processing"} <= statuses
    delivered = orders.filter(pl.col("status") == "delivered")
    assert (delivered["delivered_at"] >= delivered["shipped_at"]).all()
    assert (delivered["delivered_at"].dt.date() <= TODAY).all()
    cancelled = orders.filter(pl.col("status") == "cancelled")
    assert cancelled["delivered_at"].null_count() == cancelled.height
    assert cancelled["tracking_number"].null_count() == cancelled.height
    open_ = orders.filter(~pl.col("status").is_in(["delivered", "cancelled"]))
    assert open_["eta"].null_count() == 0
    assert (orders["placed_at"].dt.date() >= TODAY.replace(month=1, day=1).replace(year=2025)).all()


def test_unit_price_is_product_price_plus_variant_delta(world, catalog_dir):
    store = CatalogStore(catalog_dir)
    lines = world["order_lines"].join(
        world["products"].select("product_id", "price"), on="product_id"
    )
    lines = lines.join(
        store.read("variants").select("variant_id", "price_delta"), on="variant_id", how="left"
    )
    expect = (pl.col("price") + pl.col("price_delta").fill_null(0)).round(2)
    assert lines.select((pl.col("unit_price") - expect).abs().max()).item() < 1e-9


def test_purchases_in_visits_match_order_lines_exactly(world):
    buys = world["visits"].filter(pl.col("event") == "purchase")
    keys = ["order_id", "product_id", "variant_id"]
    a = buys.select(keys).sort(keys, nulls_last=True)
    b = world["order_lines"].select(keys).sort(keys, nulls_last=True)
    assert_frame_equal(a, b)


def test_purchases_follow_views_in_the_same_category(world):
    v = world["visits"].join(world["products"].select("product_id", "category_id"), on="product_id")
    sessions = v.filter(pl.col("order_id").is_not_null()).select("session_id").unique()
    views = v.filter(pl.col("event") == "view").join(sessions, on="session_id")
    per_cat = views.group_by("session_id", "category_id").len()
    assert per_cat["len"].mean() > 1.5  # several looks in the category before buying


def test_shipping_costs_come_from_the_policy_engine(world, catalog_dir):
    engine = PolicyEngine.from_catalog(CatalogStore(catalog_dir))
    users = world["users"].select("user_id", "tier")
    sample = world["orders"].head(300).join(users, on="user_id")
    lines = world["order_lines"].join(
        world["products"].select("product_id", "category_id"), on="product_id"
    )
    tags = {c.id: list(c.tags) for _, c in engine.taxonomy.leaves()}
    for row in sample.iter_rows(named=True):
        cats = lines.filter(pl.col("order_id") == row["order_id"])["category_id"]
        facts = {
            "ship_method": row["ship_method"],
            "tier": row["tier"],
            "state": row["ship_state"],
            "order_total": row["subtotal"],
            "tags": sorted({t for c in cats for t in tags[c]}),
        }
        assert engine.shipping_cost(facts).value == row["shipping_cost"]


def test_returned_lines_were_eligible_under_the_engine(world, catalog_dir):
    engine = PolicyEngine.from_catalog(CatalogStore(catalog_dir))
    returned = (
        world["order_lines"]
        .filter(pl.col("status") == "returned")
        .join(world["orders"].select("order_id", "user_id", "delivered_at"), on="order_id")
        .join(world["users"].select("user_id", "tier"), on="user_id")
        .join(world["products"].select("product_id", "category_id"), on="product_id")
    )
    assert returned.height > 0
    tags = {c.id: list(c.tags) for _, c in engine.taxonomy.leaves()}
    depts = {c.id: d.id for d, c in engine.taxonomy.leaves()}
    for row in returned.iter_rows(named=True):
        days = (row["returned_at"] - row["delivered_at"]).total_seconds() / 86400
        facts = {
            "category": row["category_id"],
            "department": depts[row["category_id"]],
            "price": row["unit_price"],
            "tags": tags[row["category_id"]],
            "tier": row["tier"],
            "item_condition": "unopened",
            "reason": "changed_mind",
            "days_since_delivery": days,
        }
        assert engine.return_eligibility(facts).value is True


def test_the_world_gives_each_topic_every_fact_its_rules_test(tmp_path, monkeypatch):
    """A rule whose fact the world leaves out never holds there (an unknown fact fails its
    clause): the world's discounts or return windows would then disagree with the engine's
    answer for the same line, as the tools and tasks compute it with every fact."""
    seen: dict[str, set[str]] = {}
    evaluate_frame = PolicyEngine.evaluate_frame

    def spy(self, topic, frame):
        seen.setdefault(topic, set()).update(frame.columns)
        return evaluate_frame(self, topic, frame)

    monkeypatch.setattr(PolicyEngine, "evaluate_frame", spy)
    write_catalog(CatalogConfig(size=600, users=100), tmp_path / "cat")
    engine = PolicyEngine.for_store(0)
    assert {"bulk_discount", "shipping_cost", "shipping_days", "return_window"} <= set(seen)
    for topic, columns in seen.items():
        tested = {c.fact for r in engine.rules_of(topic) for c in r.when}
        assert tested <= columns, (topic, sorted(tested - columns))


def test_policy_rules_table_matches_the_engine(world, catalog_dir):
    engine = PolicyEngine.from_catalog(CatalogStore(catalog_dir))
    table = world["policy_rules"]
    assert table.height == len(engine.policies.rules)
    for row in table.iter_rows(named=True):
        assert json.loads(row["value"]) == engine.value(row["rule_id"])


def test_validate_names_a_catalog_generated_under_another_rule_file(catalog_dir, monkeypatch):
    """The runtime evaluates the packaged rule file, never the catalog's policy_rules table: a
    catalog generated before the rule file changed keeps orders priced under the old rules,
    and validate says so instead of passing it (or failing on something else)."""
    assert validate_dataset(catalog_dir, checksums=False) == []
    text = resources.files("shopgen.gen").joinpath("data", "policies.yaml").read_text("utf-8")
    premium = "range: {min: 99, max: 139, step: 20}"
    assert text.count(premium) == 1
    text = text.replace(premium, "value: 149") + (
        "  - id: membership_fee_student\n    topic: membership_fee\n"
        "    when: [{fact: tier, op: eq, value: basic}, {fact: quantity, op: eq, value: 1}]\n"
        "    answer: {kind: number, unit: USD/year, value: 15}\n"
        '    says: "Student membership costs {{ value }}."\n'
    )
    monkeypatch.setattr(policy, "_packaged", lambda: parse_policies_text(text))
    problems = validate_dataset(catalog_dir, checksums=False)
    assert len(problems) == 1, problems
    assert "1 new, 0 gone, 1 changed, e.g. 'membership_fee_student'" in problems[0]
    assert "regenerate the catalog" in problems[0]


def test_user_block_history_does_not_depend_on_the_shard_split(catalog_dir, tmp_path):
    # One shard of 2 blocks equals the same users written as two one-block shards. The shards
    # are written into a copy: writing into the shared session catalog would replace its files.
    root = str(tmp_path / "catalog")
    shutil.copytree(catalog_dir, root)
    _context(root, 0, None)
    for name, jobs in {
        "one": [(0, 2 * USER_BLOCK)],
        "two": [(0, USER_BLOCK), (USER_BLOCK, 2 * USER_BLOCK)],
    }.items():
        out = tmp_path / name
        for i, (a, b) in enumerate(jobs):
            (out / "products").mkdir(parents=True, exist_ok=True)
            _write_shard((root, 0, None, TODAY.isoformat(), a, b, i, len(jobs)))
            for t in ("users", "orders", "order_lines", "visits"):
                src = Path(root) / t
                for f in src.glob(f"train-{i:05d}-of-{len(jobs):05d}.parquet"):
                    (out / t).mkdir(exist_ok=True)
                    f.rename(out / t / f.name)
    for t in ("users", "orders", "order_lines", "visits"):
        one = pl.read_parquet(tmp_path / "one" / t / "*.parquet")
        two = pl.read_parquet(tmp_path / "two" / t / "*.parquet")
        assert_frame_equal(one, two)


def _digest(root: Path) -> dict[str, str]:
    manifest = json.loads((root / "manifest.json").read_text())
    return {
        k: v["sha256"]
        for k, v in manifest["files"].items()
        if k.split("/")[0] in ("users", "orders", "order_lines", "visits", "policy_rules")
    }


def test_world_is_byte_identical_across_processes(tmp_path):
    script = (
        "import sys; from pathlib import Path;"
        "from shopgen.gen.catalog_writer import CatalogConfig, write_catalog;"
        "write_catalog(CatalogConfig(size=800, seed=3, users=500), Path(sys.argv[1]))"
    )
    for i, hashseed in enumerate(("1", "2")):
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / f"w{i}")],
            check=True,
            env={"PYTHONHASHSEED": hashseed, "PATH": "/usr/bin:/bin"},
        )
    assert _digest(tmp_path / "w0") == _digest(tmp_path / "w1")


@pytest.mark.slow
def test_world_files_do_not_depend_on_workers(tmp_path):
    users = USER_SHARD_ROWS + 100
    for w in (1, 2):
        write_catalog(CatalogConfig(size=2000, users=users), tmp_path / f"w{w}", workers=w)
    assert _digest(tmp_path / "w1") == _digest(tmp_path / "w2")


def test_validate_catches_a_line_whose_product_is_missing(tmp_path):
    out = tmp_path / "cat"
    write_catalog(CatalogConfig(size=600, users=100), out)
    lines_path = next((out / "order_lines").glob("*.parquet"))
    frame = pl.read_parquet(lines_path)
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("B0MISSING00"))
        .otherwise(pl.col("product_id"))
        .alias("product_id")
    )
    frame.write_parquet(lines_path)
    manifest = json.loads((out / "manifest.json").read_text())
    rel = lines_path.relative_to(out).as_posix()
    manifest["files"][rel]["sha256"] = hashlib.sha256(lines_path.read_bytes()).hexdigest()
    manifest["files"][rel]["bytes"] = lines_path.stat().st_size
    (out / "manifest.json").write_text(json.dumps(manifest))
    problems = validate_dataset(out)
    assert any("order line whose product does not exist" in p for p in problems), problems
    assert any("purchase event without a matching order line" in p for p in problems), problems


def test_bad_world_config_is_rejected():
    with pytest.raises(ConfigError, match="users=0"):
        CatalogConfig(size=100, users=0)
    with pytest.raises(ConfigError, match="today='yesterday'"):
        CatalogConfig(size=100, today="yesterday")
