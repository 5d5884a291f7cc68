"""``ShopEnv``: play one task — reset to its opening, step through assistant messages.

Rules of play (DESIGN §8, issue #6 §3):

- each ``step`` is one assistant turn; at most ``B_tool`` tool-call items per turn are run, each
  further item gets an ``over_budget`` error result (never silence);
- the episode ends at the first assistant message with no tool call, or after ``T_max`` turns
  (the tool results of that last turn are still returned);
- every bad call becomes an error result the agent can read; nothing an agent writes makes
  ``step`` raise. Misuse by the caller does: ``step`` before ``reset`` or after ``done``
  (:class:`EpisodeError`), or a task row that is invalid or from another catalog
  (:class:`TaskError`).

The catalog (and its search index) is opened once and shared read-only by every env made with
:meth:`ShopEnv.spawn` or built on the same :class:`CatalogStore`; an episode holds only its small
:class:`~shopgen.env.state.EpisodeState`, so ``reset`` is O(1) in catalog size.

The final ``step`` returns the verifier's :class:`~shopgen.env.verifier.Score` in ``info`` when the
task's environment has one registered (``reward`` is its reward). Without a verifier the final
reward is ``None`` and ``info["state"]`` carries the raw state summary; intermediate steps
return reward ``0.0`` (rewards are terminal).

>>> # env = ShopEnv("data/catalog"); obs = env.reset(row); obs, done, reward, info = env.step(msg)
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from shopgen.env.parsing import ParseIssue, parse_shared
from shopgen.env.search_cache import CachedSearch
from shopgen.env.state import EpisodeState, ErrorRecord
from shopgen.env.tools import REGISTRY, ToolContext, ToolError, invoke
from shopgen.env.tools.context import MEMO_LIMIT, stock_rules
from shopgen.env.tools.dialogue import customer
from shopgen.env.tools.registry import error_result
from shopgen.env.user import compile_script
from shopgen.env.verifier import Score, get_verifier
from shopgen.gen.row_checks import (
    PLAY_AXES,
    SEARCH_AXES,
    episode_problem,
    first_error,
    theta_problem,
    user_script_problem,
)
from shopgen.gen.store import BoundedCache, CatalogStore
from shopgen.schemas.errors import ConfigError, DatasetError, ShopgenError
from shopgen.schemas.task import TaskRow

#: Distinct tool lists remembered per catalog (tasks of one environment share one list).
_TOOLS_CACHE_LIMIT = 256
#: Validated task rows remembered per catalog (by object identity; see ``_Shared.prepare``).
_PREPARED_LIMIT = 4096
#: Distinct episode texts whose decoding and stock rules are remembered (``_episode_rules``).
_EPISODE_TEXTS_LIMIT = 4096
#: A word that may be a catalog id; :func:`_said_ids` keeps those the catalog holds.
_ID_WORD = re.compile(r"\b[A-Z0-9]{8,12}\b")


class EpisodeError(ShopgenError, RuntimeError):
    """``step`` was called before ``reset`` or after the episode ended."""


class TaskError(DatasetError):
    """A task row cannot be played here: invalid, or drawn from another catalog."""


class _Shared:
    """What every env on one catalog shares: store, index, tool lists, rows, catalog reads.

    The index is wrapped in a :class:`CachedSearch`, so a search an episode repeats — the
    replay of a generated task, a trainer's next epoch — is answered from memory.
    """

    __slots__ = ("memo", "prepared", "search", "search_opened", "store", "tools")

    def __init__(self, store: CatalogStore, search: Any) -> None:
        self.store = store
        self.search = CachedSearch(search) if search is not None else None
        self.search_opened = search is not None
        self.tools: dict[str, tuple[list[dict[str, Any]], frozenset[str]]] = {}
        self.prepared: dict[int, tuple[Any, tuple[Any, ...], _Prepared]] = {}
        self.memo = BoundedCache(MEMO_LIMIT)  # catalog reads' results (ToolContext.memo_read)

    def prepare(self, task: dict[str, Any] | TaskRow) -> _Prepared:
        """:func:`_prepare` once per task object: a trainer resets the same rows many times.

        The cache holds the row object itself and the identities of its values, so a hit needs
        the very same, unmodified object (an ``id`` cannot be reused while the row is held,
        and a value replaced in place misses).
        """
        key = id(task)
        hit = self.prepared.get(key)
        values = tuple(task.values()) if isinstance(task, dict) else ()
        if (
            hit is not None
            and hit[0] is task
            and len(hit[1]) == len(values)
            and all(a is b for a, b in zip(hit[1], values, strict=True))
        ):
            return hit[2]
        result = _prepare(task, self.store)
        if len(self.prepared) >= _PREPARED_LIMIT:
            self.prepared.clear()
        self.prepared[key] = (task, values, result)
        return result

    def search_index(self) -> Any:
        """The catalog's search index, opened on first need; None when it has none."""
        if not self.search_opened:
            self.search_opened = True
            from shopgen.env.search import SearchIndex  # heavy imports only when searching

            try:
                self.search = CachedSearch(SearchIndex.open(self.store.root, store=self.store))
            except DatasetError:
                self.search = None
        return self.search

    def offered(self, tools_json: str) -> tuple[list[dict[str, Any]], frozenset[str]]:
        """A row's tool schemas and their names, parsed once per distinct list."""
        hit = self.tools.get(tools_json)
        if hit is not None:
            return hit
        try:
            schemas = json.loads(tools_json)
            names = [s["function"]["name"] for s in schemas]
        except (json.JSONDecodeError, TypeError, KeyError) as exc:
            raise TaskError(
                f"task row tools is not a list of OpenAI function schemas ({exc})"
            ) from None
        unknown = [n for n in names if n not in REGISTRY]
        if unknown:
            raise TaskError(
                f"task row offers tool {unknown[0]!r}, which this runtime does not have"
            )
        if len(self.tools) >= _TOOLS_CACHE_LIMIT:
            self.tools.clear()
        entry = (schemas, frozenset(names))
        self.tools[tools_json] = entry
        return entry


class _Prepared(NamedTuple):
    """What ``reset`` needs of a task row, read once per row (see ``_Shared.prepare``)."""

    row: TaskRow
    episode: dict[str, Any]  # decoded; read, never changed
    messages: list[dict[str, Any]]  # the opening messages (copied for each episode)
    limits: tuple[int, int]  # (B_tool, T_max)
    stock: tuple[dict[str, int], frozenset[str]]  # stock_rules(episode); read, never changed
    switch: bool  # the user script schedules a switch (see _switch_scheduled)
    said_ids: tuple[str, ...]  # catalog ids the opening messages name (see _said_ids)


def _prepare(task: dict[str, Any] | TaskRow, store: CatalogStore) -> _Prepared:
    """Validate a row for ``store``: the task, its decoded episode, opening messages and rules.

    Raises:
        TaskError: see :meth:`ShopEnv.reset`.
    """
    try:
        row = TaskRow.from_row(task)
    except ValidationError as exc:
        raise TaskError(f"invalid task row: {first_error(exc)}") from None
    if row.catalog_id != store.catalog_id:
        raise TaskError(
            f"task {row.task_id} was drawn from catalog {row.catalog_id}, "
            f"but this env serves catalog {store.catalog_id}"
        )
    _check_axes(row, PLAY_AXES)
    try:
        episode, stock = _episode_rules(row.episode)
    except json.JSONDecodeError as exc:
        raise TaskError(f"task {row.task_id}: episode is not JSON ({exc.msg})") from None
    except RecursionError:
        raise TaskError(f"task {row.task_id}: episode is nested too deep") from None
    except ConfigError as exc:
        raise TaskError(f"task {row.task_id}: {exc}") from None
    problem = user_script_problem(row.user_script)
    if problem is not None:
        raise TaskError(f"task {row.task_id}: {problem}")
    messages = [{"role": m.role, "content": m.content} for m in row.messages]  # model_dump
    return _Prepared(
        row,
        episode,
        messages,
        (row.axis("B_tool"), row.axis("T_max")),
        stock,
        _switch_scheduled(row.user_script),
        _said_ids(messages, store),
    )


def _said_ids(messages: list[dict[str, Any]], store: CatalogStore) -> tuple[str, ...]:
    """The catalog product ids the customer's opening messages name: shown, as tool results are.

    A substitution customer says "(item B02VNNMGUS)"; an agent that looked it up with
    ``catalog_get_product`` was charged a hallucinated id (r_hall < 0, never correct), though
    the id came from the customer, not from the agent's guess (``EpisodeState.shown_ids``).
    """
    return tuple(
        w
        for m in messages
        if m["role"] == "user"
        for w in _ID_WORD.findall(m["content"] or "")
        if store.product_row(w) >= 0
    )


def _check_axes(row: TaskRow, axes: tuple[str, ...]) -> None:
    """Raise :class:`TaskError` when a θ axis of ``axes`` is missing or out of range."""
    problem = theta_problem(row.theta, axes)
    if problem is not None:
        raise TaskError(f"task {row.task_id}: {problem}")


@lru_cache(maxsize=_EPISODE_TEXTS_LIMIT)
def _episode_rules(text: str) -> tuple[Any, Any]:
    """An episode's JSON decoded and its :func:`stock_rules`.

    Remembered per distinct text, and shared read-only as :class:`_Prepared` values are: the
    task pipeline resets two rows per task that differ only in goal and oracle (its live run
    and the proof's replay), and decoded the same episode text for each.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        RecursionError: it is nested deeper than the interpreter's recursion limit.
        ConfigError: the decoded value is no valid episode
            (:func:`~shopgen.gen.row_checks.episode_problem` says why).
    """
    episode = json.loads(text)
    problem = episode_problem(episode)
    if problem is not None:
        raise ConfigError(problem)
    return episode, stock_rules(episode)


class ShopEnv:
    """One playable episode at a time over a shared catalog.

    Args:
        catalog: a :class:`CatalogStore` (shared as is) or the path of a catalog dataset.
        search: a ``SearchIndex`` to use, or None to open the catalog's own index on the
            first task that offers ``catalog_search`` (tasks get an ``unavailable`` error
            result when the catalog has no index).
        score: False plays without the verifier (final reward None, as for an environment
            without one): for exploring hand-made tasks that have no hidden goal.
    """

    __slots__ = (
        "_ctx",
        "_limits",
        "_offered",
        "_score",
        "_shared",
        "_switch",
        "_tools",
        "transcript",
    )

    def __init__(
        self, catalog: CatalogStore | str | Path, *, search: Any = None, score: bool = True
    ) -> None:
        store = catalog if isinstance(catalog, CatalogStore) else CatalogStore(catalog)
        self._shared = _Shared(store, search)
        self._score = score
        self._ctx: ToolContext | None = None
        self._limits = (0, 0)  # the task's (B_tool, T_max), read once per reset
        self._switch = False  # whether the task's customer has a switch scheduled
        self._offered: frozenset[str] = frozenset()
        self._tools: list[dict[str, Any]] = []
        self.transcript: list[dict[str, Any]] = []

    def spawn(self, *, score: bool | None = None) -> ShopEnv:
        """A new env on the same catalog and index (for running episodes side by side).

        Args:
            score: whether it runs the verifier (default: as this env does).
        """
        env = ShopEnv.__new__(ShopEnv)
        env._shared = self._shared
        env._score = self._score if score is None else score
        env._ctx = None
        env._limits = (0, 0)
        env._switch = False
        env._offered = frozenset()
        env._tools = []
        env.transcript = []
        return env

    @property
    def store(self) -> CatalogStore:
        """The shared catalog."""
        return self._shared.store

    @property
    def state(self) -> EpisodeState:
        """The current episode's state (after ``reset``)."""
        return self._require_ctx().state

    @property
    def task(self) -> TaskRow:
        """The task being played (after ``reset``)."""
        return self._require_ctx().task

    @property
    def done(self) -> bool:
        """Whether the current episode has ended (False before ``reset``)."""
        return self._ctx is not None and self._ctx.state.done

    def reset(self, task: dict[str, Any] | TaskRow) -> dict[str, Any]:
        """Start playing ``task``; returns ``{"messages": [system, user], "tools": [...]}``.

        Raises:
            TaskError: the row is invalid, offers unknown tools, lacks ``T_max``/``B_tool``,
                or names another catalog.
        """
        shared = self._shared
        row, episode, messages, self._limits, stock, self._switch, said = shared.prepare(task)
        self._tools, self._offered = shared.offered(row.tools)
        search = None
        if "catalog_search" in self._offered:
            _check_axes(row, SEARCH_AXES)
            search = shared.search_index()
        self._ctx = ToolContext.create(shared.store, row, episode, search, shared.memo, stock)
        self._ctx.state.shown_ids.update(said)
        self.transcript = list(map(dict, messages))
        return {"messages": list(map(dict, messages)), "tools": self._tools}

    def step(
        self, message: dict[str, Any] | str
    ) -> tuple[dict[str, Any], bool, float | None, dict[str, Any]]:
        """Play one assistant turn.

        Args:
            message: an OpenAI-style assistant dict (``content``, ``tool_calls``) or raw model
                text with Qwen3 ``<tool_call>`` blocks.

        Returns:
            ``(observation, done, reward, info)``: the observation is ``{"messages": [tool
            results]}``, followed by a ``{"role": "user"}`` message when the customer's
            scheduled change of mind is due after this turn; reward is terminal (see the
            module docstring).

        Raises:
            EpisodeError: before ``reset`` or after the episode ended.
        """
        results, done, errors_before = self._turn(message)
        state = self.state
        errors = state.errors
        info: dict[str, Any] = {
            "turn": state.turns,
            "errors": [_error_dict(e) for e in errors[errors_before:]]
            if len(errors) > errors_before
            else [],
        }
        if done:
            return {"messages": results}, True, self._finish(info), info
        return {"messages": results}, False, 0.0, info

    def advance(self, message: dict[str, Any] | str) -> bool:
        """Play one assistant turn as :meth:`step` does, returning only whether it ended.

        For replays that read nothing but the final score (:meth:`final_score`): the turn
        changes the state and the transcript exactly as ``step`` would, without building the
        observation, the info and, at the end, the state summary that nobody reads there.

        Raises:
            EpisodeError: before ``reset`` or after the episode ended.
        """
        return self._turn(message)[1]

    def final_score(self) -> Score | None:
        """The verifier's :class:`Score` of the ended episode; None without a verifier.

        What the final ``step`` reports in ``info`` (computed anew at each call).

        Raises:
            EpisodeError: before ``reset`` or before the episode ended.
            TaskError: the verifier cannot read the row's goal or user script.
        """
        ctx = self._require_ctx()
        if not ctx.state.done:
            raise EpisodeError("the episode is still going; its score comes at its end")
        verifier = get_verifier(ctx.task.env) if self._score else None
        if verifier is None:
            return None
        try:
            return verifier(ctx.task, ctx.state, self.transcript)
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            IndexError,
            ArithmeticError,
            RecursionError,
        ) as exc:
            # A goal the verifier cannot read (a key missing, a value of the wrong type: rows
            # edited by hand or by another tool) is the row's fault: one line that says so.
            raise TaskError(
                f"task {ctx.task.task_id}: the {ctx.task.env} verifier cannot grade it "
                f"({type(exc).__name__}: {exc})"
            ) from exc

    def _turn(self, message: dict[str, Any] | str) -> tuple[list[dict[str, Any]], bool, int]:
        """One assistant turn, shared by :meth:`step` and :meth:`advance`.

        Returns:
            The turn's result messages (also added to the transcript), whether the turn ended
            the episode, and how many errors the episode had before it.
        """
        ctx = self._require_ctx()
        state = ctx.state
        if state.done:
            raise EpisodeError("the episode is over; call reset(task) to play another")
        parsed = parse_shared(message)  # read only: never change it
        state.turns += 1
        turn = state.turns
        errors_before = len(state.errors)
        transcript = self.transcript
        transcript.append(_assistant_record(message))
        results: list[dict[str, Any]] = []
        budget, t_max = self._limits
        items, offered, shared = parsed.items, self._offered, parsed.shared
        for i, item in enumerate(items):
            if i >= budget:
                content = self._fail(
                    turn,
                    item.name,
                    "over_budget",
                    f"at most {budget} tool calls per turn; this call was not run",
                )
            elif isinstance(item, ParseIssue):
                content = self._fail(turn, item.name, "parse", item.message)
            else:
                content = invoke(
                    ctx, item.name, item.arguments, offered, loose=item.loose, shared=shared
                )[0]
            results.append(
                {
                    "role": "tool",
                    "tool_call_id": item.call_id or f"call_{turn}_{i}",
                    "name": item.name or "",
                    "content": content,
                }
            )
        if items:  # a turn that called tools (parsed.calls_attempted)
            state.calls_per_turn.append(len(items))
            if turn < t_max and self._switch:
                said = _customer_speaks(ctx, turn)
                if said is not None:
                    results.append({"role": "user", "content": said})
        transcript += results
        done = not items or turn >= t_max
        if done:
            state.done = True
            state.final_text = parsed.content
        return results, done, errors_before

    def _fail(self, turn: int, tool: str | None, kind: str, message: str) -> str:
        self._require_ctx().state.errors.append(ErrorRecord(turn, tool, kind, message))
        return error_result(kind, message)

    def _finish(self, info: dict[str, Any]) -> float | None:
        """Fill the final ``info``; the verifier's reward, or None when there is no verifier."""
        info["state"] = self.state.summary()
        score = self.final_score()
        if score is None:
            info["reward"] = None
            return None
        # The Score is dropped here, so its details are handed over uncopied (to_dict would
        # copy them): verifiers never keep the details they compose (verifiers.reward.compose).
        info["score"] = {
            "reward": score.reward,
            "r_task": score.r_task,
            "r_eff": score.r_eff,
            "r_hall": score.r_hall,
            "is_correct": score.is_correct,
            "details": score.details,
        }
        info.update(
            reward=score.reward,
            r_task=score.r_task,
            r_eff=score.r_eff,
            r_hall=score.r_hall,
            is_correct=score.is_correct,
        )
        return score.reward

    def _require_ctx(self) -> ToolContext:
        if self._ctx is None:
            raise EpisodeError("no episode yet; call reset(task) before step()")
        return self._ctx


def _assistant_record(message: object) -> dict[str, Any]:
    """The assistant message as the transcript keeps it: what the model wrote, unaltered.

    Raw text keeps its blocks (re-parsing it gives the same calls and the same ``call_<turn>_<i>``
    ids), so a transcript replays to the same results.
    """
    if isinstance(message, dict):
        return {**message, "role": "assistant"}
    return {"role": "assistant", "content": message if isinstance(message, str) else repr(message)}


def _customer_speaks(ctx: ToolContext, turn: int) -> str | None:
    """What the customer says unprompted after ``turn``: a scheduled switch that is due.

    Called only for tasks whose user script schedules a switch (:func:`_switch_scheduled`):
    only they pay for making the simulated user.
    """
    user = ctx.user
    if user is None:
        try:
            user = customer(ctx)
        except ToolError:
            return None
    said = user.at_turn_end(turn)
    if said is not None:
        ctx.state.extra["switch_said_at"] = turn
    return said


def _switch_scheduled(text: str) -> bool:
    """Whether a user script's compiled form schedules a switch (an invalid script: no).

    Read once per task row (:class:`_Prepared`): without a switch the customer never speaks
    unprompted, so ``step`` skips asking (most rows carry ``"switch": null``, which
    :func:`_switch_is_null` reads without the full validation of :func:`compile_script`).
    """
    if '"switch"' not in text or _switch_is_null(text):
        return False
    try:
        return compile_script(text).script.switch is not None  # cached per distinct script
    except ConfigError:
        return False


@lru_cache(maxsize=8192)
def _switch_is_null(text: str) -> bool:
    """Whether a user script's JSON reads as an object whose ``switch`` is null or absent.

    Such a script schedules no switch whether or not it is valid (an invalid one schedules
    none either), so it needs neither :func:`compile_script`'s full validation nor its slot
    matchers: every row carries ``"switch": null`` when it has none, and only tasks that ask
    the customer something need the compiled script. Text ``json`` cannot read answers False
    and takes the full path.
    """
    try:
        script = json.loads(text)
    except ValueError:
        return False
    return isinstance(script, dict) and script.get("switch") is None


def _error_dict(e: ErrorRecord) -> dict[str, Any]:
    return {"tool": e.tool, "kind": e.kind, "protocol": e.protocol, "message": e.message}
