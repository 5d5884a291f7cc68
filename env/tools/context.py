"""What a tool sees: the shared catalog, this episode's state and its hidden episode data.

The episode JSON of a task row (written by the task generators) may carry, besides what other
environments add:

- ``visit_history``: ``[{"product_id", "title", "viewed_at"}]``, the customer's recent views,
  newest first, shown by ``user_get_visit_history``;
- ``stock_overrides``: ``{product_id or variant_id: units}``, stock in this episode;
- ``out_of_stock``: product or variant ids with no stock in this episode (wins over overrides).

The full list of keys, with the ones the order and return tools read (``user_id``, ``today``,
``order_ids``, ``item_condition``), is :class:`shopgen.schemas.task.EpisodeSpec`.

Only this episode's small values are copied; catalog rows are looked up on demand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from shopgen.env.state import EpisodeState
from shopgen.env.tools.registry import ToolError
from shopgen.gen.store import BoundedCache, CatalogStore
from shopgen.schemas.task import TaskRow

T = TypeVar("T")

#: Results a catalog's memo holds before it starts over (a few KB each: tens of MB at most).
MEMO_LIMIT = 8192


def stock_rules(episode: dict[str, Any]) -> tuple[dict[str, int], frozenset[str]]:
    """An episode's ``stock_overrides`` (id → units) and ``out_of_stock`` ids, as tools read them."""
    overrides = episode.get("stock_overrides") or {}
    return (
        {str(k): int(v) for k, v in overrides.items()},
        frozenset(map(str, episode.get("out_of_stock") or ())),
    )


@dataclass(slots=True)
class ToolContext:
    """One episode's view for tools.

    Attributes:
        store: the shared, read-only catalog.
        task: the task being played.
        state: this episode's mutable state.
        episode: the task's decoded episode JSON.
        search: the shared search index, or None when the catalog has none.
        stock_overrides: id → units in this episode.
        out_of_stock: ids with no stock in this episode.
        user: the simulated customer (:class:`shopgen.env.user.SimulatedUser`), or None
            until the agent first asks.
        memo: results of catalog reads, shared by every episode on the catalog (see
            :meth:`memo_read`).
    """

    store: CatalogStore
    task: TaskRow
    state: EpisodeState
    episode: dict[str, Any]
    search: Any = None
    stock_overrides: dict[str, int] = field(default_factory=dict)
    out_of_stock: frozenset[str] = frozenset()
    user: Any = None  # the episode's SimulatedUser, made on the first ask_user (issue #6)
    memo: BoundedCache = field(default_factory=lambda: BoundedCache(MEMO_LIMIT))

    @classmethod
    def create(
        cls,
        store: CatalogStore,
        task: TaskRow,
        episode: dict[str, Any],
        search: Any,
        memo: BoundedCache | None = None,
        stock: tuple[dict[str, int], frozenset[str]] | None = None,
    ) -> ToolContext:
        """A context with the episode's stock rules read once, on the catalog's ``memo``.

        ``memo`` is the catalog's shared memo of read results (a fresh one when None);
        ``stock`` is :func:`stock_rules` of ``episode`` when the caller keeps it (the
        runtime reads it once per task row; tools never change it).
        """
        overrides, out_of_stock = stock_rules(episode) if stock is None else stock
        return cls(
            store=store,
            task=task,
            state=EpisodeState(),
            episode=episode,
            search=search,
            stock_overrides=overrides,
            out_of_stock=out_of_stock,
            memo=BoundedCache(MEMO_LIMIT) if memo is None else memo,
        )

    def memo_read(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        """A tool result (mostly its encoded text), remembered across episodes under ``key``.

        ``key`` must determine the result: the tool's name, the catalog ids it reads and the
        episode state the result shows (the stock of each product, for catalog reads; the
        started returns, for order details). Remembering the
        encoded text spares a replay, and every later episode that reads the same product,
        both building and encoding the result (issue #7's throughput).
        """
        return self.memo.remember(key, make)

    def product(self, product_id: str) -> dict[str, Any]:
        """A product record, or ToolError ``not_found`` (which says so when it is a variant id)."""
        record = self.store.product(product_id)
        if record is not None:
            return record
        variant = self.store.variant(product_id)
        if variant is not None:
            raise ToolError(
                f"{product_id} is a variant_id, not a product_id; its product_id is {variant['product_id']}",
                "not_found",
            )
        raise ToolError(f"no product with product_id {product_id!r}", "not_found")

    def product_stock(self, product_id: str, row: int) -> int:
        """:meth:`stock` of the product at catalog ``row`` (its id's row), without its record.

        Tools that need a product's stock and a few facts skip the record: the catalog's
        units come from the store's column (tested equal to ``stock(product(product_id))``).
        """
        column = self.store.product_array("stock_qty")
        return self._units(product_id, product_id, lambda: column[row])

    def stock(self, product: dict[str, Any], variant: dict[str, Any] | None = None) -> int:
        """Units available in this episode for a product, or for one of its variants."""
        key = variant["variant_id"] if variant is not None else product["product_id"]
        return self._units(product["product_id"], key, lambda: (variant or product)["stock_qty"])

    def _units(self, product_id: str, key: str, catalog: Callable[[], Any]) -> int:
        """The episode's stock rules for ``key`` (a product or variant id of ``product_id``).

        Out of stock when the product or ``key`` is marked so, else ``key``'s override, else
        the catalog's units (``catalog()``, read only then).
        """
        if product_id in self.out_of_stock or key in self.out_of_stock:
            return 0
        if key in self.stock_overrides:
            return self.stock_overrides[key]
        return int(catalog())
