"""A bounded memo of catalog search results, shared by every episode on one catalog.

``catalog_search`` results are a pure function of (query, top_k, eps_rank, out-of-stock ids,
task seed, call index, mode) — see :mod:`shopgen.env.search` — so remembering them is exact.
Task generation plays every oracle twice (live, then the replay proof) and a trainer replays
the same rows many times; without this memo each of those searches pays the encoder, FAISS
and BM25 again. The memo wraps the index instead of living inside it, so the retrieval code
stays the single owner of how results are made.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Collection
from typing import Any

#: Search results remembered per catalog (a task has a handful; a few thousand tasks' worth).
SEARCH_CACHE_LIMIT = 8192
#: Retrieved candidate lists remembered per catalog, across tasks (queries repeat: nouns).
CANDIDATE_CACHE_LIMIT = 4096


class CachedSearch:
    """A :class:`~shopgen.env.search.SearchIndex` whose ``search``/``results`` are memoised.

    One LRU bound covers both kinds of answer.

    Every other attribute is the index's own, so tools and tests see the same object shape.

    Args:
        index: the search index to wrap.
        limit: results remembered before the least recently used is dropped.
    """

    __slots__ = ("_candidates", "_memo", "hits", "index", "limit", "misses")

    def __init__(self, index: Any, *, limit: int = SEARCH_CACHE_LIMIT) -> None:
        self.index = index
        self.limit = limit
        self._memo: OrderedDict[tuple, tuple[Any, ...]] = OrderedDict()
        self._candidates: OrderedDict[tuple, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0
        # Retrieval (query, depth) -> ranked rows is the same for every task: only the
        # distractors and stock marks depend on the task. The index's own ``search`` calls
        # ``self.candidates``, so an instance attribute routes it through this memo.
        own = getattr(index, "candidates", None)
        if own is not None and hasattr(index, "__dict__"):
            index.candidates = self._memoised_candidates(own)

    def _memoised_candidates(self, retrieve: Any) -> Any:
        memo = self._candidates

        def candidates(query: Any, depth: int, *, mode: str = "hybrid") -> Any:
            try:
                key = (query, depth, mode)
                rows = memo.get(key)
            except TypeError:  # unhashable junk: the index raises its own error
                return retrieve(query, depth, mode=mode)
            if rows is None:
                rows = retrieve(query, depth, mode=mode)
                rows.flags.writeable = False  # shared between tasks: nobody may edit it
                memo[key] = rows
                if len(memo) > CANDIDATE_CACHE_LIMIT:
                    memo.popitem(last=False)
            else:
                memo.move_to_end(key)
            return rows

        candidates.__doc__ = retrieve.__doc__
        return candidates

    def search(
        self,
        query: str | bytes,
        *,
        top_k: int = 200,
        eps_rank: float = 0.0,
        oos_ids: Collection[str] = (),
        seed: int = 0,
        call_index: int = 0,
        mode: str = "hybrid",
    ) -> list[Any]:
        """``index.search`` with the same arguments, answered from the memo when seen before.

        Arguments the index would reject are passed through uncached, so its errors surface
        unchanged.
        """
        args = (query, top_k, eps_rank, oos_ids, seed, call_index, mode)
        return self._recall("search", self.index.search, args)

    def results(
        self,
        query: str | bytes,
        *,
        top_k: int = 200,
        eps_rank: float = 0.0,
        oos_ids: Collection[str] = (),
        seed: int = 0,
        call_index: int = 0,
        mode: str = "hybrid",
    ) -> list[dict[str, Any]]:
        """``index.results`` (the cards as shared dicts), memoised like :meth:`search`.

        An index with only ``search`` (a stand-in, a third-party index) is asked for cards
        and each is ``model_dump``-ed, so anything ``search`` answers can back the tool.
        """
        args = (query, top_k, eps_rank, oos_ids, seed, call_index, mode)
        compute = getattr(self.index, "results", None) or self._dumped_search
        return self._recall("results", compute, args)

    def result_text(
        self,
        query: str | bytes,
        *,
        top_k: int,
        eps_rank: float,
        oos_ids: Collection[str],
        seed: int,
        call_index: int,
    ) -> tuple[str, tuple[str, ...]]:
        """The ``catalog_search`` tool's result as its compact JSON text, and the ids it shows.

        Memoised, so a repeated search (a replay, a scored trajectory) costs a look-up. The
        index makes the text itself when it can (:meth:`SearchIndex.result_text
        <shopgen.env.search.SearchIndex.result_text>`, a join of kept card texts).
        """
        key = self._key(("text", query, top_k, eps_rank, oos_ids, seed, call_index))
        hit = self._lookup(key)
        if hit is not None:
            return hit
        kwargs = dict(
            top_k=top_k, eps_rank=eps_rank, oos_ids=oos_ids, seed=seed, call_index=call_index
        )
        make = getattr(self.index, "result_text", None) or self._encoded_results
        text = make(query, **kwargs)
        if key is not None:
            self.misses += 1
        return self._remember(key, text)

    def _encoded_results(self, query: Any, **kwargs: Any) -> tuple[str, tuple[str, ...]]:
        # An index without ``result_text`` (a stand-in): its cards, encoded here.
        cards = self.results(query, **kwargs)
        text = json.dumps({"results": cards}, ensure_ascii=False, separators=(",", ":"))
        return text, tuple(c["product_id"] for c in cards)

    def _dumped_search(self, query: Any, **kwargs: Any) -> list[dict[str, Any]]:
        cards = self.index.search(query, **kwargs)
        return [c if isinstance(c, dict) else c.model_dump() for c in cards]

    def _recall(self, kind: str, compute: Any, args: tuple) -> list[Any]:
        query, top_k, eps_rank, oos_ids, seed, call_index, mode = args
        key = self._key((kind, query, top_k, eps_rank, oos_ids, seed, call_index, mode))
        cards = self._lookup(key)
        if cards is None:
            cards = compute(
                query,
                top_k=top_k,
                eps_rank=eps_rank,
                oos_ids=oos_ids,
                seed=seed,
                call_index=call_index,
                mode=mode,
            )
            if key is not None:
                self.misses += 1
            cards = self._remember(key, tuple(cards))
        return list(cards)

    def _key(self, parts: tuple) -> tuple | None:
        """The memo key, with the out-of-stock ids as a frozenset.

        None for unhashable junk, a list anywhere in it included: it goes to the index
        uncached, which raises its own error. The memo's own look-up tells (one dict probe,
        ~0.4 µs on every call against 1.5 µs for an ``isinstance(…, Hashable)`` per part, which
        also let a tuple holding a list through to fail at the look-up).
        """
        kind, query, top_k, eps_rank, oos_ids, *rest = parts
        try:
            key = (kind, query, top_k, eps_rank, frozenset(oos_ids), *rest)
            key in self._memo  # noqa: B015  (the probe: an unhashable key raises TypeError)
        except TypeError:
            return None
        return key

    def _lookup(self, key: tuple | None) -> Any:
        """The remembered answer for ``key`` (marked recently used), or None."""
        hit = None if key is None else self._memo.get(key)
        if hit is not None:
            self._memo.move_to_end(key)
            self.hits += 1
        return hit

    def _remember(self, key: tuple | None, value: Any) -> Any:
        """Keep ``value`` under ``key`` (dropping the least recently used past the limit)."""
        if key is not None:
            self._memo[key] = value
            if len(self._memo) > self.limit:
                self._memo.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every remembered result."""
        self._memo.clear()
        self._candidates.clear()

    def __len__(self) -> int:
        return len(self._memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)
