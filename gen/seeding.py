"""Keyed random streams: one seed fixes every byte shopgen writes (DESIGN §4).

There is no global RNG. Every consumer asks for a stream by a key such as
``("products", block)`` or ``("task", "returns", 5, 17)``; the stream depends only on the
root seed and that key, never on how many other streams were drawn before it, on the process,
or on ``PYTHONHASHSEED``. That is what makes row *i* the same in any shard layout and task *k*
the same in any batch size.

>>> a = stream(7, "products", 3).integers(0, 1_000_000, 3)
>>> b = stream(7, "products", 3).integers(0, 1_000_000, 3)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

Key = str | int


def _encode(parts: tuple[Key, ...]) -> bytes:
    # Length-prefixed and type-tagged so ("ab", "c") and ("a", "bc"), or 1 and "1", never meet.
    out = bytearray()
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, int | str):
            raise TypeError(f"seed key parts must be int or str, got {part!r}")
        raw = str(part).encode()
        out += (b"i" if isinstance(part, int) else b"s") + len(raw).to_bytes(4, "little") + raw
    return bytes(out)


def stable_hash(*parts: Key, bits: int = 64) -> int:
    """A process-independent hash of a key (Python's built-in hash is salted per process)."""
    digest = hashlib.blake2b(_encode(parts), digest_size=bits // 8).digest()
    return int.from_bytes(digest, "little")


def stream(seed: int, *key: Key) -> np.random.Generator:
    """The random stream for ``key`` under root ``seed``.

    Args:
        seed: the root seed of the run.
        *key: a namespace and indices, e.g. ``("variants", block)``.

    Returns:
        A fresh PCG64 generator; equal arguments always give equal streams.
    """
    return generator(stable_hash(seed, *key, bits=128))


#: SeedSequence's constants (numpy/random/bit_generator.pyx), for :class:`_PCG64Seed`.
_MASK32 = 0xFFFFFFFF
_INIT_B, _MULT_B, _XSHIFT = 0x8B51F9DD, 0x58F38DED, 16


def _output_steps() -> tuple[tuple[int, int, int], ...]:
    # generate_state's hash constant runs through the same values for every sequence: the
    # i-th output word is pool[i % 4] xor-ed with one and multiplied by the next.
    steps, h = [], _INIT_B
    for i in range(8):
        xor, h = h, (h * _MULT_B) & _MASK32
        steps.append((i % 4, xor, h))
    return tuple(steps)


_STEPS = _output_steps()


class _PCG64Seed(np.random.SeedSequence):
    """A SeedSequence whose PCG64 seeding words (``generate_state(4, uint64)``) are made in Python.

    NumPy's own ``generate_state`` costs ~5 µs of a ~10 µs PCG64 construction (arrays, an
    errstate, a view) for eight 32-bit hashes; these are the same hashes on the same pool, as
    plain integers. Every other request goes to NumPy. ``tests/gen/test_seeding_fast.py`` checks
    the states equal NumPy's for any entropy.
    """

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != 4 or dtype is not np.uint64:
            return super().generate_state(n_words, dtype)
        pool = self.pool.tolist()
        w = []
        for i, xor, mult in _STEPS:
            v = ((pool[i] ^ xor) * mult) & _MASK32
            w.append(v ^ (v >> _XSHIFT))
        words = [w[0] | w[1] << 32, w[2] | w[3] << 32, w[4] | w[5] << 32, w[6] | w[7] << 32]
        return np.array(words, dtype=np.uint64)


def generator(entropy: int) -> np.random.Generator:
    """``np.random.Generator(np.random.PCG64(entropy))`` exactly, for a non-negative int, faster.

    Seeding was ~10 µs of every stream and a task seeds a dozen or more (search pages,
    message and reply noise). The entropy is handed to the SeedSequence as its 32-bit words,
    least significant first, as NumPy splits an int itself (its int conversion was ~5 µs of
    those), and :class:`_PCG64Seed` makes the seeding words.
    """
    if entropy < 0:
        raise ValueError(f"entropy={entropy} must be non-negative")
    size = max(1, -(-entropy.bit_length() // 32)) * 4
    words = np.frombuffer(entropy.to_bytes(size, "little"), dtype="<u4")
    return np.random.Generator(np.random.PCG64(_PCG64Seed(words)))


class FeistelIds:
    """A keyed bijection from row indices to opaque, ASIN-like ids.

    Ids must be unique (a collision would merge two products) and must not be enumerable
    (an agent that guesses ``P000002`` would win without searching). A 4-round Feistel network
    over 40 bits gives both: it is a permutation of ``[0, 2**40)``, so distinct indices give
    distinct ids, and without the key the next id cannot be predicted from the last.
    """

    _HALF = 20
    _MASK = (1 << _HALF) - 1
    _ALPHABET = np.frombuffer(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", dtype=np.uint8)

    def __init__(self, seed: int, namespace: str, *, prefix: str, width: int) -> None:
        if 36**width < 1 << (2 * self._HALF):
            raise ValueError(f"width={width} cannot hold 40-bit ids in base 36")
        self._keys = [
            stable_hash(seed, "ids", namespace, r, bits=32) & self._MASK for r in range(4)
        ]
        self._prefix = prefix
        self._width = width

    def permute(self, index: np.ndarray) -> np.ndarray:
        """Map indices in ``[0, 2**40)`` to distinct integers in the same range."""
        x = np.asarray(index, dtype=np.uint64)
        if x.size and int(x.max()) >= 1 << (2 * self._HALF):
            raise ValueError("index beyond the 40-bit id space")
        left, right = x >> np.uint64(self._HALF), x & np.uint64(self._MASK)
        for k in self._keys:
            mixed = (right * np.uint64(0x9E3779B1) + np.uint64(k)) & np.uint64(self._MASK)
            mixed ^= mixed >> np.uint64(7)
            left, right = right, left ^ mixed
        return (left << np.uint64(self._HALF)) | right

    def ids(self, index: np.ndarray) -> pl.Series:
        """Render indices as fixed-width base-36 strings with the prefix, vectorised."""
        value = self.permute(index)
        width = len(self._prefix) + self._width
        chars = np.empty((value.size, width), dtype=np.uint8)
        chars[:, : len(self._prefix)] = np.frombuffer(self._prefix.encode(), dtype=np.uint8)
        for pos in range(width - 1, len(self._prefix) - 1, -1):
            chars[:, pos] = self._ALPHABET[(value % np.uint64(36)).astype(np.intp)]
            value = value // np.uint64(36)
        # Fixed-width bytes → Arrow strings without a Python object per id.
        raw = pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(width), value.size, [None, pa.py_buffer(chars)]
        )
        return pl.Series(raw.cast(pa.binary()).cast(pa.string()))
