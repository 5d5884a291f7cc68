"""The query side of catalog search: what ``catalog_search(query)`` returns to the agent.

How ``top_k(d)`` shapes a result (DESIGN §5, issue #5). ``top_k`` is the retrieval *depth*:
the hybrid ranker fuses the best ``top_k`` of BM25 and of the dense index by reciprocal-rank
fusion and keeps ``top_k`` candidates. The agent does not see all of them (200 cards would not
fit the seed model's 8,192-token context); it sees the first :func:`cards_shown` (``top_k``)
of them, ``clamp(⌈top_k/10⌉, 5, 20)``: 20 cards at d = 0, 10 at d = 10, 5 from d = 15 on.
Each shown position is then replaced, with probability ``eps_rank(d)``, by a *same-category
distractor drawn from outside the retrieved depth* (so a distractor is never a relevant hit
that merely moved); when the whole category lies inside the depth (small catalogs), from the
category's products not already on the page. Finally a per-result budget of :data:`RESULT_TOKEN_BUDGET` tokens
(estimated as characters/4 of the compact JSON) drops trailing cards, a guard that the
benchmark shows never fires on generated catalogs (the largest 20-card result measured is
reported by ``bench/search.py``).

Products the episode marks out of stock show ``stock_qty`` 0. All randomness comes from
``stream(seed, "catalog_search", call_index)``, so replaying a trajectory with the same task
seed reproduces every result exactly, in any process.
Cost (issue #7: 2–4 searches per task at ≥ 500 tasks/s). The dense index is read into memory
up to :data:`DENSE_MEMORY_BYTES` (memory-mapped above); cards come from a per-row
:class:`~shopgen.env.search_cards.CardBook` of compact JSON texts, so a result costs
look-ups and a join, not pydantic models and re-encoding; :meth:`SearchIndex.result_text`
hands that text to the tool, and :meth:`SearchIndex.results` / :meth:`SearchIndex.search`
parse the same text into dicts / :class:`ProductCard` models.
Every fast path equals its plain reference exactly (``tests/env/test_search_fast.py``).
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np

from shopgen.env.search_cards import (
    CARD_CACHE,
    CARD_COLUMNS,
    RESULT_TOKEN_BUDGET,
    CardBook,
    ProductCard,
    cards_json,
    estimate_tokens,
    fit_budget,
    to_models,
)
from shopgen.gen.difficulty import MAX_TOP_K
from shopgen.gen.encoders import check_identity, load_encoder
from shopgen.gen.index import (
    BM25_DIR,
    BM25_TOKEN,
    CATEGORY,
    CATEGORY_OFFSETS,
    CATEGORY_ROWS,
    DENSE,
    INDEX_DIR,
    INDEX_FORMAT,
    META,
)
from shopgen.gen.seeding import stream
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError, DatasetError

#: Characters of a query that are searched; longer queries are cut at a word boundary.
MAX_QUERY_CHARS = 512
#: Cards one result shows, at most and at least (when that many are retrieved).
MAX_CARDS, MIN_CARDS = 20, 5
#: Reciprocal-rank fusion constant (Cormack et al. 2009's 60).
RRF_K = 60
#: Largest retrieval depth accepted (θ's top_k is at most 200).
MAX_DEPTH = MAX_TOP_K
#: The fusion weights of ranks 1..MAX_DEPTH: elementwise the same floats as computing them.
_RRF_WEIGHTS = 1.0 / (RRF_K + np.arange(1, MAX_DEPTH + 1, dtype=np.float64))
#: Postings below which a query's BM25 is scored exhaustively: MaxScore's Python-level
#: steps cost more than they save on short lists (3k products: 0.6 vs 0.3 ms a query).
PRUNE_MIN_POSTINGS = 50_000
#: Share of the catalog's rows below which a query's postings are scored into the kept
#: scratch buffer (:meth:`SearchIndex._bm25_short`) rather than a fresh zeroed array: at
#: 100k products 0.7× the cost for a category noun (~2k postings), but 1.3–1.7× for a whole
#: title (15–50k), where one scan of the fresh array beats noting touched rows per token.
SHORT_MAX_SHARE = 0.1
#: Catalog rows from which that pays at all: zeroing and scanning a small catalog's array is
#: cheaper than the extra NumPy calls per token (3k: 1.26×, 20k: 0.86×, 50k: 0.74×).
SHORT_MIN_ROWS = 20_000
#: Catalog rows from which hybrid search runs BM25 in a worker thread beside the dense
#: search; below it the thread hand-off outweighs the overlap (3k: p50 1.4 vs 1.1 ms).
CONCURRENT_MIN_ROWS = 500_000
#: Dense index files up to this many bytes are read into memory; larger ones are
#: memory-mapped. FAISS scans an in-memory IVF 3–4× faster than the same index mapped
#: (100k products: 0.27 vs 0.85 ms a query, ``bench/search.py``), but each process then holds
#: its own copy, while mapped pages are shared by every rollout worker on the machine. 1 GiB
#: keeps a 1M-product flat-vector index (256 floats a row) in memory and maps 10M.
#: ``SHOPGEN_DENSE_MEMORY_BYTES`` overrides it per process (0 always maps).
DENSE_MEMORY_BYTES = 1 << 30
DENSE_MEMORY_ENV = "SHOPGEN_DENSE_MEMORY_BYTES"
Mode = Literal["hybrid", "bm25", "dense"]

__all__ = [
    "CARD_CACHE",
    "CONCURRENT_MIN_ROWS",
    "DENSE_MEMORY_BYTES",
    "MAX_CARDS",
    "MAX_DEPTH",
    "MAX_QUERY_CHARS",
    "MIN_CARDS",
    "PRUNE_MIN_POSTINGS",
    "RESULT_TOKEN_BUDGET",
    "RRF_K",
    "Mode",
    "ProductCard",
    "SearchIndex",
    "cards_json",
    "cards_shown",
    "dense_memory_bytes",
    "estimate_tokens",
    "normalize_query",
    "rrf",
    "top_rows",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BM25_WORD = re.compile(BM25_TOKEN)


def cards_shown(top_k: int) -> int:
    """How many cards a result shows at retrieval depth ``top_k``: clamp(⌈top_k/10⌉, 5, 20)."""
    return max(MIN_CARDS, min(MAX_CARDS, math.ceil(top_k / 10)))


def normalize_query(query: str | bytes) -> str:
    """A query as searched: valid UTF-8, no control characters, single spaces, bounded length.

    Non-UTF-8 bytes and lone surrogates become U+FFFD rather than an error: an agent's
    garbled query deserves an answer (likely an empty one), not a crash.

    Raises:
        ConfigError: when ``query`` is neither text nor bytes.
    """
    if isinstance(query, bytes | bytearray):
        text = bytes(query).decode("utf-8", errors="replace")
    elif isinstance(query, str):
        text = query.encode("utf-8", errors="replace").decode("utf-8")
    else:
        raise ConfigError(f"query={query!r} must be a string")
    text = " ".join(_CONTROL.sub(" ", text).split())
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS + 1)
        text = text[: cut if cut > 0 else MAX_QUERY_CHARS]
    return text


def dense_memory_bytes() -> int:
    """The dense-index size up to which it is read into memory (see :data:`DENSE_MEMORY_BYTES`).

    Raises:
        ConfigError: when ``SHOPGEN_DENSE_MEMORY_BYTES`` is not a non-negative integer.
    """
    raw = os.environ.get(DENSE_MEMORY_ENV)
    if raw is None or not raw.strip():
        return DENSE_MEMORY_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"{DENSE_MEMORY_ENV}={raw!r} must be a byte count >= 0")
    return value


class SearchIndex:
    """A catalog's search index, opened lazily: each part loads on first use.

    Use :meth:`open`; share one instance across episodes (it is read-only).
    """

    def __init__(self, store: CatalogStore, meta: dict[str, Any]) -> None:
        self.store = store
        self.meta = meta
        self.dir = store.root / INDEX_DIR
        #: Every row's card text, built on first use and shared by all episodes.
        self.card_book = CardBook(self._card_columns)
        #: Dense index files up to this size load into memory (:func:`dense_memory_bytes`).
        self.dense_memory_bytes = dense_memory_bytes()
        self._local = threading.local()
        #: Run BM25 beside the dense search in hybrid mode from this many rows (see
        #: :data:`CONCURRENT_MIN_ROWS`; ``self.concurrent = False`` turns it off).
        self.concurrent = True
        self.concurrent_min_rows = CONCURRENT_MIN_ROWS
        #: Prune BM25 (MaxScore) for queries with at least this many postings.
        self.prune_min_postings = PRUNE_MIN_POSTINGS
        self._pool_pid = -1
        self._bm25_pool: ThreadPoolExecutor | None = None

    @classmethod
    def open(cls, catalog: str | Path, *, store: CatalogStore | None = None) -> SearchIndex:
        """Open the index of the catalog at ``catalog`` (nothing heavy loads yet).

        Raises:
            DatasetError: when the catalog has no index, an index of another format, or an
                index built for a different catalog (compared by the manifest's dataset_id).
        """
        store = store or CatalogStore(catalog)
        meta_path = store.root / INDEX_DIR / META
        if not meta_path.is_file():
            raise DatasetError(
                f"{store.root} has no search index: run `shopgen index --catalog {store.root}`"
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DatasetError(
                f"{meta_path} is unreadable ({exc}); rerun `shopgen index`"
            ) from None
        if meta.get("format") != INDEX_FORMAT:
            raise DatasetError(
                f"{meta_path}: index format {meta.get('format')!r}, this shopgen reads "
                f"{INDEX_FORMAT}; rerun `shopgen index --catalog {store.root}`"
            )
        if meta.get("catalog_id") != store.catalog_id:
            raise DatasetError(
                f"{store.root}: the index was built for catalog {meta.get('catalog_id')!r}, "
                f"not {store.catalog_id!r}; rerun `shopgen index --catalog {store.root}`"
            )
        return cls(store, meta)

    # -- lazily loaded parts --------------------------------------------------------------

    def _path(self, name: str) -> Path:
        path = self.dir / name
        if not path.exists():
            raise DatasetError(
                f"{path} is missing; rerun `shopgen index --catalog {self.store.root}`"
            )
        return path

    def _npy(self, name: str) -> np.ndarray:
        # A plain ndarray view of the map: np.memmap's Python-level indexing costs ~1 µs a
        # scalar read, and distractor probing reads them one by one.
        return np.asarray(np.load(self._path(name), mmap_mode="r"))

    @property
    def dense_mode(self) -> Literal["memory", "mmap"]:
        """How :attr:`dense` loads the FAISS index: ``memory`` up to the size threshold."""
        size = self._path(DENSE).stat().st_size
        return "memory" if size <= self.dense_memory_bytes else "mmap"

    @cached_property
    def dense(self) -> Any:
        """The FAISS index, read into memory or memory-mapped (:attr:`dense_mode`).

        Mapping falls back to reading for index types FAISS cannot map; both give identical
        results.
        """
        import faiss

        path = str(self._path(DENSE))
        index = None
        if self.dense_mode == "mmap":
            try:
                index = faiss.read_index(path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
            except RuntimeError:  # types without mmap support load into memory
                index = None
        if index is None:
            index = faiss.read_index(path)
        params = self.meta["dense"]
        if params["kind"] == "ivf":
            faiss.extract_index_ivf(index).nprobe = params["nprobe"]
        elif params["kind"] == "hnsw":
            index.hnsw.efSearch = params["efSearch"]
        return index

    @cached_property
    def bm25(self) -> Any:
        """The bm25s retriever, its arrays memory-mapped."""
        import bm25s

        return bm25s.BM25.load(str(self._path(BM25_DIR)), mmap=True, show_progress=False)

    @cached_property
    def encoder(self) -> Any:
        """The query encoder, checked to be the one the vectors were made with."""
        encoder = load_encoder(self.meta["encoder"]["name"])
        check_identity(self.meta["encoder"], encoder)
        return encoder

    @cached_property
    def _category(self) -> np.ndarray:
        return self._npy(CATEGORY)

    @cached_property
    def _category_rows(self) -> np.ndarray:
        return self._npy(CATEGORY_ROWS)

    @cached_property
    def _category_offsets(self) -> np.ndarray:
        return self._npy(CATEGORY_OFFSETS)

    def _card_columns(self) -> Any:
        # Read once by the card book, which keeps the columns as flat buffers (not the frame).
        return self.store.read("products", columns=list(CARD_COLUMNS))

    @property
    def size(self) -> int:
        """Number of indexed products."""
        return int(self.meta["n"])

    # -- retrieval ------------------------------------------------------------------------

    @cached_property
    def _bm25_postings(self) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        # Plain ndarray views of the memory maps: np.memmap's Python-level slicing cost
        # ~0.2 ms a query over the dozens of slices MaxScore takes.
        scores = self.bm25.scores
        data, indices, indptr = (np.asarray(scores[k]) for k in ("data", "indices", "indptr"))
        return self.bm25.vocab_dict, data, indices, indptr

    def _bm25_ids(self, query: str) -> list[int]:
        vocab, _, _, indptr = self._bm25_postings
        stop = _stopwords()
        words = _BM25_WORD.findall(query.lower())
        ids = [vocab[t] for t in words if t not in stop and t in vocab]
        return [i for i in ids if i < len(indptr) - 1]  # bm25s's "" token has no postings

    @cached_property
    def _bm25_bounds(self) -> np.ndarray:
        """Each token's largest posting score: the MaxScore upper bound (one pass, ~50 ms at 1M)."""
        _, data, _, indptr = self._bm25_postings
        starts = np.asarray(indptr[:-1], dtype=np.int64)
        if not len(data):
            return np.zeros(len(starts), dtype=np.float64)
        bounds = np.maximum.reduceat(np.asarray(data), np.minimum(starts, len(data) - 1))
        bounds[np.diff(np.asarray(indptr)) == 0] = 0.0  # reduceat's value for an empty list
        return bounds.astype(np.float64)

    def _marks(self) -> bytearray:
        """This thread's all-zero byte per catalog row, for marking a page's retrieved pool."""
        local = self._local
        marks = getattr(local, "marks", None)
        if marks is None:
            marks = local.marks = bytearray(self.size)
        return marks

    def _scratch(self) -> np.ndarray:
        """This thread's zeroed score buffer (one per catalog row), reused across queries.

        A fresh ``np.zeros`` per query page-faults its megabytes in on every search; a kept
        buffer is reset by zeroing only the rows a query touched.
        """
        local = self._local
        buffer = getattr(local, "scores", None)
        if buffer is None:
            buffer = local.scores = np.zeros(self.size, dtype=np.float32)
        return buffer

    def bm25_rows_exhaustive(self, query: str, depth: int) -> np.ndarray:
        """:meth:`bm25_rows` by scoring every posting of the query's tokens (no pruning).

        The reference the pruned ranking must equal, row for row (tests, ``bench/search.py``).
        """
        return self._bm25_exhaustive(self._bm25_ids(query), depth)

    def _bm25_exhaustive(self, ids: list[int], depth: int) -> np.ndarray:
        if not ids:
            return np.zeros(0, dtype=np.int64)
        _, data, indices, indptr = self._bm25_postings
        scores = np.zeros(self.size, dtype=np.float32)
        for t in ids:  # a token's rows are distinct, so fancy-index += is exact
            lo, hi = int(indptr[t]), int(indptr[t + 1])
            scores[indices[lo:hi]] += data[lo:hi]
        hits = np.flatnonzero(scores > 0)
        return top_rows(hits, scores[hits], depth)

    @cached_property
    def _bm25_positive(self) -> bool:
        """Whether every posting score is > 0, as bm25s's Lucene scores are.

        Then a scratch row at 0 means "not touched yet" (one pass over the postings, on first
        use).
        """
        _, data, _, _ = self._bm25_postings
        return bool(len(data) == 0 or data.min() > 0)

    def _bm25_short(self, ids: list[int], depth: int) -> np.ndarray:
        """:meth:`_bm25_exhaustive`'s ranking at the cost of the postings alone.

        The reference zeroes and scans a score per catalog row (0.4 MB and ~70 µs at 100k,
        10× that at 1M) for queries that touch a few thousand rows. Here the scores go into
        the thread's kept scratch buffer with the same float32 additions in the same token
        order, the rows touched are noted as they are first reached, and only those are read
        back and reset. One token alone needs no buffer: its postings are the scores (0.25–0.3×
        the reference's cost at any size).
        """
        _, data, indices, indptr = self._bm25_postings
        if not self._bm25_positive:
            return self._bm25_exhaustive(ids, depth)
        if len(ids) == 1:
            lo, hi = int(indptr[ids[0]]), int(indptr[ids[0] + 1])
            return top_rows(indices[lo:hi], data[lo:hi], depth)  # 0 + d is d, exactly
        acc = self._scratch()
        lo, hi = int(indptr[ids[0]]), int(indptr[ids[0] + 1])
        seen: list[np.ndarray] = [indices[lo:hi]]  # the scratch is all zeros: all unseen
        try:
            acc[seen[0]] = data[lo:hi]  # 0 + d is d, exactly
            for t in ids[1:]:  # the query's token order: the same float32 sums as the reference
                lo, hi = int(indptr[t]), int(indptr[t + 1])
                rows = indices[lo:hi]
                seen.append(rows[acc[rows] == 0])
                acc[rows] += data[lo:hi]
            seen = [np.concatenate(seen)]
            scores = acc[seen[0]]
        finally:  # the scratch is all zeros between calls
            for rows in seen:
                acc[rows] = 0.0
        return top_rows(seen[0], scores, depth)

    def bm25_rows(self, query: str, depth: int) -> np.ndarray:
        """Product rows by BM25 score (best first), at most ``depth``; ties by row.

        Tokenised like the index (:data:`~shopgen.gen.index.BM25_TOKEN`, English stopwords)
        with one compiled regex, and scored straight from the query tokens' posting lists
        (bm25s's own ``tokenize``/``get_scores`` set-up cost more than the scoring).

        Exact MaxScore pruning (Turtle & Flood 1995): tokens are read highest score bound
        first; once the ``depth``-th best partial score exceeds what all unread tokens could
        still add, no unseen product can reach the list, so the long, low-idf posting lists
        (a colour or "sleeve": ~50–140k postings each at 1M) are only probed for the few
        products still in contention. Survivors are rescored in the query's token order in
        float32, the same additions as scoring every posting, so the list is identical
        (:meth:`bm25_rows_exhaustive` is the reference). Queries whose tokens all have
        similar bounds prune little and cost about what exhaustive scoring does.
        """
        ids = self._bm25_ids(query)
        if not ids:
            return np.zeros(0, dtype=np.int64)
        _, data, indices, indptr = self._bm25_postings
        postings = sum(int(indptr[t + 1] - indptr[t]) for t in ids)
        if postings < self.prune_min_postings:
            short = self.size >= SHORT_MIN_ROWS and postings < SHORT_MAX_SHARE * self.size
            if short or len(ids) == 1:  # one token: its postings are the scores, no scatter
                return self._bm25_short(ids, depth)
            return self._bm25_exhaustive(ids, depth)
        bounds = self._bm25_bounds
        counts: dict[int, int] = {}
        for t in ids:
            counts[t] = counts.get(t, 0) + 1
        # Highest bound per posting first (ties: shorter list, then token id), so a common word
        # typed twice is still read late; any order is exact, this one stops soonest.
        order = sorted(counts, key=lambda t: (-bounds[t], int(indptr[t + 1] - indptr[t]), t))
        remaining = float(sum(bounds[t] * counts[t] for t in order))
        read, theta, unread = 0.0, 0.0, len(order)
        acc = self._scratch()
        seen: list[np.ndarray] = []
        dirty: list[np.ndarray] = []  # lists scattered in full after the stop
        try:
            for i, t in enumerate(order):
                lo, hi = int(indptr[t]), int(indptr[t + 1])
                rows = np.asarray(indices[lo:hi])
                seen.append(rows[acc[rows] == 0])  # scores are > 0: 0 means not seen yet
                acc[rows] += np.asarray(data[lo:hi]) * np.float32(counts[t])
                remaining -= bounds[t] * counts[t]
                read += bounds[t] * counts[t]
                if read <= remaining:
                    continue  # the depth-th partial score is at most ``read``: no stop yet
                seen = [np.concatenate(seen)] if len(seen) > 1 else seen
                if seen[0].size < depth:
                    continue
                partial = acc[seen[0]]
                if np.count_nonzero(partial > remaining) < depth:
                    continue  # fewer than depth rows beat what is unread: no stop yet
                theta = float(np.partition(partial, partial.size - depth)[partial.size - depth])
                if remaining + _slack(theta, remaining) < theta:
                    unread = i + 1
                    break
            touched = np.concatenate(seen) if len(seen) > 1 else seen[0]
            seen = [touched]
            for t in order[unread:]:
                # Unread tokens only matter for rows still in contention; each one read lowers
                # what the rest could add, so the contention shrinks as they are read. A list
                # much shorter than the contenders is scattered whole, otherwise probed.
                partial = acc[touched]
                touched = touched[partial + (remaining + 2 * _slack(theta, remaining)) >= theta]
                lo, hi = int(indptr[t]), int(indptr[t + 1])
                if 8 * touched.size > hi - lo:
                    rows = np.asarray(indices[lo:hi])
                    acc[rows] += np.asarray(data[lo:hi]) * np.float32(counts[t])
                    dirty.append(rows)
                else:
                    got, hit = _probe(indices, data, lo, hi, touched)
                    acc[touched[hit]] += got * np.float32(counts[t])
                remaining -= bounds[t] * counts[t]
                partial = acc[touched]
                theta = max(theta, float(np.partition(partial, partial.size - depth)[-depth]))
            partial = acc[touched]
        finally:  # the scratch is all zeros between calls
            for rows in seen + dirty:
                acc[rows] = 0.0
        if theta > 0.0:  # drop rows that cannot reach the depth-th partial score
            touched = touched[partial + (max(remaining, 0.0) + 2 * _slack(theta, 0.0)) >= theta]
        touched = np.sort(touched)
        scores = np.zeros(touched.size, dtype=np.float32)
        for t in ids:  # the query's token order: the same float32 sums as a full scoring
            got, hit = _probe(indices, data, int(indptr[t]), int(indptr[t + 1]), touched)
            scores[hit] += got
        return top_rows(touched, scores, depth)

    def dense_rows(self, query: str, depth: int) -> np.ndarray:
        """Product rows by cosine similarity to the encoded query (best first).

        FAISS runs single-threaded here: one query is too little work to share, and OpenMP's
        thread hand-off (spin-waiting on a busy box) cost more than the search itself.
        """
        import faiss

        vector = self.encoder.encode([query])
        index = self.dense
        if self.meta["dense"]["kind"] == "hnsw":
            index.hnsw.efSearch = max(self.meta["dense"]["efSearch"], depth)
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            _, rows = index.search(vector, min(depth, self.size))
        finally:
            faiss.omp_set_num_threads(threads)
        rows = rows[0]
        return rows[rows >= 0].astype(np.int64)

    def candidates(self, query: str | bytes, depth: int, *, mode: Mode = "hybrid") -> np.ndarray:
        """The best ``depth`` product rows for ``query`` (empty for an empty query).

        Hybrid ranking is reciprocal-rank fusion: score = Σ 1/(RRF_K + rank) over the BM25
        and dense lists, ties broken by row so the order never depends on the platform.
        """
        _check_int("top_k", depth, 1, MAX_DEPTH)
        text = normalize_query(query)
        if not text:
            return np.zeros(0, dtype=np.int64)
        if mode == "bm25":
            return self.bm25_rows(text, depth)
        if mode == "dense":
            return self.dense_rows(text, depth)
        if mode != "hybrid":
            raise ConfigError(f"mode={mode!r} is not one of hybrid, bm25, dense")
        if not self.concurrent or self.size < self.concurrent_min_rows:
            return rrf(self.bm25_rows(text, depth), self.dense_rows(text, depth), depth)
        # BM25 runs in a worker thread while this one encodes and searches FAISS: both spend
        # their time in NumPy/FAISS loops that release the GIL, so on two free cores the
        # query costs the slower retriever, not the sum.
        lexical = self._pool.submit(self.bm25_rows, text, depth)
        dense = self.dense_rows(text, depth)
        return rrf(lexical.result(), dense, depth)

    @property
    def _pool(self) -> ThreadPoolExecutor:
        # One worker per process: a pool inherited through fork has no live thread (work
        # submitted to it would wait forever), so a forked child makes its own.
        pid = os.getpid()
        if self._pool_pid != pid:
            self._pool_pid = pid
            self._bm25_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shopgen-bm25")
        return self._bm25_pool

    def search(
        self,
        query: str | bytes,
        *,
        top_k: int = 200,
        eps_rank: float = 0.0,
        oos_ids: Collection[str] = (),
        seed: int = 0,
        call_index: int = 0,
        mode: Mode = "hybrid",
    ) -> list[ProductCard]:
        """The cards ``catalog_search(query)`` shows (see the module docstring).

        Args:
            query: what the agent typed; empty or whitespace gives an empty list.
            top_k: retrieval depth, θ's ``top_k(d)``.
            eps_rank: probability each shown position becomes a same-category distractor.
            oos_ids: product ids the episode marks out of stock (shown with stock_qty 0).
            seed: the task seed.
            call_index: which search of the episode this is (0, 1, …).
            mode: ``hybrid`` (the runtime's), or one retriever alone for measurements.

        Returns:
            At most :func:`cards_shown` (``top_k``) cards, best first; :meth:`results` gives
            the same cards as plain dicts, without building models.

        Raises:
            ConfigError: for out-of-range arguments.
        """
        return to_models(
            self.results(
                query,
                top_k=top_k,
                eps_rank=eps_rank,
                oos_ids=oos_ids,
                seed=seed,
                call_index=call_index,
                mode=mode,
            )
        )

    def results(
        self,
        query: str | bytes,
        *,
        top_k: int = 200,
        eps_rank: float = 0.0,
        oos_ids: Collection[str] = (),
        seed: int = 0,
        call_index: int = 0,
        mode: Mode = "hybrid",
    ) -> list[dict[str, Any]]:
        """:meth:`search`'s cards as ``ProductCard.model_dump()`` dicts, without models.

        Raises:
            ConfigError: for out-of-range arguments.
        """
        text, _ = self.result_text(
            query,
            top_k=top_k,
            eps_rank=eps_rank,
            oos_ids=oos_ids,
            seed=seed,
            call_index=call_index,
            mode=mode,
        )
        return json.loads(text)["results"]

    def result_text(
        self,
        query: str | bytes,
        *,
        top_k: int = 200,
        eps_rank: float = 0.0,
        oos_ids: Collection[str] = (),
        seed: int = 0,
        call_index: int = 0,
        mode: Mode = "hybrid",
    ) -> tuple[str, tuple[str, ...]]:
        """The ``catalog_search`` tool's result, ``{"results": [cards]}``, as compact JSON.

        Also returns the product ids it shows. The text is a join of the card book's kept
        card texts (:class:`~shopgen.env.search_cards.CardBook`): byte for byte what
        ``json.dumps`` of :meth:`results` writes, at the cost of the join.

        Raises:
            ConfigError: for out-of-range arguments.
        """
        rows = self._page(query, top_k, eps_rank, seed, call_index, mode)
        texts, ids = self.card_book.texts(rows, oos_ids)
        n = fit_budget([len(t) for t in texts])
        return '{"results":[' + ",".join(texts[:n]) + "]}", tuple(ids[:n])

    def _page(
        self,
        query: str | bytes,
        top_k: int,
        eps_rank: float,
        seed: int,
        call_index: int,
        mode: Mode,
    ) -> list[int]:
        """The rows a result shows, before the token budget: ranked, then degraded."""
        _check_int("seed", seed, 0, 2**63 - 1)
        _check_int("call_index", call_index, 0, 2**63 - 1)
        if not 0.0 <= eps_rank <= 1.0:
            raise ConfigError(f"eps_rank={eps_rank} must be between 0 and 1")
        return self._degrade(
            self.candidates(query, top_k, mode=mode), top_k, eps_rank, seed, call_index
        )

    def _degrade(
        self, pool: np.ndarray, top_k: int, eps_rank: float, seed: int, call_index: int
    ) -> list[int]:
        """The first :func:`cards_shown` rows of ``pool``, each maybe a distractor."""
        n_shown = cards_shown(top_k)
        shown = pool[:n_shown].tolist()
        if not shown or eps_rank == 0.0:
            return shown  # no position can be replaced: the draws would not matter
        rng = stream(seed, "catalog_search", call_index)
        # Two uniforms per position, always drawn, so position i's fate never depends on
        # how many positions before it were replaced. Read as Python floats: a page has at
        # most 20 positions, where NumPy's compare and flatnonzero cost more than a loop.
        # One flat list (position i's pair at 2i, 2i + 1: the (n, 2) array's C order, the
        # same doubles) rather than n pair lists the garbage collector would track.
        draws = rng.random(2 * n_shown).tolist()
        replaced = [i for i in range(len(shown)) if draws[2 * i] < eps_rank]
        if not replaced:
            return shown
        # The pool's rows are marked in the thread's byte per catalog row for the probes, and
        # unmarked after: two NumPy scatters where a set of the ~150 rows cost ~20 µs a page.
        marks = self._marks()
        flags = np.frombuffer(marks, dtype=np.uint8)
        flags[pool] = 1
        try:
            on_page = set(shown)
            for i in replaced:
                # Prefer a product outside the retrieved depth (surely less relevant); a small
                # category may lie wholly inside it, then any same-category product not shown.
                u = draws[2 * i + 1]
                distractor = self._distractor(shown[i], u, on_page, marks.__getitem__)
                if distractor < 0:
                    distractor = self._distractor(shown[i], u, on_page)
                if distractor >= 0:
                    on_page.add(distractor)
                    shown[i] = distractor
        finally:  # the marks are all zero between calls
            flags[pool] = 0
        return shown

    def _distractor(
        self, row: int, u: float, excluded: set[int], in_pool: Callable[[int], Any] | None = None
    ) -> int:
        """A same-category row neither in ``excluded`` nor ``in_pool`` (when given), or −1.

        Chosen by ``u``: a linear probe from ``u``'s place in the category.
        """
        code = int(self._category[row])
        lo, hi = int(self._category_offsets[code]), int(self._category_offsets[code + 1])
        size = hi - lo
        start = min(size - 1, int(u * size))
        members = self._category_rows
        for step in range(size):  # linear probe from a random start: uniform enough, O(pool)
            candidate = int(members[lo + (start + step) % size])
            if candidate not in excluded and (in_pool is None or not in_pool(candidate)):
                return candidate
        return -1

    def cards(self, rows: np.ndarray, *, oos_ids: Collection[str] = ()) -> list[ProductCard]:
        """Product cards for ``rows`` in that order; ``oos_ids`` show stock_qty 0.

        Cards are immutable and a catalog row's card never changes, so each row's card is
        built once (:class:`~shopgen.env.search_cards.CardBook`, up to :data:`CARD_CACHE`
        rows): rollouts search the same products again and again.
        """
        return to_models(self.card_book.dicts([int(r) for r in rows], oos_ids))


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN  # bm25s loads lazily, with the index

    return frozenset(STOPWORDS_EN)


def _probe(
    indices: np.ndarray, data: np.ndarray, lo: int, hi: int, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The posting scores of ``rows`` in one token's row-sorted list, and which rows have one."""
    listed = np.asarray(indices[lo:hi])
    at = np.searchsorted(listed, rows)
    hit = at < hi - lo
    hit[hit] = listed[at[hit]] == rows[hit]
    return np.asarray(data[lo:hi])[at[hit]], hit


def _slack(theta: float, remaining: float) -> float:
    # Partial sums run in float32 in another order than the final scores: a margin far above
    # their rounding error (~1e-7 relative) keeps every pruning decision conservative.
    return 1e-4 * (abs(theta) + abs(remaining)) + 1e-6


def top_rows(rows: np.ndarray, scores: np.ndarray, depth: int) -> np.ndarray:
    """The best ``depth`` of ``rows`` by score, ties by row: exactly, even across the cut.

    ``argpartition`` alone would pick an arbitrary subset of rows tied at the cut-off, so
    every row tied with the ``depth``-th score is kept before the (score, row) sort.
    """
    if rows.size > depth:
        cut = np.partition(scores, rows.size - depth)[rows.size - depth]
        keep = scores >= cut
        rows, scores = rows[keep], scores[keep]
    return rows[np.lexsort((rows, -scores))][:depth].astype(np.int64)


def rrf(bm25: np.ndarray, dense: np.ndarray, depth: int) -> np.ndarray:
    """Reciprocal-rank fusion of two best-first row lists, the best ``depth`` rows.

    score(row) = Σ 1/(RRF_K + rank) over the lists holding it (rank from 1); ties by row,
    so the order never depends on the platform. Each list holds a row at most once.

    One sort by row brings a row's two entries together; the pair's weights are summed into
    the first (two terms: the same float in either order) and the second is zeroed, so it
    sorts after every real score and falls off the end of the (score, row) sort. That
    replaced ``np.unique``, ``np.bincount`` and :func:`top_rows` (~0.1 → ~0.07 ms a call
    at depth 150 on a loaded box; their Python-level steps dominated).
    """
    rows = np.concatenate([bm25, dense]).astype(np.int64)
    if not rows.size:
        return rows
    weights = np.concatenate([_rrf_weights(len(bm25)), _rrf_weights(len(dense))])
    order = rows.argsort(kind="stable")
    rows, weights = rows[order], weights[order]
    twin = np.flatnonzero(rows[1:] == rows[:-1])  # rows[i] == rows[i + 1]: in both lists
    weights[twin] += weights[twin + 1]
    weights[twin + 1] = 0.0
    best = np.lexsort((rows, -weights))[: min(depth, rows.size - twin.size)]
    return rows[best]


def _rrf_weights(n: int) -> np.ndarray:
    """1/(RRF_K + rank) for ranks 1..n (from the kept table up to :data:`MAX_DEPTH`)."""
    if n <= MAX_DEPTH:
        return _RRF_WEIGHTS[:n]
    return 1.0 / (RRF_K + np.arange(1, n + 1, dtype=np.float64))


def _check_int(field: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ConfigError(f"{field}={value!r} must be an integer")
    if not low <= value <= high:
        raise ConfigError(f"{field}={value} must be between {low} and {high}")
