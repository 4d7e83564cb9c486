"""Counter-based randomness for batches: every number is a pure function of ``(row key, stream, counter)``.

A batch of views draws its random numbers row by row from keys derived from ``(seed, item index)``, so an
item does not depend on which other items share its batch, on the batch size, on the number of DataLoader
workers or on the order in which the pipeline's stages ask for numbers. Streams are named (``rng.child("walk")``)
and counters are explicit, so two stages never share numbers. The mixing function is SplitMix64's finaliser
(Steele, Lea & Flood 2014), applied to the key combined with the counter.
"""
from __future__ import annotations

import zlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 2.0**-53


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of ``x + golden`` (uint64, elementwise, wrapping arithmetic)."""
    z = np.array(x, dtype=np.uint64)
    if z.ndim == 0:
        return _mix_into(z.reshape(1))[0]
    return _mix_into(z)


def _mix_into(z: np.ndarray) -> np.ndarray:
    """:func:`mix` of the uint64 array ``z``, computed in place (one scratch array) and returned."""
    shifted = np.empty_like(z)
    with np.errstate(over="ignore"):
        z += _GOLDEN
        np.right_shift(z, np.uint64(30), out=shifted)
        z ^= shifted
        z *= _M1
        np.right_shift(z, np.uint64(27), out=shifted)
        z ^= shifted
        z *= _M2
        np.right_shift(z, np.uint64(31), out=shifted)
        z ^= shifted
    return z


def _name_code(name: str | int) -> np.uint64:
    """A stable 64-bit code of a stream name (``zlib.crc32`` of its text, spread by :func:`mix`)."""
    return mix(np.uint64(zlib.crc32(str(name).encode())))


def item_keys(seed: int, indices: np.ndarray) -> np.ndarray:
    """``(len(indices),)`` uint64 keys of items ``indices`` of a run seeded ``seed``."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return mix(mix(np.uint64(seed)) ^ np.asarray(indices, dtype=np.int64).astype(np.uint64))


class KeyedRandom:
    """Random numbers for a batch of rows, row ``r`` keyed by ``keys[r]``.

    >>> rng = KeyedRandom.for_items(seed=0, indices=np.arange(3))
    >>> u = rng.child("walk").uniform(4)
    >>> u.shape, bool(((0 <= u) & (u < 1)).all())
    ((3, 4), True)
    >>> bool((rng.take(np.array([2])).child("walk").uniform(4) == u[2:]).all())  # rows are independent
    True
    """

    def __init__(self, keys: np.ndarray):
        self.keys = np.asarray(keys, dtype=np.uint64).reshape(-1)

    @classmethod
    def for_items(cls, seed: int, indices: np.ndarray) -> KeyedRandom:
        """Rows keyed by ``(seed, index)``."""
        return cls(item_keys(seed, indices))

    @classmethod
    def from_generator(cls, rng: np.random.Generator, rows: int) -> KeyedRandom:
        """``rows`` keys drawn from a numpy ``Generator`` (for callers holding one)."""
        return cls(rng.integers(0, 2**63, size=rows, dtype=np.int64).astype(np.uint64))

    def __len__(self) -> int:
        return self.keys.size

    def child(self, name: str | int) -> KeyedRandom:
        """An independent stream per row, named ``name``."""
        return KeyedRandom(mix(self.keys ^ _name_code(name)))

    def take(self, rows: np.ndarray) -> KeyedRandom:
        """The streams of ``rows`` only (a row's numbers do not change)."""
        return KeyedRandom(self.keys[rows])

    def at(self, counters: np.ndarray) -> np.ndarray:
        """Uniforms in ``[0, 1)``: element ``[r, ...]`` is the number at ``counters[r, ...]`` of row ``r``.

        ``counters`` has the rows on its first axis (any trailing shape), non-negative integers.
        """
        return self.mantissas(counters).astype(np.float64) * _TO_UNIT

    def mantissas(self, counters: np.ndarray) -> np.ndarray:
        """The integers ``m < 2**53`` behind :meth:`at`: its uniform is exactly ``m * 2**-53``, so ``at(c) >= p``
        holds exactly when ``mantissas(c) >= ceil(p * 2**53)``.

        >>> rng = KeyedRandom.for_items(seed=0, indices=np.arange(2))
        >>> bool((rng.mantissas(np.array([3, 4])) * 2.0**-53 == rng.at(np.array([3, 4]))).all())
        True
        """
        counters = np.asarray(counters, dtype=np.int64)
        keys = self.keys.reshape((-1,) + (1,) * (counters.ndim - 1))
        z = np.broadcast_to(counters, np.broadcast_shapes(counters.shape, keys.shape)).astype(np.uint64)
        with np.errstate(over="ignore"):
            z *= _GOLDEN
        z ^= keys
        z = _mix_into(z)
        z >>= np.uint64(11)
        return z

    def uniform(self, width: int | None = None) -> np.ndarray:
        """``(rows,)`` uniforms (counter 0), or ``(rows, width)`` (counters ``0 .. width-1``)."""
        if width is None:
            return self.at(np.zeros(len(self), dtype=np.int64))
        return self.at(np.broadcast_to(np.arange(width), (len(self), width)))

    def ragged(self, counts: np.ndarray) -> np.ndarray:
        """Concatenated uniforms, ``counts[r]`` of them for row ``r`` (counters ``0 .. counts[r]-1``)."""
        counts = np.asarray(counts, dtype=np.int64)
        rows = np.repeat(np.arange(len(self)), counts)
        counters = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return KeyedRandom(self.keys[rows]).at(counters)

    def integers(self, low: int, high: np.ndarray | int) -> np.ndarray:
        """``(rows,)`` integers uniform in ``[low, high)`` (``high`` per row or shared)."""
        return low + np.floor(self.uniform() * (np.asarray(high) - low)).astype(np.int64)

    def generator(self, row: int) -> np.random.Generator:
        """A numpy ``Generator`` (Philox keyed by the row's key) for draws that are easiest written per row."""
        return np.random.Generator(np.random.Philox(key=int(self.keys[row])))
