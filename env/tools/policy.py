"""Store-policy search: a small BM25 ranker over the policy text the rule engine renders.

The passages are the sections (``## question`` plus its sentences) of
:meth:`PolicyEngine.render_text`, so every number the agent reads is one the engine applies in
the return tools and in the policy tasks' ground truth. The index is built once per store and
shared by every episode on it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from shopgen.env.tools.context import ToolContext
from shopgen.env.tools.registry import Encoded, ToolError, encoded, tool

_WORD = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> tuple[str, ...]:
    """Lower-case word tokens with a plural ``s`` stripped ("Colours?" → ("colour",))."""
    out = []
    for w in _WORD.findall(text.lower()):
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return tuple(out)


#: Passages a search returns.
TOP_K = 3
_K1, _B = 1.2, 0.75


@dataclass(frozen=True, slots=True)
class Passage:
    """One searchable section of a policy document."""

    doc: str
    title: str
    text: str
    terms: Counter


class PolicyIndex:
    """BM25 over policy passages (tens of them: a plain Python scorer is fast enough)."""

    def __init__(self, docs: list[Any]) -> None:
        self.passages: list[Passage] = []
        for doc in docs:
            for section in doc.text.split("\n## ")[1:]:
                heading, _, body = section.partition("\n")
                text = " ".join(
                    line.strip("- ").strip() for line in body.splitlines() if line.strip()
                )
                words = tokens(f"{doc.title} {heading} {text}")
                self.passages.append(Passage(doc.id, heading.strip(), text, Counter(words)))
        n = len(self.passages)
        df: Counter = Counter()
        for p in self.passages:
            df.update(p.terms.keys())
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.avg_len = sum(sum(p.terms.values()) for p in self.passages) / max(1, n)

    def search(self, query: str, k: int = TOP_K) -> list[tuple[float, Passage]]:
        """The ``k`` best passages for ``query`` with their scores (ties keep document order)."""
        words = [w for w in tokens(query) if w in self.idf]
        scored = []
        for i, p in enumerate(self.passages):
            length = sum(p.terms.values())
            score = 0.0
            for w in words:
                tf = p.terms.get(w, 0)
                if tf:
                    score += (
                        self.idf[w]
                        * tf
                        * (_K1 + 1)
                        / (tf + _K1 * (1 - _B + _B * length / self.avg_len))
                    )
            if score > 0:
                scored.append((-score, i, p))
        scored.sort(key=lambda s: (s[0], s[1]))
        return [(-s, p) for s, _, p in scored[:k]]


def policy_index(store: Any) -> PolicyIndex:
    """The store's policy index, built on first use and kept as long as the store lives."""
    return store.derived(_build_policy_index)


def _build_policy_index(store: Any) -> PolicyIndex:
    return PolicyIndex(store.policy_engine.render_text())


@tool("read")
def policy_search(ctx: ToolContext, query: str) -> Encoded:  # noqa: D417  (ctx is the runtime's, not the agent's)
    """Search the store's policies (returns, refunds, shipping, price match, warranty, membership).

    Returns the best matching policy passages, best first.

    Args:
        query: what to look up, in words (e.g. "return window for electronics" or "restocking
            fee opened item").
    """
    if not query.strip():
        raise ToolError("query is empty; say what policy to look up", "bad_arguments")
    # The store's policies are shared and fixed: the result is a pure function of the query.
    return ctx.memo_read(("policy_search", query), lambda: encoded(_results(ctx, query)))


def _results(ctx: ToolContext, query: str) -> dict[str, Any]:
    hits = policy_index(ctx.store).search(query)
    return {
        "results": [
            {"document": p.doc, "section": p.title, "text": p.text, "score": round(s, 2)}
            for s, p in hits
        ]
    }
