"""Catalog search: build cost, query latency and retrieval quality (issue #5).

Figures (``run()`` returns them flat, name → number):

- ``build_<enc>_<n>_s`` / ``build_<enc>_<n>_rss_mb``: index build wall time and the build
  process's peak RSS (each build runs in its own process so the figures do not mix).
- ``latency_<mode>_<n>_p50_ms`` / ``_p99_ms``: single-query latency; the baseline is one exact
  brute-force matrix-vector product over the same vectors in NumPy, measured in the same run,
  and ``latency_hybrid_<n>_vs_matvec`` is the ratio against it. ``latency_<bm25|hybrid>_<n>_
  before_*`` score every BM25 posting (and run hybrid's retrievers one after the other), the
  path before MaxScore pruning; ``_vs_before`` is the p99 ratio and
  ``bm25_pruned_equal_share_<n>`` the share of queries whose pruned list equals it exactly.
- ``quality_<mode>_<clean|typos>_at10`` / ``_at200``: the share of generated customer
  descriptions (brand, category, two title words, two attributes) whose target product is in
  the first 10 / first top_k(0) = 200 candidates.
- ``result_max_tokens_chars4`` / ``result_max_tokens_minilm``: the largest 20-card tool result
  seen, as characters/4 and as MiniLM word pieces.
- ``encode_static_<n>_per_s`` / ``_vs_st``: static encoding throughput over the catalog's
  texts, and its ratio against sentence-transformers' ``encode`` of the same model (baseline).
- ``dense_recall10_<n>`` / ``dense_recall200_<n>``: for an approximate (IVF/HNSW) index, the
  overlap of its top 10 / 200 with exact search over the same vectors.

- ``hot_*`` (issue #7's throughput: one search must cost well under 1 ms): per-call latency
  at d = 5 (top_k 150, eps_rank 0.1, a fresh call index each call) over typical generated
  queries — catalog titles and category nouns, half each — on the largest catalog, or on
  ``SHOPGEN_BENCH_CATALOG`` (an indexed catalog) when set. Each figure's baseline runs in the
  same loop, query by query in alternating order:

  - ``hot_dense_<n>_memory_*`` / ``_mmap_*``: ``dense_rows`` with the FAISS index read into
    memory vs memory-mapped (``_memory_vs_mmap`` is the p50 ratio) and each one's load time;
  - ``hot_search_<n>_*``: ``SearchIndex.search``; ``hot_text_<n>_*``: ``result_text`` (the
    tool's path: the card book's kept card texts joined); their ``_before`` baseline is the
    path this replaced, rebuilt here — mapped dense index, every BM25 posting scored into a
    fresh array, a validated pydantic card per row, the whole result JSON-encoded per call
    for the budget;
  - ``hot_tool_<n>_*``: the ``catalog_search`` tool's JSON text, through the runtime's
    search memo (``_warm``: the query was searched by an earlier task, so only distractors
    and cards are made; ``_new_rows``: no row's card was built before, as for the many
    distractor rows task generation meets first), against the same ``_before`` path plus
    ``model_dump`` and encoding;
  - ``hot_bm25_<n>_<titles|nouns>_*``: ``bm25_rows`` against scoring every posting.

``python -m bench.search --hot`` runs only the hot-path figures (on SHOPGEN_BENCH_CATALOG, or a
freshly built 10k catalog with ``--quick``).

MiniLM is measured at 10k only (it encodes ~450 products/s here); 1M figures are projections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from shopgen.env.search_cards import CARD_COLUMNS

_BUILD = """
import json, resource, sys, time
from shopgen.gen.index import IndexConfig, build_index
t = time.perf_counter()
meta = build_index(sys.argv[1], IndexConfig(encoder=sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "timings": meta["timings"], "dense": meta["dense"]}))
"""


def _catalog(size: int, root: Path) -> Path:
    from shopgen.gen.catalog_writer import CatalogConfig, write_catalog

    out = root / f"catalog-{size}"
    write_catalog(CatalogConfig(size=size, seed=0), out, workers=2)
    return out


def _build(catalog: Path, encoder: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(catalog), encoder],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _typos(text: str, rng: np.random.Generator, p: float = 0.06) -> str:
    # Per-letter edits (drop, double, swap with the next, substitute), like textnoisr's actions.
    out, chars, i = [], list(text), 0
    while i < len(chars):
        ch = chars[i]
        if ch.isalpha() and rng.random() < p:
            action = int(rng.integers(4))
            if action == 1:
                out += [ch, ch]
            elif action == 2 and i + 1 < len(chars):
                out += [chars[i + 1], ch]
                i += 1
            elif action == 3:
                out.append(chr(ord("a") + int(rng.integers(26))))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def describe(product: dict, rng: np.random.Generator) -> str:
    """A customer's description of ``product``: brand, category, title words, two attributes."""
    leaf = product["category_path"].split(" > ")[-1]
    words = [w for w in product["title"].replace(",", " ").split() if w != product["brand"]]
    picked = [words[i] for i in sorted(rng.choice(len(words), min(2, len(words)), replace=False))]
    attrs = product["key_attrs"]
    two = [attrs[i] for i in rng.choice(len(attrs), min(2, len(attrs)), replace=False)]
    return (
        f"looking for a {product['brand']} {leaf.lower()}, {' '.join(picked)}, {' and '.join(two)}"
    )


def _quality(index, modes: list[str], n_targets: int, tag: str) -> dict:
    from shopgen.gen.seeding import stream

    products = index.store.products
    rows = stream(0, "bench", "targets").choice(len(products), n_targets, replace=False)
    out = {}
    for noisy in (False, True):
        hits = {m: [0, 0] for m in modes}
        for k, row in enumerate(rows.tolist()):
            rng = stream(0, "bench", "describe", k)
            query = describe(products.row(row, named=True), rng)
            if noisy:
                query = _typos(query, rng)
            for mode in modes:
                found = index.candidates(query, 200, mode=mode).tolist()
                hits[mode][0] += row in found[:10]
                hits[mode][1] += row in found
        kind = "typos" if noisy else "clean"
        for mode, (at10, at200) in hits.items():
            out[f"quality_{mode}{tag}_{kind}_at10"] = round(at10 / n_targets, 3)
            out[f"quality_{mode}{tag}_{kind}_at200"] = round(at200 / n_targets, 3)
    return out


def _latency(index, n: int, queries: list[str], rounds: int = 1) -> dict:
    """Warm latency per mode; ``_before`` rows score every BM25 posting, hybrid serially.

    Every configuration first runs every query once untimed (so no configuration pays for
    building the cards another reuses); then they alternate query by query, in an order
    reversed every other query, so load on a shared box and warm caches favour none.
    ``rounds`` > 1 pools that many passes over ``queries``; ``latency_<mode>_<n>_vs_before``
    is the p99 ratio.
    """
    pruned = index.bm25_rows
    configs = {
        "bm25": ("bm25", pruned, True),
        "bm25_before": ("bm25", index.bm25_rows_exhaustive, True),
        "dense": ("dense", pruned, True),
        "hybrid": ("hybrid", pruned, True),
        "hybrid_before": ("hybrid", index.bm25_rows_exhaustive, False),
    }
    times: dict[str, list[float]] = {name: [] for name in configs}
    try:
        for mode, bm25_rows, concurrent in configs.values():
            index.bm25_rows, index.concurrent = bm25_rows, concurrent
            for q in queries:  # warm: lazy loads and every query's cards, outside the timing
                index.search(q, top_k=200, eps_rank=0.1, mode=mode)
        order = list(configs.items())
        for k, q in enumerate(queries * rounds):
            # Reversed every other query: the configuration run second on a query finds its
            # postings and cards in the CPU caches, so no configuration is always second.
            for name, (mode, bm25_rows, concurrent) in order[:: -1 if k % 2 else 1]:
                index.bm25_rows, index.concurrent = bm25_rows, concurrent
                t = time.perf_counter()
                index.search(q, top_k=200, eps_rank=0.1, mode=mode)
                times[name].append(time.perf_counter() - t)
    finally:
        del index.bm25_rows  # back to the class's (pruned) method
        index.concurrent = True
    out = {}
    for name, ts in times.items():
        mode, _, when = name.partition("_")
        tag = f"{mode}_{n}" + (f"_{when}" if when else "")
        out[f"latency_{tag}_p50_ms"] = round(float(np.percentile(ts, 50)) * 1e3, 3)
        out[f"latency_{tag}_p99_ms"] = round(float(np.percentile(ts, 99)) * 1e3, 3)
    for mode in ("bm25", "hybrid"):
        out[f"latency_{mode}_{n}_vs_before"] = round(
            out[f"latency_{mode}_{n}_p99_ms"] / out[f"latency_{mode}_{n}_before_p99_ms"], 3
        )
    same = sum(
        index.bm25_rows(q, 200).tolist() == index.bm25_rows_exhaustive(q, 200).tolist()
        for q in queries
    )
    out[f"bm25_pruned_equal_share_{n}"] = round(same / len(queries), 3)
    # Baseline: exact brute force over n vectors of the same width (one NumPy mat-vec and an
    # argpartition); its cost does not depend on the values, so seeded noise stands in.
    from shopgen.gen.seeding import stream

    dim = int(index.meta["encoder"]["dim"])
    vectors = stream(0, "bench", "matvec").standard_normal((n, dim), dtype=np.float32)
    query = vectors[0].copy()
    times = []
    for _ in range(30):
        t = time.perf_counter()
        np.argpartition(-(vectors @ query), 200)[:200]
        times.append(time.perf_counter() - t)
    base = float(np.percentile(times, 50)) * 1e3
    out[f"latency_matvec_{n}_p50_ms"] = round(base, 3)
    out[f"latency_hybrid_{n}_vs_matvec"] = round(out[f"latency_hybrid_{n}_p50_ms"] / base, 3)
    return out


def _encode_speed(index, n: int) -> dict:
    """Static encoding throughput, against sentence-transformers' own encode of the same texts."""
    import warnings

    from sentence_transformers import SentenceTransformer

    from shopgen.gen.encoders import load_encoder, static_model_dir
    from shopgen.gen.index import TEXT_FIELDS, product_texts

    texts = product_texts(index.store.read("products", columns=list(TEXT_FIELDS)))
    encoder = load_encoder("static")
    t = time.perf_counter()
    encoder.encode(texts)
    fast = len(texts) / (time.perf_counter() - t)
    sample = texts[: min(len(texts), 10_000)]
    model = SentenceTransformer(str(static_model_dir()), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model.encode(sample, batch_size=512, normalize_embeddings=True)
        plain = len(sample) / (time.perf_counter() - t)
    return {
        f"encode_static_{n}_per_s": round(fast),
        f"encode_static_st_{n}_per_s": round(plain),
        f"encode_static_{n}_vs_st": round(fast / plain, 2),
    }


def _dense_recall(index, n: int, queries: list[str]) -> dict:
    """Recall of the built dense index against exact search over the same vectors."""
    import faiss

    from shopgen.gen.encoders import load_encoder
    from shopgen.gen.index import TEXT_FIELDS, product_texts

    if index.meta["dense"]["kind"] == "flat":
        return {}
    encoder = load_encoder(index.meta["encoder"]["name"])
    vectors = encoder.encode(product_texts(index.store.read("products", columns=list(TEXT_FIELDS))))
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(vectors)
    _, truth = exact.search(encoder.encode(queries), 200)
    at10 = at200 = 0.0
    for query, true in zip(queries, truth, strict=True):
        got = index.dense_rows(query, 200).tolist()
        at10 += len(set(got[:10]) & set(true[:10].tolist())) / 10
        at200 += len(set(got) & set(true.tolist())) / 200
    return {
        f"dense_recall10_{n}": round(at10 / len(queries), 3),
        f"dense_recall200_{n}": round(at200 / len(queries), 3),
    }


def _token_sizes(index, queries: list[str]) -> dict:
    from shopgen.env.search import MAX_CARDS, cards_json, estimate_tokens
    from shopgen.gen.encoders import load_encoder

    products = index.store.products
    longest = (
        products.with_row_index("row")
        .sort(
            products["title"].str.len_chars()
            + products["key_attrs"].list.join(" ").str.len_chars(),
            descending=True,
        )["row"][:MAX_CARDS]
        .to_numpy()
    )
    texts = [cards_json(index.search(q, top_k=200)) for q in queries]
    texts.append(cards_json(index.cards(longest)))  # the worst case a catalog allows
    tokenizer = load_encoder("minilm").model.tokenizer
    return {
        "result_max_tokens_chars4": max(estimate_tokens(t) for t in texts),
        "result_max_tokens_minilm": max(len(tokenizer(t)["input_ids"]) for t in texts),
    }


def hot_queries(index, n: int) -> list[str]:
    """Typical generated queries: ``n // 2`` catalog titles and as many category nouns."""
    from shopgen.gen.seeding import stream

    products = index.store.read("products", columns=["title", "category_path"])
    titles = products["title"].to_list()
    nouns = sorted({c.split(" > ")[-1].lower() for c in products["category_path"].unique()})
    rng = stream(0, "bench", "hot")
    half = n // 2
    picked = rng.choice(len(titles), half, replace=False).tolist()
    return [titles[i] for i in picked] + [nouns[i % len(nouns)] for i in range(half)]


class _Before:
    """The search path issue #7 replaced, rebuilt from today's parts as the baseline.

    Retrieval: BM25 scoring every posting into a fresh array and the memory-mapped FAISS
    index. Cards: one validated ``ProductCard`` per row (kept, like the old card cache;
    built from a Polars gather), a ``model_copy`` per out-of-stock card, the whole result
    JSON-encoded on every call to check the token budget, and ``model_dump`` per card.
    """

    def __init__(self, mapped) -> None:
        self.index = mapped
        self.cards: dict = {}
        self.frame = (
            mapped.store.read("products", columns=list(CARD_COLUMNS))
            .with_columns(category=pl.col("category_path").str.split(" > ").list.last())
            .drop("category_path")
            .rechunk()
        )

    def search(self, query: str, *, top_k: int, eps_rank: float, seed: int, call_index: int):
        from shopgen.env.search import (
            RESULT_TOKEN_BUDGET,
            ProductCard,
            cards_json,
            estimate_tokens,
            normalize_query,
            rrf,
        )

        index = self.index
        text = normalize_query(query)
        pool = rrf(index.bm25_rows_exhaustive(text, top_k), index.dense_rows(text, top_k), top_k)
        rows = index._degrade(pool, top_k, eps_rank, seed, call_index)  # distractors: as today
        missing = sorted({r for r in rows if r not in self.cards})
        if missing:
            frame = self.frame[np.asarray(missing, dtype=np.int64)]
            for row, rec in zip(missing, frame.iter_rows(named=True), strict=True):
                self.cards[row] = ProductCard(**rec)
        oos: set[str] = set()  # the bench marks nothing out of stock; the check still ran
        cards = []
        for row in rows:
            card = self.cards[row]
            if card.stock_qty and card.product_id in oos:
                card = card.model_copy(update={"stock_qty": 0})
            cards.append(card)
        while len(cards) > 1 and estimate_tokens(cards_json(cards)) > RESULT_TOKEN_BUDGET:
            cards = cards[:-1]
        return cards


def _timed(configs: dict, queries: list[str], rounds: int) -> dict[str, np.ndarray]:
    """Seconds per call of each ``configs[name](k, query)``, interleaved query by query."""
    times = {name: [] for name in configs}
    items = list(configs.items())
    for r in range(rounds):
        for k, q in enumerate(queries):
            call = r * len(queries) + k
            for name, fn in items[:: -1 if call % 2 else 1]:
                t = time.perf_counter()
                fn(call, q)
                times[name].append(time.perf_counter() - t)
    return {name: np.asarray(ts) for name, ts in times.items()}


def _figures(out: dict, prefix: str, ts: np.ndarray) -> None:
    out[f"{prefix}_p50_ms"] = round(float(np.percentile(ts, 50)) * 1e3, 3)
    out[f"{prefix}_mean_ms"] = round(float(ts.mean()) * 1e3, 3)
    out[f"{prefix}_p99_ms"] = round(float(np.percentile(ts, 99)) * 1e3, 3)


def hot_path(catalog: Path, *, quick: bool = False) -> dict:
    """Per-call latency of search, its dense and BM25 parts and the tool (module docstring)."""
    from types import SimpleNamespace

    from shopgen.env.search import SearchIndex
    from shopgen.env.search_cache import CachedSearch
    from shopgen.env.tools.catalog import catalog_search

    def opened(memory_bytes: int | None) -> SearchIndex:
        index = SearchIndex.open(catalog)
        if memory_bytes is not None:
            index.dense_memory_bytes = memory_bytes
        return index

    index, mapped = opened(None), opened(0)
    n = index.size
    out: dict = {"hot_catalog_rows": n, "hot_dense_mode": index.dense_mode}
    for name, idx in (("memory", index), ("mmap", mapped)):
        t = time.perf_counter()
        idx.dense  # noqa: B018  (loads it)
        out[f"hot_dense_{n}_{name}_load_s"] = round(time.perf_counter() - t, 3)
    queries = hot_queries(index, 60 if quick else 200)
    before = _Before(mapped)
    memo = CachedSearch(opened(None))
    fresh_rows = CachedSearch(opened(None))
    fresh_rows.index.card_book.limit = 0  # every call starts the card book over
    top_k, eps = 150, 0.1  # θ(5)
    oos = frozenset()

    def ctx(call: int, search: CachedSearch = memo) -> SimpleNamespace:
        task = SimpleNamespace(
            seed=0, task_id=f"t{call}", theta={"eps_rank": eps}, axis=lambda _name: top_k
        )
        return SimpleNamespace(
            search=search, state=SimpleNamespace(extra={}), task=task, out_of_stock=oos
        )

    def tool(call: int, q: str, search: CachedSearch = memo) -> str:
        return catalog_search(ctx(call, search), q).text  # the JSON text the runtime sends

    def tool_cold(call: int, q: str, search: CachedSearch = memo) -> str:
        search.clear()  # no earlier task searched these words
        return tool(call, q, search)

    def tool_before(call: int, q: str) -> str:
        cards = before.search(q, top_k=top_k, eps_rank=eps, seed=call, call_index=0)
        result = {"results": [c.model_dump() for c in cards]}
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))

    kwargs = dict(top_k=top_k, eps_rank=eps)
    configs = {
        "dense_memory": lambda c, q: index.dense_rows(q, top_k),
        "dense_mmap": lambda c, q: mapped.dense_rows(q, top_k),
        "search": lambda c, q: index.search(q, seed=c, **kwargs),
        "text": lambda c, q: index.result_text(q, seed=c, **kwargs),
        "search_before": lambda c, q: before.search(q, seed=c, call_index=0, **kwargs),
        "tool": tool_cold,
        "tool_new_rows": lambda c, q: tool_cold(c, q, fresh_rows),
        "tool_before": tool_before,
    }
    for k, q in enumerate(queries):  # warm: lazy loads, and each query's cards once
        for fn in configs.values():
            fn(k, q)
    times = _timed(configs, queries, rounds=1 if quick else 2)
    for k, q in enumerate(queries):  # an earlier task searched the same words
        tool(-1 - k, q)
    # Fresh task ids, so each result is made anew from the remembered retrieval.
    times |= _timed({"tool_warm": lambda c, q: tool(10**6 + c, q)}, queries, rounds=1)
    for name, ts in times.items():
        head, _, tail = name.partition("_")  # "dense_mmap" -> hot_dense_<n>_mmap
        _figures(out, f"hot_{head}_{n}" + (f"_{tail}" if tail else ""), ts)
    p50 = {name: float(np.percentile(ts, 50)) for name, ts in times.items()}
    out[f"hot_dense_{n}_memory_vs_mmap"] = round(p50["dense_memory"] / p50["dense_mmap"], 3)
    out[f"hot_search_{n}_vs_before"] = round(p50["search"] / p50["search_before"], 3)
    out[f"hot_text_{n}_vs_before"] = round(p50["text"] / p50["search_before"], 3)
    out[f"hot_tool_{n}_vs_before"] = round(p50["tool"] / p50["tool_before"], 3)
    out[f"hot_tool_{n}_warm_vs_before"] = round(p50["tool_warm"] / p50["tool_before"], 3)
    out[f"hot_tool_{n}_new_rows_vs_built"] = round(p50["tool_new_rows"] / p50["tool"], 3)
    out |= _bm25_hot(index, n, queries)
    return out


def _bm25_hot(index, n: int, queries: list[str]) -> dict:
    """BM25 per query group against scoring every posting (the reference ranking)."""
    out: dict = {}
    half = len(queries) // 2
    for group, qs in (("titles", queries[:half]), ("nouns", queries[half:])):
        configs = {
            "rows": lambda c, q: index.bm25_rows(q, 150),
            "exhaustive": lambda c, q: index.bm25_rows_exhaustive(q, 150),
        }
        for q in qs:
            for fn in configs.values():
                fn(0, q)
        times = _timed(configs, qs, rounds=3)
        _figures(out, f"hot_bm25_{n}_{group}", times["rows"])
        _figures(out, f"hot_bm25_{n}_{group}_exhaustive", times["exhaustive"])
        out[f"hot_bm25_{n}_{group}_vs_exhaustive"] = round(
            float(np.percentile(times["rows"], 50) / np.percentile(times["exhaustive"], 50)), 3
        )
    return out


def run(quick: bool = False) -> dict:
    """Measure search at 10k and 100k products (3k, static only, with ``quick``)."""
    from shopgen.env.search import SearchIndex
    from shopgen.gen.seeding import stream

    sizes = [3000] if quick else [10_000, 100_000]
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        for n in sizes:
            catalog = _catalog(n, Path(tmp))
            encoders = ["static"] if quick or n > 10_000 else ["static", "minilm"]
            for enc in reversed(encoders):  # static last, so the catalog keeps its index
                b = _build(catalog, enc)
                out[f"build_{enc}_{n}_s"] = round(b["seconds"], 2)
                out[f"build_{enc}_{n}_rss_mb"] = round(b["rss_mb"], 1)
                out[f"build_{enc}_{n}_encode_s"] = b["timings"]["encode_seconds"]
                out[f"build_{enc}_{n}_dense"] = json.dumps(b["dense"])
                if enc == "minilm":
                    index = SearchIndex.open(catalog)
                    out |= _quality(index, ["dense", "hybrid"], 100 if quick else 200, "_minilm")
            index = SearchIndex.open(catalog)
            products = index.store.products
            queries = [
                describe(products.row(r, named=True), stream(0, "bench", "latency", r))
                for r in range(0, len(products), max(1, len(products) // 200))
            ][:200]
            out |= _latency(index, n, queries)
            out |= _dense_recall(index, n, queries)
            out |= _encode_speed(index, n)
            if n == sizes[0]:
                out |= _quality(index, ["bm25", "dense", "hybrid"], 100 if quick else 200, "")
                out |= _token_sizes(index, queries)
        given = os.environ.get("SHOPGEN_BENCH_CATALOG")
        out |= hot_path(Path(given) if given else catalog, quick=quick)
    return out


def _hot_main(quick: bool) -> dict:
    given = os.environ.get("SHOPGEN_BENCH_CATALOG")
    if given:
        return hot_path(Path(given), quick=quick)
    from shopgen.gen.index import IndexConfig, build_index

    with tempfile.TemporaryDirectory(prefix="bench-search-hot-") as tmp:
        catalog = _catalog(3000 if quick else 10_000, Path(tmp))
        build_index(catalog, IndexConfig(encoder="static"))
        return hot_path(catalog, quick=quick)


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(json.dumps(_hot_main(quick) if "--hot" in sys.argv else run(quick=quick), indent=2))
