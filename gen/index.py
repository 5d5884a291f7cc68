"""Building a catalog's search index: BM25 plus dense FAISS vectors, inside the dataset.

Both halves index the same text per product (title, brand, category path, key attributes):
BM25 because shoppers type brands, sizes and model numbers that dense models blur, dense
vectors because they also phrase things the title never says. The index lives in
``<catalog>/index/`` and its files are listed in the catalog's manifest (table ``index``), so
``shopgen validate`` checksums them; the catalog's ``dataset_id`` does not change, because the
data did not, and the index records that id so a search can refuse an index built for another
catalog.

FAISS index type by size (``kind="auto"``): exact ``Flat`` below :data:`FLAT_LIMIT` (at 100k ×
256 a single exact query is a few ms); above it ``IVF`` with ``nlist ≈ 4√n`` (a power of two)
probed with ``nprobe = nlist/64``. IVF is chosen over HNSW for the default because HNSW32 took
~326 s to add 1M vectors on 2 cores (the 120 s build budget), while IVF4096 trains in ~52 s
and adds in ~17 s even with faiss-cpu's generic OpenBLAS kernel (k-means is 2.7–4.3× faster
with a tuned BLAS). HNSW stays available with ``kind="hnsw"``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

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
#: Below this many products the dense index is exact (``Flat``).
FLAT_LIMIT = 100_000
#: Version of the on-disk layout; a reader refuses others.
INDEX_FORMAT = 1
KINDS = ("auto", "flat", "hnsw", "ivf")
TEXT_FIELDS = ("title", "brand", "category_path", "key_attrs")

Progress = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class IndexConfig:
    """How to index a catalog; every field lands in ``index.json``."""

    encoder: str = "static"
    kind: str = "auto"
    batch_size: int = 512

    def __post_init__(self) -> None:
        if self.encoder not in ENCODERS:
            raise ConfigError(f"encoder={self.encoder!r} is not one of {', '.join(ENCODERS)}")
        if self.kind not in KINDS:
            raise ConfigError(f"kind={self.kind!r} is not one of {', '.join(KINDS)}")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size={self.batch_size} must be > 0")


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
    # nlist ≈ 4√n rounded to a power of two, at least 16 and at most n/39 (FAISS wants ~39
    # training points per centroid); nprobe = nlist/64 keeps recall@10 ≈ 0.86–0.9.
    nlist = 2 ** round(math.log2(max(16.0, 4 * math.sqrt(n))))
    nlist = max(1, min(nlist, n // 39))
    return {"kind": "ivf", "nlist": nlist, "nprobe": max(1, min(nlist, max(8, nlist // 64)))}


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
    else:
        index = faiss.IndexIVFFlat(
            faiss.IndexFlatIP(dim), dim, params["nlist"], faiss.METRIC_INNER_PRODUCT
        )
        # k-means on a fixed, seeded sample: 64 points per centroid is plenty and bounds
        # training time at 1M; FAISS's own k-means seed is fixed too, so builds repeat.
        sample = min(n, 64 * params["nlist"])
        rows = np.sort(stream(0, "index", "ivf-train").permutation(n)[:sample])
        index.train(vectors[rows])
        index.nprobe = params["nprobe"]
    index.add(vectors)
    return index


def build_bm25(texts: list[str], out: Path) -> None:
    """Tokenise and index ``texts`` with bm25s (Lucene BM25) and save into ``out``."""
    import bm25s

    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
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
) -> dict[str, Any]:
    """Build the search index of the catalog at ``catalog`` and list it in its manifest.

    Args:
        catalog: a catalog dataset directory.
        config: encoder, FAISS kind and batch size (defaults: static, auto).
        progress: called with a short stage name as each stage starts.

    Returns:
        The index metadata written to ``index/index.json`` (with build timings).

    Raises:
        DatasetError: when ``catalog`` is not a catalog dataset.
        ConfigError: for a bad config or a missing encoder package.
    """
    import faiss

    config = config or IndexConfig()
    say = progress or (lambda stage: None)
    store = CatalogStore(catalog)
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
        started = time.perf_counter()
        vectors = encoder.encode(texts, batch_size=config.batch_size)
        timings["encode_seconds"] = time.perf_counter() - started

        params = dense_params(len(texts), config.kind)
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
            "timings": {k: round(v, 3) for k, v in timings.items()},
        }
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
    return meta


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
