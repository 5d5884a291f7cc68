"""Backends (local serial, local processes, Ray) give the same datasets; sharded IVF-PQ index.

The Ray half starts a local Ray instance (2 CPUs, no dashboard) once for the module and shuts
it down at the end; it is skipped, with the reason, when the ``ray`` extra is not installed.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.gen.backends import (
    SerialExecutor,
    check_backend,
    open_executor,
    ray_available,
)
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.schemas.errors import ConfigError
from shopgen.task_shards import task_shards

needs_ray = pytest.mark.skipif(
    not ray_available(), reason='ray is not installed (pip install "shopgen[ray]")'
)

#: A catalog small enough to build twice in a test, cut into 4 product shards.
SMALL = CatalogConfig(size=1200, seed=7, users=150)
SHARD_ROWS = 300


def _square(x: int) -> int:
    return x * x


# -- the executor layer ----------------------------------------------------------------------


def test_serial_executor_is_lazy_and_ordered():
    seen: list[int] = []

    def job(x: int) -> int:
        seen.append(x)
        return -x

    results = SerialExecutor().map(job, [3, 1, 2])
    assert seen == []  # nothing runs before a result is asked for
    assert next(results) == -3
    assert seen == [3]
    assert list(results) == [-1, -2]


def test_serial_executor_submit_carries_exceptions():
    future = SerialExecutor().submit(int, "not a number")
    with pytest.raises(ValueError, match="invalid literal"):
        future.result()


def test_local_pool_runs_jobs_in_order():
    with open_executor("local", workers=2, jobs=5) as pool:
        assert list(pool.map(_square, range(5))) == [0, 1, 4, 9, 16]


@pytest.mark.parametrize(
    ("backend", "kwargs", "message"),
    [
        ("spark", {}, "backend='spark' is not one of local, ray"),
        ("local", {"address": "auto"}, "address='auto' needs backend='ray'"),
        ("local", {"workers": 0}, "workers=0 must be > 0"),
    ],
)
def test_bad_backend_combinations_are_one_line_errors(backend, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        check_backend(backend, **kwargs)


def test_catalog_rejects_unknown_backend_and_leaves_nothing(tmp_path):
    out = tmp_path / "cat"
    with pytest.raises(ConfigError, match="is not one of local, ray"):
        write_catalog(SMALL, out, backend="spark")
    assert list(tmp_path.iterdir()) == []


# -- task shards ------------------------------------------------------------------------------


@given(
    envs=st.lists(st.sampled_from(["status", "returns", "policy"]), min_size=1, max_size=3),
    ds=st.lists(st.integers(0, 12), min_size=1, max_size=3),
    n=st.integers(1, 30),
    shard_tasks=st.integers(1, 12),
)
def test_task_shards_cover_batch_order_exactly(envs, ds, n, shard_tasks):
    shards = task_shards("/x", envs=envs, ds=ds, n=n, seed=1, shard_tasks=shard_tasks)
    keys = [(s.env, s.d, k) for s in shards for k in range(s.start, s.stop)]
    # TaskFactory.batch's order: environment-major, then d, then k.
    assert keys == [(e, d, k) for e in envs for d in ds for k in range(n)]
    assert all(0 < s.stop - s.start <= shard_tasks for s in shards)


def test_task_shards_reject_empty_runs():
    with pytest.raises(ConfigError, match="n=0 must be > 0"):
        task_shards("/x", envs=["status"], ds=[0], n=0, seed=0)


# -- Ray: same bytes, same tasks ---------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    if not ray_available():
        pytest.skip('ray is not installed (pip install "shopgen[ray]")')
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@needs_ray
def test_ray_catalog_is_byte_identical_to_local(ray_session, tmp_path):
    local = write_catalog(SMALL, tmp_path / "local", shard_rows=SHARD_ROWS)
    remote = write_catalog(SMALL, tmp_path / "ray", shard_rows=SHARD_ROWS, backend="ray")
    assert sum(1 for rel in local.files if rel.startswith("products/")) == 4
    assert {rel: e.sha256 for rel, e in remote.files.items()} == {
        rel: e.sha256 for rel, e in local.files.items()
    }
    assert remote.content_hash == local.content_hash
    assert ray_session.is_initialized()  # the test's session is not the writer's to stop


@needs_ray
def test_ray_tasks_equal_local_tasks(ray_session, indexed_catalog_dir):
    from shopgen.env.episode import ShopEnv
    from shopgen.gen.store import CatalogStore
    from shopgen.task_shards import generate_sharded
    from shopgen.taskgen import TaskFactory

    envs, ds, n = ["status", "discovery", "journey"], [0, 3], 5
    factory = TaskFactory(ShopEnv(CatalogStore(indexed_catalog_dir)), seed=4)
    local = [g.row for g in factory.batch(envs, ds, n)]
    shards = task_shards(indexed_catalog_dir, envs=envs, ds=ds, n=n, seed=4, shard_tasks=2)
    with open_executor("ray") as executor:
        remote = list(generate_sharded(executor, shards))
    assert len(shards) == 18
    assert [r.task_id for r in remote] == [r.task_id for r in local]
    assert [r.to_row() for r in remote] == [r.to_row() for r in local]


# -- sharded IVF-PQ index ---------------------------------------------------------------------

#: Small IVF-PQ parameters so training takes seconds, not the minute the 20k defaults take.
PQ = {"kind": "ivfpq", "nlist": 32, "nprobe": 8, "m": 16, "nbits": 5}


@pytest.fixture(scope="module")
def texts():
    from shopgen.gen.catalog import generate_rows
    from shopgen.gen.index import product_texts
    from shopgen.gen.plan import compile_plan

    products, _ = generate_rows(compile_plan(0, None), 0, 6000)
    return product_texts(products)


@pytest.mark.parametrize("kind", ["ivfpq", "ivf"])
def test_sharded_dense_index_equals_single_build(texts, kind):
    import faiss

    from shopgen.gen.encoders import load_encoder
    from shopgen.gen.index import build_dense, build_dense_sharded

    params = PQ if kind == "ivfpq" else {"kind": "ivf", "nlist": 32, "nprobe": 8}
    vectors = load_encoder("static").encode(texts)
    single = build_dense(vectors, params)
    merged = build_dense_sharded(
        texts, params, encoder="static", shards=4, executor=SerialExecutor()
    )
    assert merged.ntotal == len(texts)
    assert np.array_equal(faiss.serialize_index(merged), faiss.serialize_index(single))
    # and it is a usable index: most products find themselves in their own top 10
    rows = np.arange(0, len(texts), 37)
    _, found = merged.search(vectors[rows], 10)
    assert np.mean([r in f for r, f in zip(rows, found, strict=True)]) > 0.6


def test_ivfpq_params_scale_with_size():
    from shopgen.gen.index import dense_params

    small, large = dense_params(20_000, "ivfpq"), dense_params(10_000_000, "ivfpq")
    assert small["kind"] == large["kind"] == "ivfpq"
    assert small["nlist"] < large["nlist"]
    assert large["nbits"] == 8
    assert small["nlist"] * 39 <= 20_000  # enough points to train every list


def test_sharding_needs_an_ivf_kind():
    from shopgen.gen.index import IndexConfig

    with pytest.raises(ConfigError, match="kind='flat' cannot be built in shards=4"):
        IndexConfig(kind="flat", shards=4)
    with pytest.raises(ConfigError, match="shards=0 must be > 0"):
        IndexConfig(kind="ivfpq", shards=0)


@pytest.mark.slow  # ~30 s: BM25, the encoder load and IVF-PQ training on 3,000 products
def test_build_index_sharded_ivfpq_is_searchable(catalog_dir, tmp_path):
    from shopgen.env.search import SearchIndex
    from shopgen.gen.index import IndexConfig, build_index

    cat = tmp_path / "catalog"
    shutil.copytree(catalog_dir, cat)
    with open_executor("local", workers=1) as executor:
        meta = build_index(cat, IndexConfig(kind="ivfpq", shards=3), executor=executor)
    assert meta["dense"]["kind"] == "ivfpq"
    assert meta["config"]["shards"] == 3
    index = SearchIndex.open(cat)
    assert index.dense.ntotal == meta["n"] == 3000
    title = index.store.products["title"][11]
    assert 11 in index.candidates(title, 20, mode="dense").tolist()
