"""Task generation: draw, render, script the customer, prove solvable (DESIGN §7).

For task ``k`` of environment ``env`` at difficulty ``d`` every random choice comes from the
streams ``(seed, "task", env, d, k, attempt, part)``, so task ``k`` is the same in a batch of 10
or of 10,000. A draft becomes a task only after its oracle has played it live through the
runtime and the recorded assistant messages, replayed from scratch, reach the maximum reward.
A draw the generator or its oracle cannot use (:class:`Redraw`) moves to the next attempt; an
oracle that plays to the end and is not correct is a bug, reported as :class:`OracleFailure`
(or, in a factory made with ``skip_failed_oracles``, recorded as a :class:`SkippedDraw` and
passed over like a redraw).
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

import jinja2

from shopgen.env.episode import ShopEnv
from shopgen.env.tools import env_tool_schemas
from shopgen.gen.difficulty import Theta, theta
from shopgen.gen.render import Rendered, render_first_message
from shopgen.gen.schedules import SCHEDULES, p_shorthand
from shopgen.gen.seeding import stream
from shopgen.gen.tasks.base import Draft, GenContext, Oracle, Redraw
from shopgen.schemas.envs import EnvSpec, env_spec, load_entry_point
from shopgen.schemas.errors import ShopgenError
from shopgen.schemas.task import TaskRow
from shopgen.schemas.version import SHOPGEN_VERSION
from shopgen.verifiers.replay import play
from shopgen.verifiers.reward import MAX_REWARD

#: Attempts per task before giving up (then :class:`DrawsExhausted`, which ends the run). Each
#: attempt draws from streams of its own, so a task runs out only if every attempt fails:
#: with a fraction p of draws rejected that is p ** MAX_ATTEMPTS. The worst measured case,
#: journey at d = 12 on 100k products (p ≈ 0.78), would run out once in ~20,000 tasks at 40
#: attempts and practically never at 200; a generator that cannot make a task at all still
#: fails, after 200 cheap rejections.
MAX_ATTEMPTS = 200
#: Tasks after which a factory with ``freeze_heap`` first freezes the heap (then at 2×, 4×, …).
FREEZE_FIRST = 256

# ``json.dumps`` given options builds a new encoder per call (~1 µs); a task encodes a dozen
# values, so each set of options used here gets its encoder once. Same options, same text.
#: ``json.dumps(value, sort_keys=True, default=str)``: the row's JSON fields.
_encode_sorted = json.JSONEncoder(sort_keys=True, default=str).encode
#: ``json.dumps(value, sort_keys=True)``: a call's arguments in the oracle's messages.
_encode_args = json.JSONEncoder(sort_keys=True).encode
#: ``json.dumps(value, separators=(",", ":"))``: the row's oracle.
_encode_compact = json.JSONEncoder(separators=(",", ":")).encode
#: What :func:`task_id` hashes the JSON of.
_encode_id = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode


class OracleFailure(ShopgenError):
    """A generated task whose oracle does not reach the maximum reward: a generator bug."""


class DrawsExhausted(ShopgenError):
    """No draw of a task was usable in :data:`MAX_ATTEMPTS` attempts (usually a small catalog)."""


@dataclass(frozen=True)
class SkippedDraw:
    """A draw whose oracle failed, passed over by a factory with ``skip_failed_oracles``.

    Enough to make the draw again (``TaskFactory.make(env, d, k)`` with the run's seed and
    settings plays attempts ``0 … attempt``) and the failure's message.
    """

    env: str
    d: int
    k: int
    attempt: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        """The draw as the manifest lists it (``config.skipped_draws``)."""
        return asdict(self)


class _Setting(NamedTuple):
    """What every task of one environment at one difficulty shares (``TaskFactory._setting``)."""

    axes: Theta  # frozen
    static: dict[str, Any]  # the shared fields of the row (read, never changed)
    known: dict[str, str]  # their task-id JSON, for _id_json


@dataclass(frozen=True)
class Generated:
    """An accepted task with the draft and rendering it came from (for tests and reports)."""

    row: TaskRow
    draft: Draft
    rendered: Rendered
    attempt: int


@cache
def system_prompt(env: str) -> str:
    """The environment's default system prompt (``templates/<env>/system.j2``, read once)."""
    text = resources.files("shopgen.templates").joinpath(env, "system.j2").read_text("utf-8")
    return text.strip()


@cache
def default_prompt(env: str, T_max: int, B_tool: int) -> str:
    """:func:`system_prompt` and the turn and call budget the task is played with.

    The budget was unsaid, and at d = 0–1 the oracles of discovery, substitution, cart,
    returns and bundle use every turn: an agent doing each step its prompt lists (viewing
    the cart, checking eligibility before starting a return) ran out of turns before it
    finished. ``templates/budget.j2`` says how many there are.
    """
    budget = resources.files("shopgen.templates").joinpath("budget.j2").read_text("utf-8")
    said = jinja2.Template(budget).render(T_max=T_max, B_tool=B_tool).strip()
    return f"{system_prompt(env)}\n\n{said}"


@cache
def _tools_json(env: str) -> str:
    """An environment's tool schemas as the row stores them (built once per process)."""
    return json.dumps(env_tool_schemas(env), separators=(",", ":"))


def user_script(draft: Draft, rendered: Rendered, axes: Theta, d: int) -> dict[str, Any]:
    """The simulated customer's script (``schemas.task.UserScript``) for a rendered draft."""
    dropped = set(rendered.dropped)
    slots = [
        {
            "name": s.name,
            "value": s.value,
            "kind": s.kind,
            "label": s.label,
            "omitted": s.name in dropped,
        }
        for s in draft.slots
        if s.kind != "id"  # customers do not know product ids
    ]
    for name, fact in draft.facts.items():
        slots.append({"name": name, "omitted": False, **fact})
    never_say = sorted(_hidden_ids(draft.goal))
    return {
        "style": rendered.style,
        "p_noise": axes.p_noise,
        "p_short": p_shorthand(d),
        "slots": slots,
        "switch": draft.switch.to_dict() if draft.switch else None,
        "never_say": never_say,
    }


#: The goal keys whose values are product or variant ids (one id, or a list of them).
_ID_KEYS = frozenset(("product_id", "variant_id", "product_ids"))


def _hidden_ids(goal: Any) -> set[str]:
    """Product and variant ids anywhere in the goal: the customer never says them.

    One set, filled by a walk that descends into dicts and lists only: a ranking goal holds
    ~50 feasible rows of strings and numbers, and a set made and merged per value visited
    (~200 a discovery task) cost ~1% of the task.
    """
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _ID_KEYS and value:
                    if isinstance(value, list):
                        found.update(value)
                    else:
                        found.add(str(value))
                elif isinstance(value, dict | list):
                    walk(value)
        else:
            for item in node:
                if isinstance(item, dict | list):
                    walk(item)

    if isinstance(goal, dict | list):
        walk(goal)
    return found


def task_id(fields: dict[str, Any]) -> str:
    """The content hash of a task: equal content, equal id, in any batch or process."""
    return _digest(_encode_id(fields))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _id_json(fields: dict[str, Any], known: dict[str, str]) -> str:
    """``_encode_id(fields)`` (string keys), taking the JSON of the values in ``known`` as given.

    ``known`` maps a key to the ``_encode_id`` text of its value in ``fields``. The compact,
    key-sorted JSON of an object is ``{`` + sorted ``"key":value`` pairs joined by commas +
    ``}``, so values that are the same for every task of an environment and difficulty (θ,
    tool schemas, catalog id, …; a third of the text and most of its encoding time) are
    encoded once per factory instead of once per task.
    """
    pairs = [
        f"{_encode_id(key)}:{known[key] if key in known else _encode_id(value)}"
        for key, value in sorted(fields.items())
    ]
    return "{" + ",".join(pairs) + "}"


def assistant_message(turn: int, action: list[tuple[str, dict[str, Any]]] | str) -> dict[str, Any]:
    """An oracle turn as an OpenAI assistant message."""
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": _encode_args(args)},
            }
            for i, (name, args) in enumerate(action)
        ],
    }


def drive(env: ShopEnv, row: TaskRow, oracle: Oracle) -> list[dict[str, Any]]:
    """Play an oracle live; return its assistant messages.

    Raises:
        Redraw: the oracle gave up (e.g. search never showed the target) or ran out of turns.
    """
    env.reset(row)
    messages: list[dict[str, Any]] = []
    action = next(oracle)
    while True:
        message = assistant_message(len(messages) + 1, action)
        messages.append(message)
        observation, done, _, _ = env.step(message)
        if isinstance(action, str):
            return messages
        if done:
            raise Redraw("the oracle needs more than T_max turns")
        results = [decode_result(m) for m in observation["messages"]]
        try:
            action = oracle.send(results)
        except StopIteration:
            raise OracleFailure(f"{row.env} oracle stopped without a final message") from None


def decode_result(message: dict[str, Any]) -> dict[str, Any]:
    """A tool result as an agent reads it; a customer's unprompted message as ``{"customer": …}``.

    What oracles, reference policies and the degenerate cheats are handed after each turn.
    """
    if message.get("role") == "user":
        return {"customer": message["content"]}
    try:
        value = json.loads(message["content"])
    except (TypeError, json.JSONDecodeError):
        return {"text": message.get("content")}
    return value if isinstance(value, dict) else {"value": value}


class TaskFactory:
    """Makes proven tasks of any environment from one catalog.

    Args:
        env: a ShopEnv on the catalog; its store is the generation context too.
        seed: root seed of the run.
        overrides: θ axes overridden by name (the same for every task).
        prompt: a system prompt to use instead of each environment's own.
        freeze_heap: for processes that only generate (``shopgen tasks`` and its workers):
            after 256, 512, 1024, … tasks, collect garbage and ``gc.freeze()`` what is alive.
            Generation fills per-catalog caches (card texts, decoded rows, compiled scripts,
            tool results) with objects that live as long as the process, and CPython's full
            collections rescan them all each time the long-lived set grows by a quarter: 7–11%
            of a search environment's task time, ~3% once frozen. Off by default because
            freezing is process-wide: in a trainer's process it would also pin the trainer's
            own objects, whose later reference cycles would then never be collected.
        skip_failed_oracles: pass over a draw whose oracle fails (an :class:`OracleFailure`,
            a generator bug) as if it were a redraw, and record it in :attr:`skipped`, instead
            of raising. For long runs (``shopgen tasks``), where one rare bug would otherwise
            end hours of generation. Every task made is still proven, and a task whose
            draws all work is the same either way: only a task with a failed draw moves on
            to its next attempt.
    """

    def __init__(
        self,
        env: ShopEnv,
        *,
        seed: int,
        overrides: dict[str, Any] | None = None,
        prompt: str | None = None,
        freeze_heap: bool = False,
        skip_failed_oracles: bool = False,
    ) -> None:
        self.env = env
        self.seed = seed
        self.overrides = dict(overrides or {})
        self.prompt = prompt
        self.ctx = GenContext(env.store, seed=seed)
        # The live run only records the oracle's messages; the proof scores their replay.
        self._live = env.spawn(score=False)
        self._made = 0
        self._freeze_at = FREEZE_FIRST if freeze_heap else 0
        #: (environment, d) → what every such task shares (see :meth:`_setting`).
        self._settings: dict[tuple[str, int], _Setting] = {}
        self._skip_failed = skip_failed_oracles
        #: The draws passed over because their oracle failed, in the order met.
        self.skipped: list[SkippedDraw] = []

    def make(self, env_name: str, d: int, k: int) -> Generated:
        """Task ``k`` of ``env_name`` at difficulty ``d``, proven solvable."""
        spec = env_spec(env_name)
        generate = load_entry_point(spec.generator)
        oracle = load_entry_point(spec.oracle)
        axes, static, known = self._setting(spec, d)
        for attempt in range(MAX_ATTEMPTS):
            key = ("task", env_name, d, k, attempt)
            try:
                draft = generate(self.ctx, d, axes, stream(self.seed, *key, "goal"))
                rendered = render_first_message(
                    env_name, draft.slots, d=d, rng=stream(self.seed, *key, "message"), axes=axes
                )
                fields = self._fields(static, draft, rendered, axes, d)
                live = _row(fields, known)
                messages = drive(self._live, live, oracle(live))
                row = _proven(live, fields, messages)
                self._prove(row, messages)
            except Redraw:
                continue
            except OracleFailure as failure:
                if not self._skip_failed:
                    raise
                self.skipped.append(SkippedDraw(env_name, d, k, attempt, str(failure)))
                continue
            self._count_made()
            return Generated(row=row, draft=draft, rendered=rendered, attempt=attempt)
        products = sum(
            e.rows for e in self.env.store.manifest.files.values() if e.table == "products"
        )
        raise DrawsExhausted(
            f"{env_name}: no usable draw for d={d}, k={k} in {MAX_ATTEMPTS} attempts on a "
            f"catalog of {products:,} products (a small catalog may not hold what this "
            "environment draws at this level: try a larger one)"
        )

    def _setting(self, spec: EnvSpec, d: int) -> _Setting:
        """θ at ``d``, the fields every task of ``spec`` at ``d`` has, and their task-id JSON.

        θ is the run's (its overrides applied), with the environment's extra turns added to
        ``T_max`` (:attr:`EnvSpec.extra_turns`); the row's ``theta`` is what the task is played
        and graded with.

        Made once per environment and difficulty: θ takes ~10 µs to compute and validate, and
        the shared fields are a third of the text :func:`task_id` encodes (see :func:`_id_json`).
        """
        hit = self._settings.get((spec.name, d))
        if hit is None:
            axes = theta(d, **self.overrides)
            if spec.extra_turns:  # a journey's turns grow with its requests (journey_turns)
                axes = replace(axes, T_max=axes.T_max + SCHEDULES[spec.extra_turns](d))
            static = {
                "env": spec.name,
                "d": d,
                "theta": axes.to_dict(),
                "seed": self.seed,
                "tools": _tools_json(spec.name),
                "catalog_id": self.env.store.catalog_id,
                "verifier_version": spec.version,
            }
            known = {key: _encode_id(value) for key, value in static.items()}
            hit = self._settings[spec.name, d] = _Setting(axes, static, known)
        return hit

    def _fields(
        self, static: dict[str, Any], draft: Draft, rendered: Rendered, axes: Theta, d: int
    ) -> dict[str, Any]:
        """A task's content, the same for the row the oracle plays live and the final row."""
        return {
            **static,
            "messages": [
                {
                    "role": "system",
                    "content": self.prompt
                    or default_prompt(static["env"], axes.T_max, axes.B_tool),
                },
                {"role": "user", "content": rendered.text},
            ],
            "goal": draft.goal,
            "episode": _encode_sorted(draft.episode),
            "user_script": _encode_sorted(user_script(draft, rendered, axes, d)),
        }

    def _count_made(self) -> None:
        self._made += 1
        if self._freeze_at and self._made >= self._freeze_at:
            gc.collect()  # nothing unreachable gets frozen
            gc.freeze()
            self._freeze_at *= 2

    def _prove(self, row: TaskRow, messages: list[dict[str, Any]]) -> None:
        score, state = play(self.env, row, messages)
        if score is None or not score.is_correct or score.reward < MAX_REWARD - 1e-9:
            got = score.to_dict() if score else {"state": state.summary()}
            raise OracleFailure(
                f"{row.env} task {row.task_id} (d={row.d}): oracle not correct: {got}"
            )

    def batch(self, envs: list[str], ds: list[int], n: int) -> Iterator[Generated]:
        """``n`` tasks per (environment, difficulty), environment-major."""
        for env_name in envs:
            for d in ds:
                for k in range(n):
                    yield self.make(env_name, d, k)


def _row(fields: dict[str, Any], known: dict[str, str]) -> TaskRow:
    """The task row of ``fields`` as the oracle plays it live (no oracle yet).

    The id hashes the task's content but not the oracle's turn count, so this row and the
    final row (:func:`_proven`) share an id, and so their search streams. ``known`` is the
    task-id JSON of the fields shared by all tasks of the factory (see :func:`_id_json`).
    """
    content = {**fields, "goal": _encode_sorted(fields["goal"])}
    return TaskRow(
        task_id=_digest(_id_json(content, known)),
        oracle="[]",
        shopgen_version=SHOPGEN_VERSION,
        **content,
    )


def _proven(live: TaskRow, fields: dict[str, Any], messages: list[dict[str, Any]]) -> TaskRow:
    """The final row: the live row with the oracle's messages and ``min_turns`` in the goal.

    A copy, not a new validation: only these two JSON texts differ from the validated live row.
    """
    goal = {**fields["goal"], "min_turns": len(messages)}
    return live.model_copy(
        update={"goal": _encode_sorted(goal), "oracle": _encode_compact(messages)}
    )
