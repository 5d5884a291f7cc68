"""What every environment's generator shares: the generation context and the draft it returns.

A generator is a pure function ``generate(ctx, d, axes, rng) -> Draft`` of the catalog, the
difficulty d, its axes θ(d) (with any overrides) and one keyed stream. The draft holds the hidden final goal, the hidden initial episode state and
the slots the customer states; the pipeline (``shopgen.taskgen``) renders the first message,
drops optional slots, writes the user script, runs the oracle and replays it.
"""

from __future__ import annotations

import json
import re
import weakref
from bisect import bisect_left
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import polars as pl

from shopgen.gen.policy import PolicyEngine
from shopgen.gen.slots import Slot
from shopgen.gen.store import CatalogStore
from shopgen.gen.switches import Switch
from shopgen.gen.taxonomy import load_taxonomy
from shopgen.schemas.errors import ConfigError
from shopgen.schemas.taxonomy import Taxonomy


class Redraw(Exception):
    """A draw that cannot make a good task (e.g. a customer without enough orders).

    The pipeline catches it and draws again from the next attempt's stream, so the task stays
    a deterministic function of (seed, env, d, k).
    """


@dataclass(frozen=True, kw_only=True)
class Draft:
    """A generated task before rendering.

    Attributes:
        slots: what the customer could say, required ones first; optional ones may be dropped.
        goal: the hidden final goal (after any scheduled switch), JSON-ready.
        episode: the hidden initial state the runtime loads (customer, history, stock), JSON-ready.
        switch: a scheduled change of intent, or None.
        facts: further things the customer knows and answers if asked (slot name → value).
    """

    slots: tuple[Slot, ...]
    goal: dict[str, Any]
    episode: dict[str, Any]
    switch: Switch | None = None
    facts: dict[str, Any] = field(default_factory=dict)


class GenContext:
    """A catalog opened for task generation; frames are loaded once and shared by every task."""

    def __init__(self, store: CatalogStore, *, seed: int) -> None:
        self.store = store
        self.seed = seed
        config = store.manifest.config
        if "today" not in config:
            raise ConfigError(f"{store.root} has no world (catalog made by an older shopgen?)")
        self.today: date = date.fromisoformat(config["today"])

    @cached_property
    def engine(self) -> PolicyEngine:
        """The store's policy engine: the very one the runtime's tools use, built once."""
        return self.store.policy_engine

    @cached_property
    def products(self) -> pl.DataFrame:
        """All products with a row number, for vectorised filtering."""
        return self.store.products.with_row_index("row")

    @cached_property
    def nouns(self) -> tuple[str, ...]:
        """Every product noun of the taxonomy (how customers name things)."""
        return tuple(sorted({n for _, cat in self.store_taxonomy.leaves() for n in cat.nouns}))

    @cached_property
    def _nouns_longest_first(self) -> tuple[str, ...]:
        return tuple(n.lower() for n in sorted(self.nouns, key=len, reverse=True))

    @cached_property
    def _title_nouns(self) -> dict[str, str | None]:
        return {}

    @cached_property
    def _order_items(self) -> dict[str, tuple[tuple[str, str | None], ...]]:
        return {}

    def order_items(self, order_id: str) -> tuple[tuple[str, str | None], ...]:
        """``(title, noun)`` of each line of an order, in line order; remembered per order.

        Orders never change, and the generators that match items across orders (returns,
        status) visit the same customers' orders again and again. Titles and nouns of all
        lines are found at once (:attr:`line_titles`, :attr:`line_nouns`): per line, a
        product look-up and a noun search cost ~25 µs; an order's slice of those ~5 µs.
        """
        memo = self._order_items
        items = memo.get(order_id)
        if items is None:
            rows = self.store.line_rows(order_id)
            at = slice(rows.start, rows.stop)
            items = tuple(zip(self.line_titles[at], self.line_nouns[at], strict=True))
            memo[order_id] = items
        return items

    @property
    def line_titles(self) -> list[str | None]:
        """Every order line's product title, row-aligned with the store's ``line_table``.

        The store's own list (``line_product_list``), which its order tools read too: one copy.
        """
        return self.store.line_product_list("title")

    @cached_property
    def line_nouns(self) -> list[str | None]:
        """:meth:`noun_in_title` of every order line's title, aligned as :attr:`line_titles`.

        Found once per distinct title (lines repeat products), so lines of one title share
        one noun object.
        """
        titles = self.line_titles
        distinct = list(dict.fromkeys(titles))
        found = nouns_in_titles(pl.Series(distinct, dtype=pl.String), self._nouns_longest_first)
        noun_of = dict(zip(distinct, found.to_list(), strict=True))
        return [noun_of[t] for t in titles]

    def noun_in_title(self, title: str) -> str | None:
        """The longest taxonomy noun a title contains, lowercased (what a customer calls it).

        Ties in length go to the noun first in :attr:`nouns` order; None when no noun fits.
        Remembered per title: generators ask about the same catalog titles again and again.
        (:func:`nouns_in_titles` is the same for many titles at once.)
        """
        memo = self._title_nouns
        if title not in memo:
            low = title.lower()
            memo[title] = next((n for n in self._nouns_longest_first if n in low), None)
        return memo[title]

    @cached_property
    def store_taxonomy(self) -> Taxonomy:
        """The taxonomy the catalog was generated from."""
        return load_taxonomy(self.store.manifest.config.get("taxonomy"))

    @cached_property
    def users(self) -> pl.DataFrame:
        """All customers."""
        return self.store.read("users")

    @cached_property
    def orders(self) -> pl.DataFrame:
        """All orders, sorted by customer then time."""
        return self.store.read("orders").sort("user_id", "placed_at")

    @cached_property
    def lines(self) -> pl.DataFrame:
        """All order lines, sorted by order."""
        return self.store.read("order_lines").sort("order_id", "line_no")

    @cached_property
    def _orders_per_user(self) -> pl.DataFrame:
        return self.orders.group_by("user_id").agg(pl.len().alias("n")).sort("user_id")

    @cached_property
    def _pools(self) -> dict[int, list[str]]:
        return {}

    def customers_with_orders(self, at_least: int) -> list[str]:
        """Customers with at least ``at_least`` orders, in id order (a stable draw pool).

        Each threshold's pool is computed once per context; callers must not mutate it.
        """
        pool = self._pools.get(at_least)
        if pool is None:
            pool = self._orders_per_user.filter(pl.col("n") >= at_least)["user_id"].to_list()
            self._pools[at_least] = pool
        return pool

    @cached_property
    def user_ids(self) -> list[str]:
        """Every customer id in table order (a stable draw pool; do not mutate)."""
        return self.users["user_id"].to_list()

    @cached_property
    def _order_keys(self) -> np.ndarray:
        return self.orders["user_id"].to_numpy().astype(str)

    @cached_property
    def _line_keys(self) -> np.ndarray:
        return self.lines["order_id"].to_numpy().astype(str)

    @cached_property
    def _user_rows(self) -> dict[str, int]:
        return {uid: i for i, uid in enumerate(self.user_ids)}

    def orders_of(self, user_id: str) -> pl.DataFrame:
        """One customer's orders, oldest first (a binary-searched slice, O(log n))."""
        return _slice(self.orders, self._order_keys, user_id)

    def lines_of(self, order_id: str) -> pl.DataFrame:
        """One order's lines (a binary-searched slice, O(log n))."""
        return _slice(self.lines, self._line_keys, order_id)

    def user(self, user_id: str) -> dict[str, Any]:
        """One customer's record with preferences decoded."""
        i = self._user_rows.get(user_id)
        if i is None:
            raise KeyError(f"no customer {user_id!r}")
        row = self.users.row(i, named=True)
        row["preferences"] = json.loads(row["preferences"])
        return row

    def now(self) -> datetime:
        """The simulated clock at the start of every episode: noon of ``today``."""
        return episode_now(self.today)

    def days_ago(self, days: int) -> str:
        """An ISO timestamp ``days`` before the simulated now."""
        return (self.now() - timedelta(days=days)).isoformat(timespec="minutes")

    @property
    def root(self) -> GenContext:
        """The context that owns the shared caches (itself; a :class:`CustomerView`'s parent).

        Per-catalog caches (category tables, search-free indexes) are keyed by ``ctx.root`` so
        that a customer view reuses them instead of rebuilding them per task.
        """
        return self

    def for_customer(self, user_id: str, *, today: date | None = None) -> CustomerView:
        """This context bound to one customer (and optionally another day); see CustomerView."""
        return CustomerView(self, user_id, today=today)


def nouns_in_titles(titles: pl.Series, nouns: tuple[str, ...]) -> pl.Series:
    """For each title, the first of ``nouns`` its lower-case form contains (null for none).

    :meth:`GenContext.noun_in_title` for a whole column: polars' Aho-Corasick search lists
    every occurrence of every noun (overlapping ones too), and the one earliest in ``nouns``
    wins, as a scan of ``nouns`` in order would find. ~2 µs a title instead of ~25 µs.
    Titles are lower-cased by Python, exactly as the scalar method does.
    """
    rank: dict[str, int] = {}
    for i, noun in enumerate(nouns):
        rank.setdefault(noun, i)
    low = pl.Series([None if t is None else t.lower() for t in titles.to_list()], dtype=pl.String)
    found = low.str.extract_many(list(rank), overlapping=True)
    first = found.list.eval(pl.element().replace_strict(rank, return_dtype=pl.Int64)).list.min()
    return pl.Series(titles.name, nouns, dtype=pl.String).gather(first)


T = TypeVar("T")
_PER_ROOT: weakref.WeakKeyDictionary[GenContext, dict[tuple[Any, ...], Any]]
_PER_ROOT = weakref.WeakKeyDictionary()


def per_root(ctx: Any, make: Callable[..., T], *args: Hashable) -> T:
    """``make(ctx.root, *args)``, made once per root context and arguments.

    For the indexes and tables a generator builds from the whole catalog: every task and every
    :class:`CustomerView` on one root shares them, and they go when the root does.
    """
    made = _PER_ROOT.setdefault(ctx.root, {})
    key = (make, *args)
    if key not in made:
        made[key] = make(ctx.root, *args)
    return made[key]


def pick(rng: np.random.Generator, options: list[Any] | tuple[Any, ...]) -> Any:
    """One element of a non-empty sequence, uniformly."""
    if not options:
        raise Redraw("nothing to pick from")
    return options[int(rng.integers(len(options)))]


# --- Oracles -------------------------------------------------------------------------------
# An oracle is a generator that plays a task the way a perfect agent would: it yields one turn
# at a time — a list of tool calls, or the final text — and receives the decoded tool results
# of each turn. It may read the hidden goal to *decide* (which shown product is the target),
# but it may only *use* what the tools and the customer showed it; replaying its messages
# through the runtime proves both (the reward's hallucination term checks the ids).

Call = tuple[str, dict[str, Any]]
OracleTurn = list[Call] | str
Oracle = Generator[OracleTurn, list[dict[str, Any]], None]


_WORD = re.compile(r"[a-z0-9]+")


def episode_now(today: date) -> datetime:
    """The simulated clock at the start of an episode on ``today``: noon.

    Shared by the generators (:meth:`GenContext.now`) and the tools that tell the agent the
    time (``user_get_visit_history``), so views dated from it read the same to both.
    """
    return datetime.combine(today, time(12, 0))


def words(text: str) -> tuple[str, ...]:
    """Lower-case alphanumeric words: the unit of search and of what an agent has been told."""
    return tuple(_WORD.findall(text.lower()))


def spoken_list(parts: list[str]) -> str:
    """Parts as a person lists them: ``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def call(name: str, **arguments: Any) -> Call:
    """One tool call of an oracle turn."""
    return (name, arguments)


#: What :func:`shown_ids` descends into (JSON's containers).
_CONTAINERS = (dict, list)


def shown_ids(results: list[dict[str, Any]], key: str = "product_id") -> list[str]:
    """Every value of ``key`` anywhere in a turn's tool results, in order of appearance.

    Oracles call this on every turn's results (20-card pages): an insertion-ordered dict
    stands for the seen set, and only containers are descended into.
    """
    found: dict[str, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key and isinstance(v, str):
                    found[v] = None
                elif isinstance(v, _CONTAINERS):
                    walk(v)
        else:
            for item in node:
                if isinstance(item, _CONTAINERS):
                    walk(item)

    if isinstance(results, _CONTAINERS):
        walk(results)
    return list(found)


def chunked(calls: list[Call], size: int) -> list[list[Call]]:
    """Calls split into turns of at most ``size`` (the B_tool budget)."""
    return [calls[i : i + size] for i in range(0, len(calls), size)]


def _slice(frame: pl.DataFrame, keys: np.ndarray, key: str) -> pl.DataFrame:
    """The rows of ``frame`` (sorted by the column ``keys`` holds) whose key is ``key``."""
    lo = int(np.searchsorted(keys, key, side="left"))
    hi = int(np.searchsorted(keys, key, side="right"))
    return frame.slice(lo, hi - lo)


class CustomerView:
    """A :class:`GenContext` seen by one customer: every draw of a customer yields them.

    A journey composes several generators in one conversation with one customer. Each
    generator keeps its signature ``generate(ctx, d, axes, rng)`` and draws its customer as it
    always does, from :attr:`user_ids` or :meth:`customers_with_orders`; on a view both hold
    only the bound customer (or nothing, when they have too few orders, which the generators
    turn into :class:`Redraw`). ``today`` may differ from the catalog's (a return fixes the
    episode's day). Everything else — frames, caches, the policy engine — is the parent's,
    read through, so a view costs nothing to make; standalone generation never sees one.
    """

    def __init__(self, root: GenContext, user_id: str, *, today: date | None = None) -> None:
        self.root = root.root
        self.customer = user_id
        self.today: date = today or root.today

    def __getattr__(self, name: str) -> Any:
        return getattr(self.root, name)

    @property
    def user_ids(self) -> list[str]:
        """The bound customer only."""
        return [self.customer]

    def customers_with_orders(self, at_least: int) -> list[str]:
        """The bound customer when they have at least ``at_least`` orders, else nobody."""
        pool = self.root.customers_with_orders(at_least)
        i = bisect_left(pool, self.customer)
        return [self.customer] if i < len(pool) and pool[i] == self.customer else []

    now = GenContext.now
    days_ago = GenContext.days_ago
