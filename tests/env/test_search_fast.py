"""Search's fast paths give exactly what the plain paths give (issue #7's throughput work).

- the dense index read into memory and memory-mapped rank every query identically;
- ``results`` (parsed from the card book's kept texts) equals ``search`` dumped card by card,
  a card's kept text is ``json.dumps`` of its dict, and the token budget summed from kept
  lengths cuts where re-encoding the JSON would;
- BM25's short-list path equals exhaustive scoring, and the sort-merge fusion equals RRF's
  dict definition;
- the query encoder's kept word pieces equal one tokenizer call on the whole query;
- the ``catalog_search`` tool returns exactly ``search``'s cards.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopgen.env.search import (
    DENSE_MEMORY_BYTES,
    MAX_DEPTH,
    RRF_K,
    SearchIndex,
    cards_json,
    dense_memory_bytes,
    estimate_tokens,
    normalize_query,
    rrf,
)
from shopgen.env.search_cache import CachedSearch
from shopgen.env.search_cards import (
    FEW_ROWS,
    CardBook,
    ProductCard,
    card_text,
    fit_budget,
    zero_stock,
)
from shopgen.schemas.errors import ConfigError

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def ivf_catalog(catalog_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture catalog indexed with IVF: the kind FAISS can memory-map (as at 100k+)."""
    from shopgen.gen.index import IndexConfig, build_index

    out = tmp_path_factory.mktemp("ivf") / "catalog"
    shutil.copytree(catalog_dir, out)
    build_index(out, IndexConfig(encoder="static", kind="ivf"))
    return out


@pytest.fixture(scope="module")
def index(indexed_catalog_dir: Path) -> SearchIndex:
    return SearchIndex.open(indexed_catalog_dir)


def _queries(index: SearchIndex, n: int) -> list[str]:
    # Titles and category nouns, as generated tasks search them, plus multi-word mixes.
    products = index.store.products
    rows = np.linspace(0, index.size - 1, n).astype(int).tolist()
    titles = [products["title"][r] for r in rows]
    nouns = [products["category_path"][r].split(" > ")[-1].lower() for r in rows]
    return titles + nouns + [f"{a} {b}" for a, b in itertools.pairwise(nouns)]


# -- dense: in memory vs memory-mapped -------------------------------------------------------


def _opened(catalog: Path, limit: int, monkeypatch: pytest.MonkeyPatch) -> tuple[SearchIndex, list]:
    import faiss

    flags: list[int] = []
    real = faiss.read_index

    def spy(path, *args):
        flags.append(args[0] if args else 0)
        return real(path, *args)

    monkeypatch.setattr(faiss, "read_index", spy)
    index = SearchIndex.open(catalog)
    index.dense_memory_bytes = limit
    index.dense  # noqa: B018  (loads it, recording how)
    monkeypatch.setattr(faiss, "read_index", real)
    return index, flags


def test_memory_and_mmap_dense_rank_identically(ivf_catalog: Path, monkeypatch):
    import faiss

    memory, read_flags = _opened(ivf_catalog, DENSE_MEMORY_BYTES, monkeypatch)
    mapped, map_flags = _opened(ivf_catalog, 0, monkeypatch)
    assert (memory.dense_mode, mapped.dense_mode) == ("memory", "mmap")
    assert read_flags == [0]  # read whole
    assert map_flags
    assert map_flags[0] & faiss.IO_FLAG_MMAP  # mapped (IVF supports it)
    ivf = faiss.extract_index_ivf(memory.dense)
    assert (
        ivf.nprobe == faiss.extract_index_ivf(mapped.dense).nprobe == memory.meta["dense"]["nprobe"]
    )
    for query in _queries(memory, 30):
        for depth in (5, 200):
            assert (
                memory.dense_rows(query, depth).tolist() == mapped.dense_rows(query, depth).tolist()
            )
        kwargs = dict(top_k=150, eps_rank=0.2, seed=3, call_index=1)
        assert memory.results(query, **kwargs) == mapped.results(query, **kwargs)


def test_dense_memory_threshold_reads_the_environment(monkeypatch):
    monkeypatch.delenv("SHOPGEN_DENSE_MEMORY_BYTES", raising=False)
    assert dense_memory_bytes() == DENSE_MEMORY_BYTES == 1 << 30
    monkeypatch.setenv("SHOPGEN_DENSE_MEMORY_BYTES", "0")
    assert dense_memory_bytes() == 0
    for bad in ("-1", "lots", "1.5"):
        monkeypatch.setenv("SHOPGEN_DENSE_MEMORY_BYTES", bad)
        with pytest.raises(ConfigError, match="SHOPGEN_DENSE_MEMORY_BYTES"):
            dense_memory_bytes()


def test_large_dense_index_is_mapped(index: SearchIndex, ivf_catalog: Path):
    mapped = SearchIndex.open(ivf_catalog)
    size = (mapped.dir / "dense.faiss").stat().st_size
    mapped.dense_memory_bytes = size - 1
    assert mapped.dense_mode == "mmap"
    mapped.dense_memory_bytes = size
    assert mapped.dense_mode == "memory"


# -- cards: results() vs search() --------------------------------------------------------------


def _reference_budget(cards: list[ProductCard], budget: int) -> list[ProductCard]:
    # The budget as first written: re-encode the whole result and drop the last card.
    while len(cards) > 1 and estimate_tokens(cards_json(cards)) > budget:
        cards = cards[:-1]
    return cards


@given(
    row=st.integers(0, 10**6),
    top_k=st.sampled_from([20, 50, 150, 200]),
    eps=st.sampled_from([0.0, 0.1, 0.4, 1.0]),
    seed=st.integers(0, 2**40),
    call_index=st.integers(0, 5),
    oos_every=st.integers(0, 3),
    mode=st.sampled_from(["hybrid", "bm25", "dense"]),
)
@SETTINGS
def test_results_are_search_cards_dumped(index, row, top_k, eps, seed, call_index, oos_every, mode):
    query = _queries(index, 7)[row % 20]
    kwargs = dict(top_k=top_k, eps_rank=eps, seed=seed, call_index=call_index, mode=mode)
    plain = index.search(query, **kwargs)
    oos = {c.product_id for c in plain[::oos_every]} if oos_every else set()
    cards = index.search(query, oos_ids=oos, **kwargs)
    dicts = index.results(query, oos_ids=oos, **kwargs)
    assert dicts == [c.model_dump() for c in cards]
    assert cards_json(dicts) == cards_json(cards)
    assert [ProductCard(**d) for d in dicts] == cards  # the schema still validates them
    assert all(
        (d["stock_qty"] == 0) == (d["product_id"] in oos or p.stock_qty == 0)
        for d, p in zip(dicts, plain, strict=True)
    )


def test_card_values_match_the_catalog_row_for_row(index: SearchIndex):
    book = CardBook(lambda: index.store.read("products"))
    rows = np.linspace(0, index.size - 1, 200).astype(int).tolist()
    products = index.store.products
    for row, card in zip(rows, book.dicts(rows), strict=True):
        rec = products.row(row, named=True)
        rec["category"] = rec["category_path"].split(" > ")[-1]
        expected = ProductCard(**{k: rec[k] for k in ProductCard.model_fields}).model_dump()
        assert card == expected
        assert [type(v) for v in card.values()] == [type(v) for v in expected.values()]


def _card_of_length(n: int) -> ProductCard:
    """A card whose compact JSON is exactly ``n`` characters (n >= :data:`_BARE`)."""
    return ProductCard(**{**_BARE_CARD, "title": "x" * (n - _BARE)})


_BARE_CARD = {
    "product_id": "B0",
    "title": "",
    "brand": "B",
    "category": "C",
    "price": 1.5,
    "rating": 4.0,
    "ship_days": 3,
    "stock_qty": 7,
    "key_attrs": [],
}


def _chars(card: dict) -> int:
    """Characters of one card's compact JSON, encoded the plain way."""
    return len(json.dumps(card, ensure_ascii=False, separators=(",", ":")))


_BARE = _chars(_BARE_CARD)


@given(
    chars=st.lists(st.integers(_BARE, 900), min_size=0, max_size=20),
    budget=st.integers(1, 3000),
)
def test_fit_budget_cuts_where_re_encoding_would(chars, budget):
    # Cards whose JSON is exactly chars[i] long: the kept prefix must equal the reference's.
    cards = [_card_of_length(n) for n in chars]
    assert [_chars(c.model_dump()) for c in cards] == chars
    assert fit_budget(chars, budget) == len(_reference_budget(cards, budget))


def test_budget_drops_trailing_cards_like_the_reference(index: SearchIndex, monkeypatch):
    import shopgen.env.search_cards as search_cards

    query = _queries(index, 3)[0]
    full = index.search(query, top_k=200)
    for budget in (1, 60, 200, 500):
        monkeypatch.setattr(search_cards, "RESULT_TOKEN_BUDGET", budget)
        monkeypatch.setattr(search_cards.fit_budget, "__defaults__", (budget,))
        oos = {full[0].product_id}
        got = index.results(query, top_k=200, oos_ids=oos)
        expected = _reference_budget(index.search(query, top_k=200, oos_ids=oos), budget)
        assert got == [c.model_dump() for c in expected]
        assert 1 <= len(got) < len(full)


def test_shared_cards_survive_a_caller_editing_models(index: SearchIndex):
    query = _queries(index, 3)[1]
    first = index.search(query, top_k=50)
    first[0].key_attrs.append("edited")
    assert (
        index.search(query, top_k=50)[0].key_attrs == index.results(query, top_k=50)[0]["key_attrs"]
    )
    assert "edited" not in index.results(query, top_k=50)[0]["key_attrs"]


def test_card_book_is_bounded(index: SearchIndex):
    book = CardBook(lambda: index.store.read("products"), limit=10)
    book.dicts(list(range(8)))
    assert len(book) == 8
    book.dicts(list(range(8, 16)))  # past the limit: starts over with just these
    assert len(book) == 8
    assert book.dicts([3])[0]["product_id"] == index.store.products["product_id"][3]


def test_a_full_card_book_starting_over_keeps_the_rows_asked_for(index: SearchIndex):
    pids = index.store.products["product_id"]
    book = CardBook(lambda: index.store.read("products"), limit=10)
    book.dicts(list(range(8)))
    # Rows 6 and 7 are kept, 8..11 are new: past the limit, the book starts over but must
    # still hold every row this call shows.
    assert [c["product_id"] for c in book.dicts([6, 7, 8, 9, 10, 11])] == [
        pids[r] for r in range(6, 12)
    ]
    keeps_none = CardBook(lambda: index.store.read("products"), limit=0)
    for start in range(3):  # each call overlaps the last one
        assert keeps_none.texts([start, start + 1])[1] == [pids[start], pids[start + 1]]


def test_null_card_column_is_a_dataset_error(index: SearchIndex):
    import polars as pl

    from shopgen.schemas.errors import DatasetError

    frame = index.store.read("products").with_columns(pl.lit(None, dtype=pl.Float64).alias("price"))
    with pytest.raises(DatasetError, match=r"products\.price has nulls"):
        CardBook(lambda: frame).dicts([0])


# -- BM25's short-list path ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def vocab_words(index: SearchIndex) -> list[str]:
    return sorted(t for t in index.bm25.vocab_dict if t)


@given(data=st.data())
@SETTINGS
def test_short_list_bm25_equals_exhaustive(index: SearchIndex, vocab_words, data):
    words = data.draw(st.lists(st.sampled_from(vocab_words), min_size=1, max_size=10))
    extra = data.draw(st.lists(st.sampled_from(words), max_size=3))
    depth = data.draw(st.integers(1, 250))
    query = " ".join(words + extra)
    expected = index.bm25_rows_exhaustive(query, depth).tolist()
    assert index.bm25_rows(query, depth).tolist() == expected
    # The scratch path itself, whatever share of the catalog the words' postings cover.
    assert index._bm25_short(index._bm25_ids(query), depth).tolist() == expected
    assert not index._scratch().any()  # the reused score buffer is left all zeros


def test_short_list_bm25_on_titles_and_nouns(index: SearchIndex):
    for query in _queries(index, 25):
        text = normalize_query(query)
        ids = index._bm25_ids(text)
        for depth in (1, 20, 200):
            expected = index.bm25_rows_exhaustive(text, depth).tolist()
            assert index.bm25_rows(text, depth).tolist() == expected
            if ids:
                assert index._bm25_short(ids, depth).tolist() == expected


# -- the tool ---------------------------------------------------------------------------------


def test_memo_results_equal_the_index_and_come_back_fresh(index: SearchIndex):
    memo = CachedSearch(SearchIndex.open(index.store.root))
    query = _queries(index, 3)[2]
    kwargs = dict(top_k=100, eps_rank=0.3, seed=9, call_index=2, oos_ids=frozenset())
    first = memo.results(query, **kwargs)
    assert first == index.results(query, **kwargs)
    first.clear()
    assert memo.results(query, **kwargs) == index.results(query, **kwargs)
    assert memo.hits == 1
    # ``search`` and ``results`` are remembered apart: one never answers for the other.
    assert memo.search(query, **kwargs) == index.search(query, **kwargs)
    assert memo.misses == 2


class _Task:
    """The task fields catalog_search reads (d = 5's θ)."""

    seed, task_id = 11, "t-0005"
    theta: ClassVar[dict[str, float]] = {"top_k": 150, "eps_rank": 0.1}

    def axis(self, name: str) -> int:
        return self.theta[name]


def test_catalog_search_tool_returns_search_cards(index: SearchIndex):
    from types import SimpleNamespace

    from shopgen.env.tools.catalog import catalog_search
    from shopgen.gen.seeding import stable_hash

    plain = SearchIndex.open(index.store.root)
    query = _queries(index, 3)[0]
    oos = frozenset(c.product_id for c in plain.search(query, top_k=150)[::3])
    ctx = SimpleNamespace(
        search=CachedSearch(SearchIndex.open(index.store.root)),
        state=SimpleNamespace(extra={}),
        task=_Task(),
        out_of_stock=oos,
    )
    seed = stable_hash(_Task.seed, _Task.task_id, bits=64) >> 1
    for call_index in range(3):
        result = catalog_search(ctx, query)
        shown = json.loads(result.text)["results"]
        expected = plain.search(
            query, top_k=150, eps_rank=0.1, oos_ids=oos, seed=seed, call_index=call_index
        )
        assert shown == [c.model_dump() for c in expected]
        assert result.text == json.dumps(
            {"results": shown}, ensure_ascii=False, separators=(",", ":")
        )
        assert result.product_ids == tuple(c.product_id for c in expected)
        assert any(c["stock_qty"] == 0 for c in shown)
    assert ctx.state.extra["search_calls"] == 3


def test_kept_texts_are_the_cards_json(index: SearchIndex):
    rows = np.linspace(0, index.size - 1, 60).astype(int).tolist()
    pids = index.store.products["product_id"]
    oos = {pids[r] for r in rows[::2]}
    for marks in (set(), oos):
        texts, ids = index.card_book.texts(rows, marks)
        cards = index.card_book.dicts(rows, marks)
        assert texts == [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cards]
        assert ids == [pids[r] for r in rows]
        if marks:
            assert all(c["stock_qty"] == 0 for c in cards[::2])


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)  # controls, quotes, any script


@given(
    card=st.fixed_dictionaries(
        {
            "product_id": _TEXT,
            "title": _TEXT,
            "brand": _TEXT,
            "category": _TEXT,
            "price": st.floats(),
            "rating": st.floats(allow_nan=False),
            "ship_days": st.integers(-(2**70), 2**70),
            "stock_qty": st.integers(0, 2**31),
            "key_attrs": st.lists(_TEXT, max_size=4),
        }
    )
)
def test_card_text_is_json_dumps(card):
    card = {k: card[k] for k in ProductCard.model_fields}  # the card's key order
    assert card_text(card) == json.dumps(card, ensure_ascii=False, separators=(",", ":"))


#: Strings weighted toward what JSON escapes: quotes, backslashes, controls, and any script.
_ESCAPED = st.text(st.sampled_from('"\\\n\x1f/aé') | st.characters(codec="utf-8"), max_size=8)
#: Strings that spell a card's own keys and punctuation (an attribute named like the stock).
_KEYISH = st.lists(
    st.sampled_from([',"stock_qty":', '"stock_qty":7,', ",", '"', "\\", "0", "x"]), max_size=4
).map("".join)


@given(
    card=st.fixed_dictionaries(
        {
            "product_id": _KEYISH | _ESCAPED,
            "title": _KEYISH | _ESCAPED,
            "brand": _KEYISH,
            "category": _KEYISH,
            "price": st.floats(),
            "rating": st.floats(),
            "ship_days": st.integers(-(2**70), 2**70),
            "stock_qty": st.integers(-(2**40), 2**40),
            "key_attrs": st.lists(_KEYISH | _ESCAPED, max_size=4),
        }
    )
)
def test_zero_stock_is_the_card_with_stock_zero(card):
    assert zero_stock(card_text(card)) == card_text({**card, "stock_qty": 0})


_ROW = st.fixed_dictionaries(
    {
        "product_id": _ESCAPED,
        "title": _ESCAPED,
        "brand": _ESCAPED,
        # paths with overlapping separators (" > > ") and none at all
        "category_path": st.lists(st.sampled_from(["a", ">", " > ", "", "b\n"]), max_size=4).map(
            " > ".join
        ),
        "price": st.floats(),
        "rating": st.floats(),
        "ship_days": st.integers(-(2**62), 2**62),
        "stock_qty": st.integers(0, 2**31),
        "key_attrs": st.lists(_ESCAPED, max_size=4),
    }
)


@given(rows=st.lists(_ROW, min_size=1, max_size=6), out_of_stock=st.booleans())
@settings(max_examples=60, deadline=None)
def test_book_cards_equal_json_dumps_of_the_rows(rows, out_of_stock):
    # The book's pre-encoded columns (vectorised escaping, the control-character fallback,
    # the finite-float template) against json.dumps of each row's card dict.
    import polars as pl

    frame = pl.DataFrame(rows, schema_overrides={"key_attrs": pl.List(pl.String)})
    book = CardBook(lambda: frame)
    order = list(range(len(rows)))[::-1]
    oos = {rows[0]["product_id"]} if out_of_stock else set()
    texts, ids = book.texts(order, oos)
    for i, text, pid in zip(order, texts, ids, strict=True):
        rec = rows[i]
        card = {
            "product_id": rec["product_id"],
            "title": rec["title"],
            "brand": rec["brand"],
            "category": rec["category_path"].rsplit(" > ", 1)[-1],
            "price": rec["price"],
            "rating": rec["rating"],
            "ship_days": rec["ship_days"],
            "stock_qty": 0 if rec["product_id"] in oos else rec["stock_qty"],
            "key_attrs": rec["key_attrs"],
        }
        assert text == json.dumps(card, ensure_ascii=False, separators=(",", ":"))
        assert pid == rec["product_id"]
    # A batch of FEW_ROWS or more is one gather, a smaller one read record by record: both
    # give each row's card exactly as a batch of that row alone does.
    columns = book.columns
    assert columns.cards(order) == [c for r in order for c in columns.cards([r])]
    assert columns.cards(order * FEW_ROWS) == columns.cards(order) * FEW_ROWS


def test_result_text_is_results_encoded(index: SearchIndex):
    pids = index.store.products["product_id"]
    for k, query in enumerate(_queries(index, 6)):
        kwargs = dict(top_k=150, eps_rank=0.3, seed=k, call_index=k % 3)
        oos = {pids[int(r)] for r in index.candidates(query, 150)[::3]}
        text, ids = index.result_text(query, oos_ids=oos, **kwargs)
        cards = [c.model_dump() for c in index.search(query, oos_ids=oos, **kwargs)]
        assert text == json.dumps({"results": cards}, ensure_ascii=False, separators=(",", ":"))
        assert ids == tuple(c["product_id"] for c in cards)


# -- the query encoder's word cache ----------------------------------------------------------------

_QUERY_TEXT = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from([" ", "  ", "\u0301", "\u00a0", "\x85", "\x0c", "\ufffd", "日", "ß", "Σ"]),
        st.sampled_from(["[UNK]", "[PAD]", "lamp", "Glass", "18+", "café", "x" * 120]),
    ),
    max_size=40,
).map("".join)


@pytest.fixture(scope="module")
def static_module():
    from shopgen.gen.encoders import load_encoder

    return load_encoder("static").model


@given(texts=st.lists(_QUERY_TEXT, min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_query_ids_equal_one_tokenizer_call(static_module, texts):
    # Later texts reuse words the earlier ones put in the cache.
    for text in [*texts, " ".join(texts), "x " * 700]:
        whole = static_module.tokenizer.encode(text, add_special_tokens=False).ids[:512]
        assert static_module.query_ids(text) == whole


def test_query_word_cache_is_bounded(static_module, monkeypatch):
    import shopgen.gen.encoders as encoders

    monkeypatch.setattr(encoders, "QUERY_WORD_CACHE", 5)
    static_module.pieces.clear()
    assert static_module.query_ids("red table lamps") == static_module.query_ids("red table lamps")
    static_module.query_ids("blue green yellow wooden chair")  # past the bound: starts over
    assert len(static_module.pieces) == 5
    assert (
        static_module.query_ids("red lamps")
        == static_module.tokenizer.encode("red lamps", add_special_tokens=False).ids
    )


# -- fusion -----------------------------------------------------------------------------------


def _fused(bm25: list[int], dense: list[int], depth: int) -> list[int]:
    """Reciprocal-rank fusion by its definition: a dict of summed weights, sorted."""
    scores: dict[int, float] = {}
    for ranked in (bm25, dense):
        for rank, row in enumerate(ranked, start=1):
            scores[row] = scores.get(row, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores, key=lambda r: (-scores[r], r))[:depth]


@given(
    bm25=st.lists(st.integers(0, 500), unique=True, max_size=300),
    dense=st.lists(st.integers(0, 500), unique=True, max_size=300),
    depth=st.integers(1, 400),
)
def test_rrf_equals_its_definition_at_search_depths(bm25, dense, depth):
    got = rrf(np.array(bm25, dtype=np.int64), np.array(dense, dtype=np.int64), depth)
    assert got.tolist() == _fused(bm25, dense, depth)


def test_rrf_past_the_weight_table():
    bm25 = np.arange(MAX_DEPTH + 50, dtype=np.int64)
    dense = bm25[::-1].copy()
    assert rrf(bm25, dense, 30).tolist() == _fused(bm25.tolist(), dense.tolist(), 30)
