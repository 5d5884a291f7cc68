"""Conformance checks for environments, usable by third parties (STYLE §7, Gymnasium's check_env).

:func:`check_env` generates tasks of one environment and asserts what every shopgen environment
promises: rows round-trip through the task schema, the same key gives the same task in any
batch, the oracle replays to the maximum reward, hidden answer ids never appear in what the
agent is told, the oracle passes only ids and search words it was told or shown
(:func:`untold_arguments`), and the degenerate policies below are never correct and score
≤ 0 on average.

The degenerate policies are the cheats the closest public peer fell for: doing nothing,
answering in one turn, made-up ids, recommending every search hit, adding everything seen to
the cart, claiming every status, asking the customer forever; and the red-team's (issue #7):
one shown id recommended k times (or padded with NULs to look like k ids), a blind answer
hedged over every status, date and carrier, and a refusal naming every reason a return can
be refused for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from shopgen.env.episode import ShopEnv
from shopgen.env.verifier import Score
from shopgen.gen.noise import SHORTHAND
from shopgen.gen.tasks.base import Oracle, call, chunked, shown_ids, words
from shopgen.gen.tasks.constraints import UTILITY_DIGITS, UTILITY_FLOOR
from shopgen.schemas.tables import TASKS
from shopgen.schemas.task import TaskRow
from shopgen.taskgen import TaskFactory, assistant_message, decode_result
from shopgen.verifiers.replay import play
from shopgen.verifiers.reward import MAX_REWARD

Policy = Callable[[TaskRow], Oracle]
_FAKE_IDS = ["B0FAKE0001", "B0FAKE0002", "B0FAKE0003"]


def _offered(task: TaskRow) -> set[str]:
    return {t["function"]["name"] for t in task.decoded("tools")}


def _first_user_text(task: TaskRow) -> str:
    return next(m.content for m in task.messages if m.role == "user")


def do_nothing(task: TaskRow) -> Oracle:
    """End the conversation at once, saying nothing."""
    yield ""


def one_turn_answer(task: TaskRow) -> Oracle:
    """Claim success without doing anything."""
    yield "All done! I've taken care of everything you asked for."


def made_up_ids(task: TaskRow) -> Oracle:
    """Use product ids no tool ever showed."""
    tools = _offered(task)
    calls = []
    if "recommend_products" in tools:
        calls.append(call("recommend_products", product_ids=_FAKE_IDS))
    if "cart_add" in tools:
        calls.append(call("cart_add", product_id=_FAKE_IDS[0], quantity=1))
    if calls:
        yield calls[: task.axis("B_tool")]
    yield f"I recommend {', '.join(_FAKE_IDS)}."


def recommend_every_hit(task: TaskRow) -> Oracle:
    """Search with the customer's words and recommend everything shown."""
    if "catalog_search" not in _offered(task):
        yield "Here is everything we have."
        return
    results = yield [call("catalog_search", query=_first_user_text(task)[:200])]
    ids = shown_ids(results)
    if ids and "recommend_products" in _offered(task):
        yield [call("recommend_products", product_ids=ids)]
    yield "Here is everything I found."


def recommend_top_hits(task: TaskRow) -> Oracle:
    """Search with the customer's words and recommend the first three in-stock hits.

    Asking nothing: a lazy agent's list, which search relevance alone makes partly right.
    """
    tools = _offered(task)
    if "catalog_search" not in tools or "recommend_products" not in tools:
        yield "Here are our top matches."
        return
    results = yield [call("catalog_search", query=_first_user_text(task)[:200])]
    in_stock = [
        card["product_id"]
        for result in results
        for card in result.get("results") or ()
        if card.get("stock_qty", 0) > 0
    ]
    if in_stock:
        yield [call("recommend_products", product_ids=list(dict.fromkeys(in_stock))[:3])]
    yield "Here are our top matches."


def add_everything_seen(task: TaskRow) -> Oracle:
    """Put every product any tool showed into the cart, as many per turn as the budget allows."""
    tools = _offered(task)
    seen: list[str] = []
    first = [
        c
        for c in (
            call("catalog_search", query=_first_user_text(task)[:200]),
            call("user_get_visit_history"),
        )
        if c[0] in tools
    ]
    if first:
        seen = shown_ids((yield first[: task.axis("B_tool")]))
    if "cart_add" in tools:
        adds = [call("cart_add", product_id=pid, quantity=1) for pid in seen]
        # Not `yield from`: the runner send()s results, which a list iterator cannot take.
        for turn in chunked(adds, task.axis("B_tool")):  # noqa: UP028
            yield turn
    yield "I added everything I could find to your cart."


def answer_every_status(task: TaskRow) -> Oracle:
    """Claim every status, date and yes/no at once."""
    yield (
        "Your order is placed, is processing, has shipped, is in transit, was delivered and was "
        "cancelled. It arrives on January 5, February 10, March 15, April 20 and May 25. "
        "Yes and no: it costs $0, $5, $10, $25 and $100, within 7, 14, 30, 60 or 90 days."
    )


def ask_forever(task: TaskRow) -> Oracle:
    """Ask the customer a question every turn and never act."""
    if "ask_user" not in _offered(task):
        yield "Could you tell me more?"
        return
    while True:
        yield [call("ask_user", question="Could you tell me more about what you need?")]


def _one_id_k_times(task: TaskRow, copy: Callable[[str, int], str]) -> Oracle:
    """Search once, then recommend ``copy(first hit, i)`` for i in 0..k-1."""
    tools = _offered(task)
    if "catalog_search" not in tools or "recommend_products" not in tools:
        yield "Here is the one product you need."
        return
    ids = shown_ids((yield [call("catalog_search", query=_first_user_text(task)[:200])]))
    if ids:
        k = max(2, task.axis("k_rec"))
        yield [call("recommend_products", product_ids=[copy(ids[0], i) for i in range(k)])]
    yield f"I recommend {ids[0] if ids else 'this'}, several times over."


def repeat_one_id(task: TaskRow) -> Oracle:
    """Recommend one shown product k times: duplicates must not count as k recommendations."""
    return _one_id_k_times(task, lambda product_id, _: product_id)


def pad_one_id(task: TaskRow) -> Oracle:
    r"""Recommend one shown product k times, each copy padded with more NULs to look distinct.

    A fixed-width id array compares ``"ID"`` and ``"ID\0"`` equal; a padded copy must be an
    unknown id, not a second name for the product (nor one that dodges its stock).
    """
    return _one_id_k_times(task, lambda product_id, i: product_id + "\0" * i)


#: Every date from January to June, as a blind status answer would list them.
_EVERY_DATE = ", ".join(
    f"{month} {day}"
    for month in ("January", "February", "March", "April", "May", "June")
    for day in range(1, 29)
)


def hedge_everything(task: TaskRow) -> Oracle:
    """Look nothing up; hedge over every status, list every date, name every carrier.

    Probes the status verifier: alternatives ("…, or delivered") contradict, a list of dates
    states no date, several carriers state none, an answer not looked up earns nothing.
    """
    yield (
        "Your order has shipped, or is in transit, or was delivered, or is processing, or was "
        f"placed, or was cancelled. It arrives or arrived on one of {_EVERY_DATE}. The carrier "
        "is UPS, USPS, FedEx or OnTrac. Yes, or no, depending on the case."
    )


#: A refusal naming every reason a return can be refused for.
_EVERY_REFUSAL = (
    "Sorry, this item is not eligible for a return or an exchange: the return window has "
    "expired, it was a final sale, it is perishable, it is personalised and it is a hygiene item."
)


def refuse_every_reason(task: TaskRow) -> Oracle:
    """Check the first listed order line, then refuse naming every refusal reason at once.

    Probes the returns verifier: the reason given must be the one reason, not a list of all.
    """
    tools = _offered(task)
    if "orders_list" in tools and "return_check_eligibility" in tools:
        results = yield [call("orders_list")]
        orders = next((r["orders"] for r in results if isinstance(r, dict) and "orders" in r), [])
        lines = [(o["order_id"], i["product_id"]) for o in orders for i in o.get("items", [])]
        if lines:
            checks = [
                call("return_check_eligibility", order_id=oid, product_id=pid) for oid, pid in lines
            ]
            yield checks[: task.axis("B_tool")]
    yield _EVERY_REFUSAL


DEGENERATE: dict[str, Policy] = {
    "do_nothing": do_nothing,
    "one_turn_answer": one_turn_answer,
    "made_up_ids": made_up_ids,
    "recommend_every_hit": recommend_every_hit,
    "recommend_top_hits": recommend_top_hits,
    "add_everything_seen": add_everything_seen,
    "answer_every_status": answer_every_status,
    "ask_forever": ask_forever,
    "repeat_one_id": repeat_one_id,
    "pad_one_id": pad_one_id,
    "hedge_everything": hedge_everything,
    "refuse_every_reason": refuse_every_reason,
}


# --- reading a stated preference as an agent must -----------------------------------------

#: Strength word → weight, as the discovery and substitution system prompts define them.
_STRENGTHS = {"very much": 4.0, "quite a lot": 2.0, "a little": 1.0, "not at all": 0.0}
_PART = re.compile(
    r"^(a low price|a high rating|fast delivery|the brand|my favourite brands (?:.*))"
    r" \((very much|quite a lot|a little|not at all)(?:: (.*))?\)$"
)
_IDEAL_WORST = re.compile(
    r"^\$?([\d.]+)(?: stars?| days?)? is ideal, \$?([\d.]+)(?: stars?| days?)? the worst$"
)


def stated_utility(statement: str, card: dict[str, Any]) -> float:
    """A product's utility computed from the customer's statement and its card alone.

    An agent's reading of ``Preference.statement`` by the system prompt's rule (each factor
    0 at the worst value named, 1 at the ideal, linear; a favourite brand 1; weights 4, 2, 1,
    0), mapped to the goal's scale (``UTILITY_FLOOR`` + the rest × share of the total weight)
    and rounded as goals store utilities. Written independently of ``Preference`` so a test
    can hold the two equal: the statement names everything the verifier's utility uses.

    Raises:
        ValueError: a part of the statement this reading does not understand.
    """
    total = score = 0.0
    for part in statement.split(", then "):
        m = _PART.match(part)
        if m is None:
            raise ValueError(f"not a stated factor: {part!r}")
        factor, strength, anchors = m.groups()
        weight = _STRENGTHS[strength]
        total += weight
        if weight == 0:
            continue
        if factor == "the brand" or factor.startswith("my favourite brands"):
            value = float(card["brand"] in re.findall(r'"([^"]*)"', factor))  # none named: 0
        else:
            a = _IDEAL_WORST.match(anchors or "")
            if a is None:
                raise ValueError(f"no ideal and worst values in {part!r}")
            ideal, worst = float(a.group(1)), float(a.group(2))
            x = {"a low price": "price", "a high rating": "rating", "fast delivery": "ship_days"}
            at = float(card[x[factor]])
            value = (worst - at) / (worst - ideal) if worst != ideal else 0.0
        score += weight * value
    share = score / total if total else 0.0
    return round(UTILITY_FLOOR + (1.0 - UTILITY_FLOOR) * share, UTILITY_DIGITS)


# --- ranking cheats: the right products, the customer's preference ignored ------------------


def _oracle_turns(task: TaskRow) -> tuple[list[list[Any]], str]:
    """The oracle's tool-call turns (``(name, arguments)`` lists) and its closing text."""
    turns, final = [], ""
    for m in json.loads(task.oracle):
        if m.get("tool_calls"):
            turns.append(
                [
                    (c["function"]["name"], json.loads(c["function"]["arguments"]))
                    for c in m["tool_calls"]
                ]
            )
        elif m.get("role") == "assistant":
            final = m.get("content") or ""
    return turns, final


def seen_feasible_policy(arrange: Callable[[list[str], dict[str, float]], list[str]]) -> Policy:
    """A cheat that searches as the oracle does and knows which shown products are feasible.

    It recommends k of them in the order ``arrange(shown feasible ids, id → utility)`` gives:
    the strongest ranking-blind agent: it gets every hard constraint right (it reads the
    goal's stored feasible in-stock list), so only the order it ignores can fail it. For
    discovery and substitution goals (``goal["feasible"]``).
    """

    def policy(task: TaskRow) -> Oracle:
        goal = task.decoded("goal")
        utilities = {pid: u for pid, u, *_ in goal["feasible"]}
        turns, final = _oracle_turns(task)
        seen: dict[str, None] = {}
        for turn in turns:
            calls = [c for c in turn if c[0] != "recommend_products"]
            if calls:
                seen.update(dict.fromkeys(shown_ids((yield calls))))
        picks = arrange([p for p in seen if p in utilities], utilities)[: int(goal["k_rec"])]
        if picks:
            yield [call("recommend_products", product_ids=picks)]
        yield final

    return policy


#: Feasible shown products, lowest utility first: the preference read backwards.
worst_first = seen_feasible_policy(lambda ids, u: sorted(ids, key=lambda p: (u[p], p)))
#: Feasible shown products in the order the searches showed them: the preference ignored.
search_order = seen_feasible_policy(lambda ids, u: ids)


def run_policy(env: ShopEnv, task: TaskRow, policy: Policy) -> Score | None:
    """Play a policy (same protocol as an oracle) to the end of the episode; return the score.

    The policy is sent each turn's decoded tool results, as an oracle is: a cheat that reads
    what the tools showed (every search hit, every order line) must see them to be tested.
    """
    env.reset(task)
    turns = policy(task)
    action = next(turns)
    info: dict[str, Any] = {}
    turn = 0
    while True:
        turn += 1
        observation, done, _, info = env.step(assistant_message(turn, action))
        if done or isinstance(action, str):
            break
        try:
            action = turns.send([decode_result(m) for m in observation.get("messages", [])])
        except StopIteration:
            _, _, _, info = env.step({"role": "assistant", "content": ""})
            break
    score = info.get("score")
    return Score(**score) if score else None


def scored_with_final(env: ShopEnv, row: TaskRow, text: str) -> tuple[Score | None, Score | None]:
    """The row's oracle replayed with ``text`` as its final message, and the oracle itself.

    For checking that an honest phrasing of the answer is graded as the oracle's is (a
    verifier must not mark a true answer wrong for its wording).
    """
    messages = json.loads(row.oracle)
    oracle, _ = play(env, row, messages)
    score, _ = play(env, row, [*messages[:-1], {"role": "assistant", "content": text}])
    return score, oracle


class CheckFailure(AssertionError):
    """An environment broke one of the promises :func:`check_env` checks."""


@dataclass
class CheckReport:
    """What :func:`check_env` measured."""

    env: str
    tasks: int = 0
    degenerate_mean_reward: dict[str, float] = field(default_factory=dict)


def check_env(
    name: str, env: ShopEnv, *, ds: tuple[int, ...] = (0, 4, 8, 12), n: int = 3, seed: int = 0
) -> CheckReport:
    """Generate ``n`` tasks per level of environment ``name`` and check every promise.

    Raises:
        CheckFailure: naming the first broken promise.
    """
    factory = TaskFactory(env, seed=seed)
    report = CheckReport(env=name)
    rows = [g.row for g in factory.batch([name], list(ds), n)]
    report.tasks = len(rows)
    _check_schema(rows)
    _check_determinism(env, name, rows, seed)
    rewards: dict[str, list[float]] = {k: [] for k in DEGENERATE}
    for row in rows:
        _check_oracle(env, row)
        _check_no_leak(row)
        for label, policy in DEGENERATE.items():
            score = run_policy(env, row, policy)
            if score is None:
                raise CheckFailure(f"{name}: no verifier registered")
            if score.is_correct:
                raise CheckFailure(
                    f"{name} task {row.task_id}: degenerate policy {label!r} is correct"
                )
            if not -1.0 <= score.reward <= 1.0:
                raise CheckFailure(f"{name}: reward {score.reward} outside [-1, 1]")
            rewards[label].append(score.reward)
    for g in TaskFactory(env, seed=seed, overrides={"p_noise": 0.0}).batch([name], list(ds), n):
        for tool, argument, untold in untold_arguments(env, g.row):
            raise CheckFailure(
                f"{name} task {g.row.task_id}: the oracle passed {tool}({argument}=…) "
                f"{untold!r}, which neither the customer nor a tool had given it"
            )
    for label, values in rewards.items():
        mean = sum(values) / len(values)
        report.degenerate_mean_reward[label] = round(mean, 4)
        if mean > 0:
            raise CheckFailure(
                f"{name}: degenerate policy {label!r} averages reward {mean:.3f} > 0"
            )
    return report


def _check_schema(rows: list[TaskRow]) -> None:
    table = pa.Table.from_pylist([r.to_row() for r in rows], schema=TASKS)
    back = [TaskRow.from_row(r) for r in table.to_pylist()]
    if back != rows:
        raise CheckFailure("task rows do not survive a round trip through the Parquet schema")


def _check_determinism(env: ShopEnv, name: str, rows: list[TaskRow], seed: int) -> None:
    again = TaskFactory(env, seed=seed).make(name, rows[-1].d, _index_of_last(rows))
    if again.row != rows[-1]:
        raise CheckFailure(f"{name}: the same key gave a different task in a different batch")


def _index_of_last(rows: list[TaskRow]) -> int:
    last_d = rows[-1].d
    return sum(r.d == last_d for r in rows) - 1


def _check_oracle(env: ShopEnv, row: TaskRow) -> None:
    score, _ = play(env, row, json.loads(row.oracle))
    if score is None or not score.is_correct or abs(score.reward - MAX_REWARD) > 1e-9:
        raise CheckFailure(
            f"{row.env} task {row.task_id}: oracle replay is not correct at the maximum reward"
        )


#: Words a customer may have said as chat shorthand ("w/", "4"): an agent reads them through.
_SHORTHAND_WORDS = frozenset(w for phrase in SHORTHAND for w in words(phrase))


def untold_arguments(env: ShopEnv, row: TaskRow) -> list[tuple[str, str, Any]]:
    """The oracle's tool arguments the agent had not been told or shown when it used them.

    An oracle decides with the hidden goal, but a perfect agent has only what the customer
    and the tools gave it (issue #7), so every id it passes (``*_id``, ``*_ids``) must have
    appeared in a customer message or a tool result before, and every word of a search must
    be a word of one (or one a customer may have said as chat shorthand). Typo noise is not
    read through here: check tasks made with ``p_noise = 0``.

    Returns:
        ``(tool, argument, what was untold)`` for each offence, in order: the id, or a
        search's unseen words.
    """
    play(env, row, json.loads(row.oracle))
    told = ""
    told_words = set(_SHORTHAND_WORDS)
    found: list[tuple[str, str, Any]] = []
    for message in env.transcript:
        if message["role"] == "assistant":
            for tool_call in message.get("tool_calls") or []:
                name = tool_call["function"]["name"]
                arguments = json.loads(tool_call["function"]["arguments"])
                for key, value in arguments.items():
                    if key == "query" and name == "catalog_search":
                        unseen = [w for w in words(str(value)) if w not in told_words]
                        if unseen:
                            found.append((name, key, unseen))
                    elif key.endswith(("_id", "_ids")):
                        ids = value if isinstance(value, list) else [value]
                        found += [(name, key, v) for v in ids if v and str(v) not in told]
        elif message["role"] in ("user", "tool"):
            content = message.get("content") or ""
            told += "\n" + content
            told_words.update(words(content))
    return found


def _check_no_leak(row: TaskRow) -> None:
    hidden = set(row.decoded("user_script").get("never_say", []))
    for message in row.messages:
        for secret in hidden:
            if secret and secret in message.content:
                raise CheckFailure(
                    f"{row.env} task {row.task_id}: the opening reveals hidden id {secret}"
                )


def check_recommend_switch(env: ShopEnv, row: TaskRow) -> tuple[str, Any, dict[str, Any]]:
    """Assert a discovery/substitution change of mind is the goal's final intent.

    The switch changes a said value; the goal's constraint holds the new one; the oracle is
    correct and recommends only after the customer said the change.

    Returns:
        ``(slot name, new value, goal)`` for checks against the catalog.
    """
    script, goal = row.decoded("user_script"), row.decoded("goal")
    name, value = script["switch"]["changes"][0]
    assert {s["name"]: s["value"] for s in script["slots"]}[name] != value
    c = goal["constraints"]
    assert (c["price_max"] if name == "price_max" else c["attrs"][name[len("attrs.") :]]) == value
    score, state = play(env, row, json.loads(row.oracle))
    assert score is not None
    assert score.is_correct
    recs = [t for t, tool, _ in state.tool_calls if tool == "recommend_products"]
    assert recs
    assert min(recs) > script["switch"]["turn"]
    return name, value, goal
