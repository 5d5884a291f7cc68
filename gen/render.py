"""What the customer says: first messages and simulated-user replies, rendered from templates.

Each environment has ``templates/<env>/first.j2``: Jinja macros named ``<style>_<n>``, one per
phrasing, so a phrasing is picked by the seeded stream rather than by the template. Replies are
``templates/user/<kind>.j2`` with ``<style>_<n>`` and style-free ``any_<n>`` macros.

Slot values enter the template wrapped in private-use marker characters, so after rendering the
renderer knows exactly where each value landed. That gives three guarantees without guessing
from the text: every kept slot is said (a template that forgets one raises), protected values
are handed to the noise model as protected segments, and the markers are stripped before anyone
sees the text. A missing value is a StrictUndefined error at render time, never text.
Because a template only places marked values, never reads them, each macro's output for one
shape of goal (which slots, in which places) is rendered by Jinja once; later messages of that
shape interleave the kept text with their own values.

Typical use by a task generator::

    rng = stream(seed, "task", "returns", d, k, "message")
    msg = render_first_message("returns", goal_slots, d=d, rng=rng)
    user_script["revealable"] = msg.dropped          # ask_user reveals exactly these
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

import jinja2
import numpy as np
from jinja2.sandbox import SandboxedEnvironment

from shopgen.gen import noise
from shopgen.gen.difficulty import Theta, theta
from shopgen.gen.schedules import p_shorthand
from shopgen.gen.seeding import generator
from shopgen.gen.slots import ENVS, Slot, check_slots, nest, slot_label
from shopgen.schemas.errors import ConfigError, ShopgenError

Style = Literal["terse", "chatty", "polite", "impatient", "nonnative", "mobile"]
STYLES: tuple[str, ...] = ("terse", "chatty", "polite", "impatient", "nonnative", "mobile")
ReplyKind = Literal[
    "answer",
    "confirm",
    "correct",
    "change_mind",
    "dont_know",
    "nothing",
    "all_said",
    "ask_specific",
]
#: ``nothing``: asked whether a kind of requirement applies, the customer has none of it;
#: ``all_said``: asked openly for more ("Anything else?"), they have said all they hold;
#: ``ask_specific``: asked openly, they hold more but are asked for it by name.
REPLY_KINDS: tuple[str, ...] = get_args(ReplyKind)

#: Shorthand rate floor for the mobile style, whatever d is: that is what makes it mobile.
MOBILE_SHORTHAND = 0.7

_OPEN, _CLOSE, _BASE = "\ue000", "\ue001", 0xE100
#: A reply's i-th label enters its template as the one character ``chr(_LABEL + i)`` (see
#: :func:`_reply_skeleton`): private use, between the marks and the value holes, so ``_LEAK``
#: catches one left in a text.
_LABEL, _LABELS = 0xE010, 0xF0
#: A label starting with one of these would lose the space before it (``_SPACE_BEFORE_PUNCT``).
_PUNCT = tuple(",.;:!?)")
_MARK = re.compile("\ue000([\ue100-\ue8ff])(.*?)\ue001", re.DOTALL)
_HOLE = re.compile("\ue000([\ue100-\ue8ff])\ue001")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)])")
_WHITESPACE = re.compile(r"\s+")  # the runs ``str.split()`` splits at (tests check each char)
#: What must never reach the customer's text: a brace, or any marker or hole character.
_LEAK = re.compile("[{}\ue000-\ue8ff]")


class TemplateError(ShopgenError):
    """A template broke a rendering contract (a kept slot unsaid, a brace leaked, a bad name)."""


@dataclass(frozen=True, kw_only=True)
class Rendered:
    """One rendered utterance and what the task generator must remember about it.

    Attributes:
        text: the message the agent sees (noise applied).
        clean: the same message before typos (shorthand applied), for measuring noise.
        style: the customer style used.
        phrasing: the template macro, ``"<env>/<macro>"``.
        dropped: optional slots left out, in slot order; the user script may reveal these.
        kept: slots said in the text, in slot order.
        protected: protected values as they appear (byte-for-byte) in ``text``.
        spans: ``(slot name, start, end)`` of each protected value in ``text``.
        unprotected_chars: characters of ``clean`` that noise was allowed to touch.
    """

    text: str
    clean: str
    style: str
    phrasing: str
    dropped: tuple[str, ...]
    kept: tuple[str, ...]
    protected: tuple[str, ...]
    spans: tuple[tuple[str, int, int], ...]
    unprotected_chars: int


def _cap(text: str) -> str:
    # str.capitalize lowercases the rest, which would corrupt marked values such as "#A1B2".
    return text[:1].upper() + text[1:] if text[:1].isalpha() else text


def _load(name: str) -> tuple[str, None, Any]:
    source = resources.files("shopgen.templates").joinpath(*name.split("/")).read_text("utf-8")
    return source, None, lambda: True


@cache
def environment() -> SandboxedEnvironment:
    """The one sandboxed Jinja environment for user text (StrictUndefined: no silent blanks)."""
    env = SandboxedEnvironment(
        loader=jinja2.FunctionLoader(_load),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        extensions=["jinja2.ext.do"],
    )
    env.filters["cap"] = _cap
    env.filters["label"] = slot_label
    return env


@cache
def phrasings(path: str) -> dict[str, tuple[str, ...]]:
    """Style → macro names defined in template ``path``, in source order."""
    module = environment().get_template(path).module
    out: dict[str, list[str]] = {}
    for name in sorted(n for n in dir(module) if re.fullmatch(r"[a-z]+_\d+", n)):
        out.setdefault(name.rsplit("_", 1)[0], []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _mark(i: int, slot: Slot) -> str:
    return f"{_OPEN}{chr(_BASE + i)}{slot.display()}{_CLOSE}"


def _segments(
    skeleton: _Skeleton, slots: Sequence[Slot]
) -> tuple[list[noise.Segment], list[str | None]]:
    """The message as segments (text between values, then each value) and each one's slot.

    The same as collapsing the marked render's whitespace, cutting it at the marks and closing
    up spaces before punctuation in the text between them (a test keeps that plain version):
    marker characters are not whitespace, so no run of spaces crosses a mark, and the text
    between the values is the skeleton's, done once per skeleton.
    """
    segs, owners = [skeleton.texts[0]], [None]
    for i, text in zip(skeleton.holes, skeleton.texts[1:], strict=True):
        slot = slots[i]
        segs += [noise.Segment(_WHITESPACE.sub(" ", slot.display()), slot.protected), text]
        owners += [slot.name, None]
    keep = [i for i, seg in enumerate(segs) if seg.text]
    return [segs[i] for i in keep], [owners[i] for i in keep]


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


class _LazyStream:
    """A child stream that is seeded on first use.

    Seeding a PCG64 costs ~10 µs, a large share of a render, and some children are never
    drawn from: the shorthand stream when no unprotected word has a shorthand, the noise
    streams when the rates are zero. The seed is drawn from the parent either way, so every
    stream that is used is exactly the one an eager construction would give.
    """

    __slots__ = ("_rng", "_seed")

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._rng: np.random.Generator | None = None

    def __getattr__(self, name: str) -> Any:
        if self._rng is None:
            self._rng = generator(self._seed)
        return getattr(self._rng, name)


def _children(rng: np.random.Generator, n: int) -> list[Any]:
    # Separate streams per decision, so e.g. the omission draws do not depend on how many
    # phrasings a style has (tests measure omission rate independently of templates).
    # ``rng.integers(0, 2**63, size=n)`` draws exactly these (Lemire's method on a power-of-two
    # range keeps the top 63 bits of each raw word and never rejects), without its overhead.
    return [_LazyStream(raw >> 1) for raw in rng.bit_generator.random_raw(n).tolist()]


def _finish(
    segs: list[noise.Segment],
    owners: list[str | None],
    *,
    p_noise: float,
    p_short: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Apply shorthand then typos, check for leaks, and locate the protected spans."""
    if p_short > 0 or p_noise > 0:  # else nothing is drawn: leave ``rng`` unseeded
        r_short, r_typo = _children(rng, 2)
        segs = noise.shorthand(segs, p_short, r_short)
        noisy = noise.typos(segs, p_noise, r_typo)
    else:
        noisy = list(segs)
    # A deleted first letter must not leave the message starting with a space.
    for end, strip in ((0, str.lstrip), (-1, str.rstrip)):
        if noisy and not noisy[end].protected:
            noisy[end] = noise.Segment(strip(noisy[end].text))
    text = noise.join(noisy)
    if _LEAK.search(text):
        raise TemplateError(f"rendered text leaks braces or markers: {text!r}")
    spans, pos = [], 0
    for seg, owner in zip(noisy, owners, strict=True):
        if seg.protected and owner is not None:
            spans.append((owner, pos, pos + len(seg.text)))
        pos += len(seg.text)
    return {
        "text": text,
        "clean": noise.join(segs),
        "protected": tuple(text[a:b] for _, a, b in spans),
        "spans": tuple(spans),
        "unprotected_chars": sum(len(seg.text) for seg in segs if not seg.protected),
    }


def render_first_message(
    env: str,
    slots: Sequence[Slot],
    *,
    d: int,
    rng: np.random.Generator,
    style: str | None = None,
    axes: Theta | None = None,
) -> Rendered:
    """The customer's first message for a task.

    Args:
        env: environment name (``discovery`` … ``journey``).
        slots: the hidden goal's slots; required ones are always said.
        d: difficulty level; sets ``p_missing``, ``p_noise`` and the shorthand rate.
        rng: the task's keyed stream, e.g. ``stream(seed, "task", env, d, k, "message")``.
        style: a customer style from :data:`STYLES`; drawn from ``rng`` when ``None``.
        axes: axes to use instead of ``theta(d)`` (for ablations with overrides).

    Returns:
        The :class:`Rendered` message; ``dropped`` lists the optional slots left unsaid.

    Raises:
        ConfigError: unknown env or style, or a bad slot set.
        TemplateError: a template failed its contract (a bug in the template).
    """
    if env not in ENVS:
        raise ConfigError(f"env={env!r} is not an environment ({', '.join(ENVS)})")
    slots = check_slots(env, slots)
    th = axes or theta(d)
    r_style, r_drop, r_phrase, r_noise = _children(rng, 4)
    chosen = _pick(r_style, STYLES) if style is None else _check_style(style)
    # Only optional slots read their uniform, and ``random(n)`` is the first n of ``random(m)``
    # for m > n (one raw word each, in order): a message whose slots are all required, as
    # every bundle's are, never seeds its drop stream.
    last = max((i for i, s in enumerate(slots) if not s.required), default=-1)
    draws = r_drop.random(last + 1).tolist() if last >= 0 else []
    kept_idx = [i for i, s in enumerate(slots) if s.required or draws[i] >= th.p_missing]
    said = set(kept_idx)
    dropped = tuple(s.name for i, s in enumerate(slots) if i not in said)
    macro = _pick(r_phrase, phrasings(f"{env}/first.j2")[chosen])
    shape = tuple((i, slots[i].name) for i in kept_idx)
    segs, owners = _segments(
        _skeleton(f"{env}/first.j2", macro, _goal_context, shape, slots), slots
    )
    kept = tuple(slots[i].name for i in kept_idx)
    missing = set(kept) - set(owners)
    if missing:
        raise TemplateError(f"{env}/{macro} does not say slot(s) {sorted(missing)}")
    p_short = max(MOBILE_SHORTHAND, p_shorthand(d)) if chosen == "mobile" else p_shorthand(d)
    done = _finish(segs, owners, p_noise=th.p_noise, p_short=p_short, rng=r_noise)
    return Rendered(style=chosen, phrasing=f"{env}/{macro}", dropped=dropped, kept=kept, **done)


def render_user_reply(
    kind: str,
    slots: Sequence[Slot] = (),
    *,
    style: str,
    rng: np.random.Generator,
    p_noise: float = 0.0,
    p_short: float = 0.0,
) -> Rendered:
    """A simulated-user reply: reveal, confirm, correct, change mind, not know, or have no more.

    Args:
        kind: one of :data:`REPLY_KINDS`.
        slots: what the reply states (the revealed, corrected or switched slots). ``answer``,
            ``correct`` and ``change_mind`` need at least one; every slot given is said.
        style: the customer's style (keep the first message's, so a customer stays in voice).
        rng: the episode's keyed stream for this turn.
        p_noise: typo rate (pass ``theta.p_noise`` to keep replies as noisy as the first message).
        p_short: shorthand rate.

    Returns:
        The :class:`Rendered` reply (``dropped`` is always empty).
    """
    if kind not in REPLY_KINDS:
        raise ConfigError(f"kind={kind!r} is not a reply kind ({', '.join(REPLY_KINDS)})")
    _check_style(style)
    if kind in ("answer", "correct", "change_mind") and not slots:
        raise ConfigError(f"a {kind!r} reply needs at least one slot to state")
    r_phrase, r_noise = _children(rng, 2)
    path = f"user/{kind}.j2"
    table = phrasings(path)
    macro = _pick(r_phrase, table.get(style, ()) + table.get("any", ()))
    segs, owners = _segments(_reply_skeleton(path, macro, slots), slots)
    said = tuple(dict.fromkeys(o for o in owners if o is not None))
    missing = {s.name for s in slots} - set(said)
    if kind in ("answer", "correct", "change_mind") and missing:
        raise TemplateError(f"{path}:{macro} does not say slot(s) {sorted(missing)}")
    done = _finish(segs, owners, p_noise=p_noise, p_short=p_short, rng=r_noise)
    return Rendered(style=style, phrasing=f"{path}:{macro}", dropped=(), kept=said, **done)


def _check_style(style: str) -> str:
    if style not in STYLES:
        raise ConfigError(f"style={style!r} is not a customer style ({', '.join(STYLES)})")
    return style


def _goal_context(shape: tuple[tuple[int, str], ...], value: Callable[[int], str]) -> Any:
    """A first message's macro argument: the kept slots ``(index, name)`` nested by name."""
    return nest((name, value(i)) for i, name in shape)


def _reply_context(shape: tuple[str, ...], value: Callable[[int], str]) -> Any:
    """A reply's macro argument: one ``{label, value}`` per stated slot (``shape``: labels)."""
    return [{"label": label, "value": value(i)} for i, label in enumerate(shape)]


def _counted_context(shape: int, value: Callable[[int], str]) -> Any:
    """:func:`_reply_context` for ``shape`` slots, each label the character that stands for it."""
    return [{"label": chr(_LABEL + i), "value": value(i)} for i in range(shape)]


def _inert(label: str) -> bool:
    """Whether ``label`` reads the same in a reply's text as the character standing for it.

    Non-empty, single spaces only and none at the ends, no space before punctuation, no
    punctuation first: then collapsing whitespace, closing up spaces before punctuation and
    stripping the ends treat it as one opaque character. (A brace or marker in a label
    reaches the text either way, where ``_finish`` refuses it.)
    """
    return (
        bool(label)
        and " ".join(label.split()) == label
        and not label.startswith(_PUNCT)
        and _SPACE_BEFORE_PUNCT.search(label) is None
    )


def _reply_skeleton(path: str, macro: str, slots: Sequence[Slot]) -> _Skeleton:
    """A reply macro's skeleton for ``slots``, its labels written in.

    Reply templates place each slot's label as they place its value (``the <label> is
    <value>``), so with every label :func:`_inert` one skeleton per number of slots serves
    every set of labels: rendered with one character per label, which is swapped for the label
    afterwards. Keyed by the labels themselves, ~60% of a discovery task's replies missed the
    cache (labels name attributes: new combinations keep coming), each miss a Jinja render
    (~0.15 ms). ``tests/gen/test_render_fast.py`` holds this equal to rendering the labels.
    """
    labels = [s.label for s in slots]
    if len(labels) > _LABELS or not all(map(_inert, labels)):
        return _skeleton(path, macro, _reply_context, tuple(labels), slots)
    counted = _skeleton(path, macro, _counted_context, len(labels), slots)
    table = {_LABEL + i: label for i, label in enumerate(labels)}
    texts = tuple(noise.Segment(t.text.translate(table)) for t in counted.texts)
    return _Skeleton(holes=counted.holes, texts=texts)


@dataclass(frozen=True, slots=True)
class _Skeleton:
    """A macro's output for one shape of context, cut at its slot values.

    Attributes:
        holes: the slot index of each hole, in order.
        texts: the text before, between and after the holes as the customer sees it
            (whitespace collapsed, no space before punctuation, the ends stripped).
    """

    holes: tuple[int, ...]
    texts: tuple[noise.Segment, ...]

    @classmethod
    def of(cls, plain: str) -> _Skeleton:
        parts = _HOLE.split(_MARK.sub(_OPEN + r"\1" + _CLOSE, plain))
        texts = [_WHITESPACE.sub(" ", t) for t in parts[0::2]]
        texts[0] = texts[0].lstrip()
        texts[-1] = texts[-1].rstrip()
        return cls(
            holes=tuple(ord(h) - _BASE for h in parts[1::2]),
            texts=tuple(noise.Segment(_SPACE_BEFORE_PUNCT.sub(r"\1", t)) for t in texts),
        )


#: ``(path, macro, context builder, shape)`` → the macro's skeleton for that shape.
_SKELETONS: dict[tuple[Any, ...], _Skeleton] = {}
_SKELETONS_LIMIT = 1 << 16


def _skeleton(
    path: str,
    macro: str,
    context: Callable[[Any, Callable[[int], str]], Any],
    shape: Hashable,
    slots: Sequence[Slot],
) -> _Skeleton:
    """The macro's skeleton for this shape of context, rendered by Jinja on first need.

    Slot values reach a template marked (``_mark``), so a template places a value and cannot
    read it: a filter sees the marker first (``cap`` leaves it alone), a test can only ask
    whether the slot is defined. The text around the values is therefore the same for every
    goal with the same slots in the same places (the shape: the slot names by index for a
    first message, the number of slots for a reply whose labels are written in afterwards). The
    first render of a shape is kept as a skeleton, its values cut out and the text between
    them prepared once, and later calls interleave their own values (:func:`_segments`),
    skipping Jinja's macro calls. The contract that makes this exact, templates never inspect
    a value, is checked against cutting the plain render for every macro
    (``tests/gen/test_render_fast.py``).
    """
    key = (path, macro, context, shape)
    skeleton = _SKELETONS.get(key)
    if skeleton is None:
        plain = _call(path, macro, context(shape, lambda i: _mark(i, slots[i])))
        if len(_SKELETONS) >= _SKELETONS_LIMIT:
            _SKELETONS.pop(next(iter(_SKELETONS)))
        skeleton = _SKELETONS[key] = _Skeleton.of(plain)
    return skeleton


def _call(path: str, macro: str, arg: Any) -> str:
    try:
        return str(getattr(environment().get_template(path).module, macro)(arg))
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"{path}:{macro}: {exc}") from None
