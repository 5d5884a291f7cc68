"""The names of the twelve difficulty axes θ(d) (DESIGN §5), in table order.

The formulas live in ``shopgen.gen.difficulty``; the names live here, at the bottom of the
import order, so the registry and the task table's schema use the same list.
"""

AXES: tuple[str, ...] = (
    "m",
    "k_rec",
    "T_max",
    "p_missing",
    "p_noise",
    "p_switch",
    "top_k",
    "eps_rank",
    "p_oos",
    "H_orders",
    "B_branch",
    "B_tool",
)

#: Axes that are probabilities; the others are counts.
RATE_AXES: frozenset[str] = frozenset({"p_missing", "p_noise", "p_switch", "eps_rank", "p_oos"})
