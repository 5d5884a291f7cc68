from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopgen.cli import main
from shopgen.env.search import (
    CONCURRENT_MIN_ROWS,
    MAX_CARDS,
    MIN_CARDS,
    PRUNE_MIN_POSTINGS,
    RESULT_TOKEN_BUDGET,
    RRF_K,
    SearchIndex,
    cards_json,
    cards_shown,
    estimate_tokens,
    normalize_query,
    rrf,
    top_rows,
)
from shopgen.gen.catalog_writer import CatalogConfig, write_catalog
from shopgen.gen.index import INDEX_DIR, META
from shopgen.schemas.errors import ConfigError, DatasetError


@pytest.fixture(scope="module")
def indexed_catalog(catalog_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture catalog with a static-encoder index (a copy: catalog_dir stays as is)."""
    from shopgen.gen.index import IndexConfig, build_index

    out = tmp_path_factory.mktemp("indexed") / "catalog"
    shutil.copytree(catalog_dir, out)
    build_index(out, IndexConfig(encoder="static"))
    return out


@pytest.fixture(scope="module")
def index(indexed_catalog: Path) -> SearchIndex:
    return SearchIndex.open(indexed_catalog)


def _query_for(index: SearchIndex, row: int) -> str:
    # A customer-style description built from the product itself (no fixed titles).
    rec = index.store.products.row(row, named=True)
    return f"{rec['brand']} {rec['category_path'].split(' > ')[-1]} {' '.join(rec['key_attrs'])}"


def _rows(index: SearchIndex, n: int) -> list[int]:
    return np.linspace(0, index.size - 1, n).astype(int).tolist()


# -- opening -------------------------------------------------------------------------------


def test_missing_index_names_the_command(catalog_dir: Path):
    with pytest.raises(DatasetError, match="shopgen index"):
        SearchIndex.open(catalog_dir)


def test_index_of_another_catalog_is_refused(indexed_catalog: Path, tmp_path: Path):
    other = tmp_path / "other"
    write_catalog(CatalogConfig(size=300, seed=1), other)
    shutil.copytree(indexed_catalog / INDEX_DIR, other / INDEX_DIR)
    with pytest.raises(DatasetError, match="built for catalog"):
        SearchIndex.open(other)


def test_cli_reports_missing_index_in_one_line(catalog_dir: Path, capsys):
    assert main(["search", "--catalog", str(catalog_dir), "cable"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "shopgen index" in err[0]


def test_encoder_mismatch_is_refused(indexed_catalog: Path, tmp_path: Path):
    copy = tmp_path / "catalog"
    shutil.copytree(indexed_catalog, copy)
    meta_path = copy / INDEX_DIR / META
    meta = json.loads(meta_path.read_text())
    meta["encoder"]["weights_sha256"] = "0" * 64
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match="rebuild"):
        SearchIndex.open(copy).search("cable", top_k=20)


# -- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\t\n", b"", b"   "])
def test_empty_query_gives_no_cards(index: SearchIndex, query):
    assert index.search(query, top_k=100) == []


@pytest.mark.parametrize(
    "query", ["cable " * 2000, b"\xff\xfe\xfa usb cable", "\udcff cable", "a\x00b\x07c"]
)
def test_hostile_queries_answer_without_crashing(index: SearchIndex, query):
    cards = index.search(query, top_k=200)
    assert len(cards) <= cards_shown(200)
    assert all(c.product_id for c in cards)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"top_k": 10**6}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"eps_rank": 1.5}, "eps_rank"),
        ({"seed": -1}, "seed"),
        ({"call_index": -3}, "call_index"),
    ],
)
def test_bad_arguments_name_the_field(index: SearchIndex, kwargs, field):
    with pytest.raises(ConfigError, match=field):
        index.search("cable", **kwargs)


def test_non_text_query_is_a_config_error(index: SearchIndex):
    with pytest.raises(ConfigError, match="query"):
        index.search(123, top_k=20)  # type: ignore[arg-type]


@given(st.text(max_size=2000) | st.binary(max_size=600))
def test_normalized_query_is_bounded_clean_utf8(query):
    text = normalize_query(query)
    assert len(text) <= 512
    text.encode("utf-8")  # would raise on a lone surrogate
    assert text == text.strip()
    assert not any(ord(ch) < 32 for ch in text)


# -- what a result shows -------------------------------------------------------------------


def test_cards_shown_is_bounded_and_monotone():
    shown = [cards_shown(k) for k in range(1, 1001)]
    assert min(shown) == MIN_CARDS
    assert max(shown) == MAX_CARDS
    assert all(a <= b for a, b in itertools.pairwise(shown))
    assert cards_shown(200) == 20
    assert cards_shown(20) == 5


def test_result_size_follows_top_k(index: SearchIndex):
    query = _query_for(index, 0)
    assert len(index.search(query, top_k=200)) == 20
    assert len(index.search(query, top_k=100)) == 10
    assert len(index.search(query, top_k=20)) == 5


def test_largest_result_fits_the_budget(index: SearchIndex):
    # The longest titles and attribute lists in the catalog, as one 20-card result.
    products = index.store.products
    longest = products.with_row_index("row").sort(
        products["title"].str.len_chars() + products["key_attrs"].list.join(" ").str.len_chars(),
        descending=True,
    )["row"][:MAX_CARDS]
    text = cards_json(index.cards(longest.to_numpy()))
    assert estimate_tokens(text) <= RESULT_TOKEN_BUDGET
    assert len(json.loads(text)) == MAX_CARDS


def test_card_fields_match_the_catalog(index: SearchIndex):
    cards = index.search(_query_for(index, 5), top_k=50)
    assert cards
    for card in cards:
        rec = index.store.product(card.product_id)
        assert rec is not None
        assert (card.title, card.price, card.rating, card.stock_qty) == (
            rec["title"],
            rec["price"],
            rec["rating"],
            rec["stock_qty"],
        )
        assert card.key_attrs == rec["key_attrs"]


def test_out_of_stock_products_show_zero(index: SearchIndex):
    baseline = index.search(_query_for(index, 7), top_k=200)
    marked = {c.product_id for c in baseline[::2]}
    cards = index.search(_query_for(index, 7), top_k=200, oos_ids=marked)
    assert [c.product_id for c in cards] == [c.product_id for c in baseline]
    for card, base in zip(cards, baseline, strict=True):
        assert card.stock_qty == (0 if card.product_id in marked else base.stock_qty)


# -- retrieval -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_exact_title_finds_its_product(index: SearchIndex, mode):
    rows = _rows(index, 40)
    hits = sum(
        row in index.candidates(index.store.products["title"][row], 200, mode=mode).tolist()
        for row in rows
    )
    assert hits / len(rows) >= 0.9


def test_hybrid_is_a_fusion_of_both_lists(index: SearchIndex):
    query = _query_for(index, 11)
    hybrid = set(index.candidates(query, 50).tolist())
    both = set(index.bm25_rows(query, 50).tolist()) | set(index.dense_rows(query, 50).tolist())
    assert hybrid <= both
    assert len(hybrid) == min(50, len(both))


# -- degradation and determinism -----------------------------------------------------------


def test_no_degradation_shows_the_ranking(index: SearchIndex):
    query = _query_for(index, 3)
    rows = index.candidates(query, 200)[:20]
    ids = index.store.products["product_id"].to_numpy()[rows].tolist()
    assert [c.product_id for c in index.search(query, top_k=200, eps_rank=0.0)] == ids


def test_same_seed_and_call_index_replay_exactly(index: SearchIndex):
    query = _query_for(index, 9)
    a = index.search(query, top_k=200, eps_rank=0.3, seed=4, call_index=2)
    b = index.search(query, top_k=200, eps_rank=0.3, seed=4, call_index=2)
    assert a == b
    others = [index.search(query, top_k=200, eps_rank=0.3, seed=4, call_index=i) for i in range(6)]
    assert any(o != a for o in others)


def test_replay_is_identical_across_processes(indexed_catalog: Path, index: SearchIndex):
    query = _query_for(index, 13)
    code = (
        "import sys; from shopgen.env.search import SearchIndex, cards_json; "
        "ix = SearchIndex.open(sys.argv[1]); "
        "print(cards_json(ix.search(sys.argv[2], top_k=150, eps_rank=0.3, seed=8, call_index=5)))"
    )
    outs = []
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run(
            [sys.executable, "-c", code, str(indexed_catalog), query],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(done.stdout)
    here = cards_json(index.search(query, top_k=150, eps_rank=0.3, seed=8, call_index=5))
    assert outs[0] == outs[1] == here + "\n"


@pytest.mark.parametrize("eps", [0.1, 0.3])
def test_degradation_rate_matches_eps_rank(index: SearchIndex, eps):
    category = index.store.products["category_id"].to_numpy()
    row_of = {pid: i for i, pid in enumerate(index.store.products["product_id"].to_list())}
    replaced = total = 0
    # top_k=50 shows 5 cards: the fixture's small categories (~15 products) then always hold
    # a product not on the page, so every drawn replacement can happen.
    for call, row in enumerate(_rows(index, 600)):
        query = _query_for(index, row)
        pool = index.candidates(query, 50)
        clean = pool[:5].tolist()
        shown = [
            row_of[c.product_id]
            for c in index.search(query, top_k=50, eps_rank=eps, seed=3, call_index=call)
        ]
        assert len(shown) == len(clean)
        for got, want in zip(shown, clean, strict=True):
            total += 1
            if got != want:
                replaced += 1
                assert category[got] == category[want]  # same-category distractor
                assert got not in clean  # never a hit that merely moved up or down
    assert abs(replaced / total - eps) < 0.03


# -- fast paths equal their plain definitions ------------------------------------------------


def _rrf_reference(bm25: list[int], dense: list[int], depth: int) -> list[int]:
    fused: dict[int, float] = {}
    for rows in (bm25, dense):
        for rank, row in enumerate(rows):
            fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(fused, key=lambda r: (-fused[r], r))[:depth]


@given(
    st.lists(st.integers(0, 60), unique=True, max_size=40),
    st.lists(st.integers(0, 60), unique=True, max_size=40),
    st.integers(1, 50),
)
def test_rrf_equals_the_dict_definition(bm25, dense, depth):
    got = rrf(np.array(bm25, dtype=np.int64), np.array(dense, dtype=np.int64), depth)
    assert got.tolist() == _rrf_reference(bm25, dense, depth)


@given(st.lists(st.integers(0, 5), min_size=1, max_size=80), st.integers(1, 40))
def test_top_rows_breaks_ties_by_row_across_the_cut(scores, depth):
    rows = np.arange(len(scores))[::-1].copy()  # rows not in order, scores full of ties
    got = top_rows(rows, np.array(scores, dtype=np.float32), depth)
    expected = sorted(rows.tolist(), key=lambda r: (-scores[len(scores) - 1 - r], r))[:depth]
    assert got.tolist() == expected


def test_bm25_rows_rank_like_bm25s_scores(index: SearchIndex):
    import bm25s

    for row in _rows(index, 12):
        query = _query_for(index, row)
        tokens = bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]
        words = [t for t in tokens if t in index.bm25.vocab_dict]
        scores = index.bm25.get_scores(words)
        hits = np.flatnonzero(scores > 0)
        expected = sorted(hits.tolist(), key=lambda r: (-scores[r], r))[:50]
        assert index.bm25_rows(normalize_query(query), 50).tolist() == expected


@pytest.fixture
def pruning(index: SearchIndex):
    # The fixture catalog is small: force MaxScore and the worker thread on, as at 1M.
    index.prune_min_postings, index.concurrent_min_rows = 0, 0
    yield index
    index.prune_min_postings, index.concurrent_min_rows = PRUNE_MIN_POSTINGS, CONCURRENT_MIN_ROWS


@pytest.fixture(scope="module")
def vocab_words(index: SearchIndex) -> list[str]:
    # Every indexed token, rarest and commonest alike: MaxScore prunes on their bounds.
    return sorted(t for t in index.bm25.vocab_dict if t)


@given(data=st.data())
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_pruned_bm25_equals_exhaustive_scoring(pruning: SearchIndex, vocab_words, data):
    # Repeated words (counted twice), rare and common words mixed, any depth: MaxScore must
    # give the exhaustive ranking row for row, ties included.
    words = data.draw(st.lists(st.sampled_from(vocab_words), min_size=1, max_size=12))
    extra = data.draw(st.lists(st.sampled_from(words), max_size=3))
    depth = data.draw(st.integers(1, 80))
    query = " ".join(words + extra)
    got = pruning.bm25_rows(query, depth).tolist()
    assert got == pruning.bm25_rows_exhaustive(query, depth).tolist()
    assert not pruning._scratch().any()  # the reused score buffer is left all zeros


def test_pruned_bm25_equals_exhaustive_on_descriptions(pruning: SearchIndex):
    index = pruning
    for row in _rows(index, 40):
        query = normalize_query(_query_for(index, row))
        for depth in (1, 10, 200):
            got = index.bm25_rows(query, depth).tolist()
            assert got == index.bm25_rows_exhaustive(query, depth).tolist()


def test_concurrent_hybrid_equals_sequential(pruning: SearchIndex):
    index = pruning
    queries = [_query_for(index, row) for row in _rows(index, 8)]
    together = [index.candidates(q, 50).tolist() for q in queries]
    index.concurrent = False
    try:
        apart = [index.candidates(q, 50).tolist() for q in queries]
    finally:
        index.concurrent = True
    assert together == apart


def test_dense_search_restores_faiss_threads(index: SearchIndex):
    import faiss

    before = faiss.omp_get_max_threads()
    assert index.dense_rows("usb charger", 10).size == 10
    assert faiss.omp_get_max_threads() == before


def test_cached_cards_do_not_keep_an_episode_out_of_stock(index: SearchIndex):
    query = _query_for(index, 3)
    plain = index.search(query, top_k=50)
    marked = index.search(query, top_k=50, oos_ids={c.product_id for c in plain})
    assert all(c.stock_qty == 0 for c in marked)
    again = index.search(query, top_k=50)  # served from the card cache
    assert again == plain
    assert any(c.stock_qty > 0 for c in again)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_hybrid_search_works_in_a_forked_child(pruning: SearchIndex):
    index = pruning
    # The BM25 worker thread does not survive fork; a child must not wait on it forever.
    query = _query_for(index, 0)
    expected = index.candidates(query, 20).tolist()  # starts the parent's worker
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            ok = index.candidates(query, 20).tolist() == expected
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    import select

    ready, _, _ = select.select([read], [], [], 60)  # a stuck child is killed, not waited on
    if not ready:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert ready, "the forked child's hybrid search hung"
    assert os.read(read, 1) == b"1"
