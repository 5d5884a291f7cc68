"""Heuristic agent for ``journey``: handle order checks and policy questions it recognises.

Deliberately shallow: a multi-request conversation needs planning a rule-based agent does
not have, so it answers the parts it can (order status, policy lookups) and stops.
"""

from __future__ import annotations

from shopgen.gen.tasks.base import Oracle, call
from shopgen.policies.base import PublicTask
from shopgen.policies.heuristic.orders import find_order
from shopgen.policies.heuristic.policy import answer_found
from shopgen.policies.heuristic.status import describe


def heuristic(task: PublicTask) -> Oracle:
    """Play a journey task from the public view only."""
    text = task.user.lower()
    parts = []
    if "order" in text:
        order = yield from find_order(task.user)
        if order is not None:
            parts.append(describe(order))
    if any(w in text for w in ("ask", "policy", "discount", "warranty", "fee", "how long")):
        found = yield [call("policy_search", query=task.user[:200])]
        parts.append(answer_found(found, task.user))
    yield "\n\n".join(parts) or "Sorry, I could not handle that."
