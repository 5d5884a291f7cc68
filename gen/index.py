"""Building a catalog's search index: BM25 plus dense FAISS vectors, inside the dataset.

Both halves index the same text per product (title, brand, category path, key attributes):
BM25 because shoppers type brands, sizes and model numbers that dense models blur, dense
vectors because they also phrase things the title never says. The index lives in
``<catalog>/index/`` and its files are listed in the catalog's manifest (table ``index``), so
``shopgen validate`` checksums them; the catalog's ``dataset_id`` does not change, because the
data did not, and the index records that id so a search can refuse an index built for another
catalog.

FAISS index type by size (``kind="auto"``): exact ``Flat`` below :data:`FLAT_LIMIT` (at 20k ×
256 a single exact query is ~1–2 ms); above it ``IVF`` with ``nlist ≈ 2√n`` (a power of two)
probed with ``nprobe = max(8, nlist/256)``, trained for :data:`IVF_NITER` k-means iterations
on 64 points per list. IVF is chosen over HNSW for the default because HNSW32 took
~326 s to add 1M vectors on 2 cores (the 120 s build budget), while IVF4096 trains in ~52 s
and adds in ~17 s even with faiss-cpu's generic OpenBLAS kernel (k-means is 2.7–4.3× faster
with a tuned BLAS). HNSW stays available with ``kind="hnsw"``.

Beyond one machine (10M+ products): ``kind="ivfpq"`` stores each vector as a product-quantised
code (``m`` bytes instead of ``4·dim``), and ``shards > 1`` builds it the way FAISS's
distributed recipe does — train the coarse quantizer and PQ codebooks once on a seeded sample,
encode and add row ranges in parallel on any executor (:mod:`shopgen.gen.backends`, Ray
included), then merge the shard indexes in row order with ``merge_from``. Each inverted list
then holds its rows in row order, exactly as one sequential ``add`` leaves it, so the merged
index is the single-machine index, byte for byte (``tests/gen/test_backends.py``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from shopgen.gen.backends import SerialExecutor
from shopgen.gen.dataset import add_files
from shopgen.gen.encoders import ENCODERS, load_encoder
from shopgen.gen.seeding import stream
from shopgen.gen.store import CatalogStore
from shopgen.schemas.errors import ConfigError

INDEX_DIR = "index"
META = "index.json"
BM25_DIR = "bm25"
DENSE = "dense.faiss"
IDS = "product_ids.npy"
CATEGORY = "category.npy"
CATEGORY_ROWS = "category_rows.npy"
CATEGORY_OFFSETS = "category_offsets.npy"
#: Below this many products the dense index is exact (``Flat``): a single exact query over
#: 20k × 256 floats is ~1–2 ms; at 100k it was ~15 ms unloaded (and 36 ms on a busy box).
FLAT_LIMIT = 20_000
#: k-means iterations for IVF training: recall@10 did not move between 10 and FAISS's
#: default 25 on product texts, and training time is linear in it.
IVF_NITER = 10
#: Vectors added to a FAISS index per call.
ADD_SLICE = 65_536
#: Version of the on-disk layout; a reader refuses others.
INDEX_FORMAT = 1
KINDS = ("auto", "flat", "hnsw", "ivf", "ivfpq")
#: Kinds the sharded build (``IndexConfig.shards > 1``) supports: trained, then merged.
SHARDABLE = ("ivf", "ivfpq")
TEXT_FIELDS = ("title", "brand", "category_path", "key_attrs")

Progress = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class IndexConfig:
    """How to index a catalog; every field lands in ``index.json``."""

    encoder: str = "static"
    kind: str = "auto"
    batch_size: int = 512
    #: Row ranges encoded and added in parallel, then merged (IVF kinds only; 1 = one pass).
    shards: int = 1

    def __post_init__(self) -> None:
        if self.encoder not in ENCODERS:
            raise ConfigError(f"encoder={self.encoder!r} is not one of {', '.join(ENCODERS)}")
        if self.kind not in KINDS:
            raise ConfigError(f"kind={self.kind!r} is not one of {', '.join(KINDS)}")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size={self.batch_size} must be > 0")
        if self.shards < 1:
            raise ConfigError(f"shards={self.shards} must be > 0")
        if self.shards > 1 and self.kind not in SHARDABLE:
            raise ConfigError(
                f"kind={self.kind!r} cannot be built in shards={self.shards}: use "
                f"{' or '.join(SHARDABLE)}"
            )


def product_texts(products: pl.DataFrame) -> list[str]:
    """The text both retrievers index for each product, in row order."""
    frame = products.select(
        pl.concat_str(
            [
                pl.col("title"),
                pl.col("brand"),
                pl.col("category_path").str.replace_all(" > ", ", ", literal=True),
                pl.col("key_attrs").list.join(", "),
            ],
            separator=". ",
        ).alias("text")
    )
    return frame["text"].to_list()


def dense_params(n: int, kind: str) -> dict[str, Any]:
    """The FAISS index type and parameters for ``n`` vectors (``kind="auto"`` picks by size)."""
    if kind == "auto":
        kind = "flat" if n < FLAT_LIMIT else "ivf"
    if kind == "flat":
        return {"kind": "flat"}
    if kind == "hnsw":
        return {"kind": "hnsw", "M": 32, "efConstruction": 40, "efSearch": 64}
    if kind == "ivfpq":
        return ivfpq_params(n)
    # nlist ≈ 2√n rounded to a power of two, at least 16 and at most n/39 (FAISS wants ~39
    # training points per centroid); nprobe = max(8, nlist/256). Measured on static vectors
    # of generated descriptions vs exact search at 100k (nlist 512, nprobe 8): recall@10
    # 1.00, @200 0.99, 0.3 ms a query. 2√n, not 4√n, because training and adding cost
    # O(n·nlist) on faiss-cpu's generic BLAS kernel, while a query scans nprobe·n/nlist.
    nlist = 2 ** round(math.log2(max(16.0, 2 * math.sqrt(n))))
    nlist = max(1, min(nlist, n // 39))
    nprobe = max(1, min(nlist, max(8, nlist // 256)))
    return {"kind": "ivf", "nlist": nlist, "nprobe": nprobe, "niter": IVF_NITER}


def min_vectors(params: dict[str, Any]) -> int:
    """The fewest vectors FAISS trains an index of ``params`` on: a centroid needs a point.

    IVF k-means needs one point per list; IVF-PQ also one per code of each sub-quantizer
    (``2 ** nbits``, at least 16). Flat and HNSW indexes are not trained.
    """
    if params["kind"] == "ivfpq":
        return max(params["nlist"], 2 ** params["nbits"])
    if params["kind"] == "ivf":
        return params["nlist"]
    return 1


def check_trainable(n: int, kind: str) -> None:
    """Refuse, before any work, an index kind that ``n`` products cannot train.

    Raises:
        ConfigError: naming the fewest products the kind needs.
    """
    least = min_vectors(dense_params(n, kind))
    if n < least:
        raise ConfigError(
            f"kind={kind!r} needs at least {least} products to train on, the catalog has {n}: "
            f"use kind 'flat' (exact; what 'auto' picks below {FLAT_LIMIT:,} products)"
        )


def build_dense(vectors: np.ndarray, params: dict[str, Any]) -> Any:
    """A FAISS inner-product index over unit ``vectors`` whose ids are row numbers."""
    import faiss

    n, dim = vectors.shape
    if params["kind"] == "flat":
        index = faiss.IndexFlatIP(dim)
    elif params["kind"] == "hnsw":
        index = faiss.IndexHNSWFlat(dim, params["M"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params["efConstruction"]
        index.hnsw.efSearch = params["efSearch"]
    elif params["kind"] == "ivfpq":
        index = train_dense(vectors[train_rows(n, params)], params)
    else:
        # k-means on a fixed, seeded sample (train_rows: 64 points per centroid is plenty and
        # bounds training time at 1M); FAISS's own k-means seed is fixed, so builds repeat.
        index = train_dense(vectors[train_rows(n, params)], params)
    # Add in slices: the same index as one add (rows are assigned independently), without
    # FAISS's temporary n × nlist assignment buffers for all rows at once.
    for lo in range(0, n, ADD_SLICE):
        index.add(vectors[lo : lo + ADD_SLICE])
    return index


def ivfpq_params(n: int) -> dict[str, Any]:
    """IVF-PQ parameters for ``n`` vectors: the IVF lists of ``kind="ivf"``, 8-bit PQ codes.

    ``m`` is the target code size in bytes (the trained index uses ``gcd(dim, m)``
    sub-quantizers, so it divides any encoder's dimension); ``nbits`` drops below 8 only
    when ``n`` is too small to train 256 centroids per sub-quantizer (~39 points each).
    PQ codes blur fine distinctions, so ``nprobe`` is 4× the IVF default.
    """
    nlist = dense_params(n, "ivf")["nlist"]
    nbits = max(4, min(8, int(math.log2(max(16, n // 39)))))
    nprobe = max(1, min(nlist, max(16, nlist // 16)))
    return {"kind": "ivfpq", "nlist": nlist, "nprobe": nprobe, "m": 32, "nbits": nbits}


def train_rows(n: int, params: dict[str, Any]) -> np.ndarray:
    """The seeded, sorted sample of rows an IVF index is trained on (same in every build)."""
    if params["kind"] == "ivf":  # the sample build_dense has always used for ``ivf``
        sample = min(n, 64 * params["nlist"])
        return np.sort(stream(0, "index", "ivf-train").permutation(n)[:sample])
    sample = min(n, max(64 * params["nlist"], 64 * 2 ** params["nbits"]))
    return np.sort(stream(0, "index", "ivfpq-train").permutation(n)[:sample])


def train_dense(sample: np.ndarray, params: dict[str, Any]) -> Any:
    """An empty IVF (``ivf``) or IVF-PQ (``ivfpq``) index trained on ``sample``.

    Training is the one step a sharded build does once, centrally; every shard then adds to
    a copy of this index, so all shards share one quantizer and can be merged.
    """
    import faiss

    dim = sample.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    if params["kind"] == "ivfpq":
        m = math.gcd(dim, params["m"])
        index = faiss.IndexIVFPQ(
            quantizer, dim, params["nlist"], m, params["nbits"], faiss.METRIC_INNER_PRODUCT
        )
    elif params["kind"] == "ivf":
        index = faiss.IndexIVFFlat(quantizer, dim, params["nlist"], faiss.METRIC_INNER_PRODUCT)
    else:
        raise ConfigError(f"kind={params['kind']!r} has no training step: use ivf or ivfpq")
    if "niter" in params:  # indexes recorded before IVF_NITER trained with FAISS's 25
        index.cp.niter = params["niter"]
    index.train(np.ascontiguousarray(sample, dtype=np.float32))
    index.nprobe = params["nprobe"]
    return index


def add_shard(job: tuple[np.ndarray, str, int, list[str]]) -> np.ndarray:
    """Encode one shard's texts and add them to a copy of the trained index (runs in a worker).

    Args:
        job: (the serialised trained index, encoder name, batch size, the shard's texts).

    Returns:
        The serialised shard index; its ids are 0-based within the shard.
    """
    import faiss

    trained, encoder, batch_size, texts = job
    index = faiss.deserialize_index(trained)
    index.add(load_encoder(encoder).encode(texts, batch_size=batch_size))
    return faiss.serialize_index(index)


def merge_shards(trained: np.ndarray, parts: list[np.ndarray], starts: list[int]) -> Any:
    """The trained index with every shard merged in row order, ids offset to catalog rows."""
    import faiss

    index = faiss.deserialize_index(trained)
    for part, start in zip(parts, starts, strict=True):
        index.merge_from(faiss.deserialize_index(part), start)
    return index


def build_dense_sharded(
    texts: list[str],
    params: dict[str, Any],
    *,
    encoder: str,
    shards: int,
    executor: Executor,
    batch_size: int = 512,
) -> Any:
    """The dense index of ``texts`` built as train once → add ``shards`` in parallel → merge.

    Only the training sample is encoded here; each shard encodes its own rows where it runs,
    which is where the time goes at 10M+ products. Equal to :func:`build_dense` over the same
    vectors, byte for byte, whatever ``shards`` and ``executor`` are.
    """
    import faiss

    if params["kind"] not in SHARDABLE:
        raise ConfigError(f"kind={params['kind']!r} cannot be sharded: use ivf or ivfpq")
    n = len(texts)
    rows = train_rows(n, params)
    sample = load_encoder(encoder).encode([texts[i] for i in rows], batch_size=batch_size)
    trained = faiss.serialize_index(train_dense(sample, params))
    del sample
    size = -(-n // max(1, min(shards, n)))
    starts = list(range(0, n, size))
    jobs = [(trained, encoder, batch_size, texts[s : s + size]) for s in starts]
    return merge_shards(trained, list(executor.map(add_shard, jobs)), starts)


#: bm25s's default token pattern (scikit-learn's): runs of two or more word characters.
BM25_TOKEN = r"(?u)\b\w\w+\b"
#: bm25s's Lucene BM25 defaults.
BM25_K1, BM25_B = 1.5, 0.75


def bm25_tokens(texts: list[str]) -> pl.DataFrame:
    """Each text's BM25 tokens as rows ``(row, tok)``, in text order: bm25s's tokenisation.

    Lower-cased, :data:`BM25_TOKEN` matches, bm25s's English stopwords removed — the same as
    ``bm25s.tokenize(texts, stopwords="en")``, but vectorised in polars (bm25s's Python loop
    took ~27 s per million products here).
    """
    from bm25s.stopwords import STOPWORDS_EN

    return (
        pl.DataFrame({"t": texts}, schema={"t": pl.String})
        .with_row_index("row")
        .select(
            "row",
            pl.col("t").str.to_lowercase().str.extract_all(BM25_TOKEN[4:]).alias("tok"),
        )
        .explode("tok")
        .filter(pl.col("tok").is_not_null() & ~pl.col("tok").is_in(list(STOPWORDS_EN)))
    )


def build_bm25(texts: list[str], out: Path) -> None:
    """Index ``texts`` with Lucene BM25 and save the index in bm25s's format into ``out``.

    The score matrix (one precomputed score per token and product, stored by token) is the
    one ``bm25s.BM25().index(bm25s.tokenize(texts, stopwords="en"))`` builds (a test compares
    them), computed with polars/NumPy group-bys instead of bm25s's per-document Python loop:
    ~10× faster, which is what lets 1M products index within the build budget. The saved
    index loads with ``bm25s.BM25.load``.
    """
    import bm25s

    n = len(texts)
    tokens = bm25_tokens(texts)
    vocab = tokens["tok"].unique().sort()
    counts = (
        tokens.with_columns(
            pl.col("tok").replace_strict(vocab, np.arange(len(vocab)), return_dtype=pl.Int64)
        )
        .group_by("row", "tok")
        .len("tf")
    )
    doc_len = np.bincount(tokens["row"].to_numpy(), minlength=n).astype(np.float64)
    avg_len = float(doc_len.mean()) if n else 0.0
    tok = counts["tok"].to_numpy()
    row = counts["row"].to_numpy().astype(np.int64)
    tf = counts["tf"].to_numpy().astype(np.float32)
    df = np.bincount(tok, minlength=len(vocab)).astype(np.float64)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    norm = (BM25_K1 * ((1 - BM25_B) + BM25_B * doc_len[row] / max(avg_len, 1e-9))).astype(
        np.float32
    )
    scores = idf[tok] * (tf / (norm + tf))
    order = np.lexsort((row, tok))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tok, minlength=len(vocab)), out=indptr[1:])
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
    retriever.scores = {
        "data": scores[order].astype(np.float32),
        "indices": row[order].astype(np.int32),
        "indptr": indptr,
        "num_docs": n,
    }
    retriever.vocab_dict = {t: i for i, t in enumerate(vocab.to_list())}
    retriever.vocab_dict[""] = len(vocab)  # bm25s's empty token, outside the matrix
    retriever.unique_token_ids_set = set(retriever.vocab_dict.values())
    retriever.nonoccurrence_array = None  # Lucene BM25 scores absent tokens as 0
    retriever.save(str(out), show_progress=False)


def category_layout(categories: pl.Series) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Category names, each row's category code, rows grouped by category, group offsets.

    Same-category distractors are drawn from these groups in O(1) at query time.
    """
    names = sorted(categories.unique().to_list())
    code = categories.replace_strict(names, list(range(len(names))), return_dtype=pl.Int32)
    codes = code.to_numpy().astype(np.int32)
    order = np.argsort(codes, kind="stable").astype(np.int64)
    offsets = np.searchsorted(codes[order], np.arange(len(names) + 1)).astype(np.int64)
    return names, codes, order, offsets


def build_index(
    catalog: str | Path,
    config: IndexConfig | None = None,
    *,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Build the search index of the catalog at ``catalog`` and list it in its manifest.

    Args:
        catalog: a catalog dataset directory.
        config: encoder, FAISS kind and batch size (defaults: static, auto).
        progress: called with a short stage name as each stage starts.
        executor: runs the shards of a sharded build (``config.shards > 1``); None runs
            them in this process (:mod:`shopgen.gen.backends` has local pools and Ray).

    Returns:
        The index metadata written to ``index/index.json``, and the build's wall-clock
        ``timings`` (kept out of the file, whose bytes a seed fixes).

    Raises:
        DatasetError: when ``catalog`` is not a catalog dataset.
        ConfigError: for a bad config or a missing encoder package.
    """
    import faiss

    config = config or IndexConfig()
    say = progress or (lambda stage: None)
    store = CatalogStore(catalog)
    check_trainable(
        sum(e.rows for e in store.manifest.files.values() if e.table == "products"), config.kind
    )
    products = store.read("products", columns=["product_id", "category_id", *TEXT_FIELDS])
    texts = product_texts(products)
    timings: dict[str, float] = {}
    root = store.root
    tmp = Path(tempfile.mkdtemp(prefix=f".{INDEX_DIR}.partial-", dir=root))
    try:
        say("bm25")
        started = time.perf_counter()
        build_bm25(texts, tmp / BM25_DIR)
        timings["bm25_seconds"] = time.perf_counter() - started

        say(f"encode ({config.encoder})")
        started = time.perf_counter()
        encoder = load_encoder(config.encoder)
        timings["load_encoder_seconds"] = time.perf_counter() - started
        params = dense_params(len(texts), config.kind)
        if config.shards > 1:
            say(f"faiss ({params['kind']}, {config.shards} shards: train, add, merge)")
            started = time.perf_counter()
            dense = build_dense_sharded(
                texts,
                params,
                encoder=config.encoder,
                shards=config.shards,
                executor=executor or SerialExecutor(),
                batch_size=config.batch_size,
            )
            faiss.write_index(dense, str(tmp / DENSE))
            timings["sharded_encode_faiss_seconds"] = time.perf_counter() - started
            del dense
        else:
            started = time.perf_counter()
            vectors = encoder.encode(texts, batch_size=config.batch_size)
            timings["encode_seconds"] = time.perf_counter() - started

            say(f"faiss ({params['kind']})")
            started = time.perf_counter()
            faiss.write_index(build_dense(vectors, params), str(tmp / DENSE))
            timings["faiss_seconds"] = time.perf_counter() - started
            del vectors

        ids = products["product_id"].cast(pl.Binary).to_numpy().astype("S16")
        np.save(tmp / IDS, ids)
        names, codes, order, offsets = category_layout(products["category_id"])
        np.save(tmp / CATEGORY, codes)
        np.save(tmp / CATEGORY_ROWS, order)
        np.save(tmp / CATEGORY_OFFSETS, offsets)
        meta = {
            "format": INDEX_FORMAT,
            "catalog_id": store.catalog_id,
            "n": len(texts),
            "text_fields": list(TEXT_FIELDS),
            "encoder": encoder.identity,
            "dense": params,
            "bm25": {"library": "bm25s", "method": "lucene", "stopwords": "en"},
            "categories": names,
            "config": asdict(config),
        }
        # No timings in the file: the same catalog and config write the same bytes.
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        say("manifest")
        _swap_in(tmp, root / INDEX_DIR)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    listed = {
        p.relative_to(root).as_posix(): INDEX_DIR
        for p in sorted((root / INDEX_DIR).rglob("*"))
        if p.is_file()
    }
    add_files(root, listed)
    return {**meta, "timings": {k: round(v, 3) for k, v in timings.items()}}


def _swap_in(tmp: Path, target: Path) -> None:
    # Rename the finished index into place; an old index is moved aside first and removed
    # after, so there is never a moment with a half-written index at ``target``.
    if target.exists():
        trash = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(trash)
        tmp.rename(target)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        tmp.rename(target)
