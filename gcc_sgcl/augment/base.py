"""Transform protocols and torchvision-style combinators.

A :class:`Transform` acts on a whole :class:`~gcc_sgcl.sampling.batch.ViewBatch` with torchvision v2's names:
``make_params(views, rng)`` draws every random parameter (per view, from the batch's
:class:`~gcc_sgcl.sampling.keys.KeyedRandom`), ``transform(views, params)`` applies them deterministically, and
``forward(views, rng)`` does both. Calling a transform runs ``forward``; it also accepts a ``DGLGraph`` view (or a
batched one) and a numpy ``Generator``, and then returns a ``DGLGraph``. The combinators (:class:`Compose`,
:class:`RandomChoice`) override ``forward`` instead: their draws are their children's, each from its own stream.

Pair steps (:class:`PairTransform`: alignment, or a view transform applied to both views) map ``(q, k, rng)`` to
``(q, k)``. No transform mutates its input: results are new batches whose changed arrays are new arrays.
"""
from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence
from typing import Any, Protocol

import dgl
import numpy as np

from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, GLOBAL, NID, PE, SEED


def check_probability(name: str, p: float) -> float:
    """``p`` as a float; ``ValueError`` naming the parameter ``name`` unless ``0 <= p <= 1``."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    return float(p)


def block_repr(name: str, children: Sequence[object], notes: Sequence[str] | None = None) -> str:
    """Multi-line ``repr`` of a container, one (indented) child per line, optionally annotated."""
    lines = [repr(child) for child in children]
    if notes is not None:
        lines = [f"{line}  # {note}" for line, note in zip(lines, notes)]
    return f"{name}(\n" + textwrap.indent("\n".join(lines), "    ") + "\n)"


class Transform:
    """Base of view transforms: subclasses define ``make_params`` (random draws) and ``transform`` (deterministic).

    The ``repr`` lists the constructor's arguments, read from the attributes of the same names.
    """

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> Any:
        """The random parameters of every view (row ``b`` of ``rng`` for view ``b``)."""
        return None

    def transform(self, views: ViewBatch, params: Any) -> ViewBatch:
        """The transformed views for the drawn ``params``."""
        raise NotImplementedError

    def forward(self, views: ViewBatch, rng: KeyedRandom) -> ViewBatch:
        """Draw, then transform."""
        return self.transform(views, self.make_params(views, rng))

    def __call__(self, views: ViewBatch | dgl.DGLGraph, rng: KeyedRandom | np.random.Generator) -> Any:
        batch = ViewBatch.from_dgl(views) if isinstance(views, dgl.DGLGraph) else views
        if isinstance(rng, np.random.Generator):
            rng = KeyedRandom.from_generator(rng, len(batch))
        out = self.forward(batch, rng)
        if not isinstance(views, dgl.DGLGraph):
            return out
        return out.to_dgl((PE, EIGVEC, EIGVAL, SEED, NID) + ((GLOBAL,) if out.global_rows is not None else ()))

    def __repr__(self) -> str:
        params = inspect.signature(type(self).__init__).parameters.values()
        names = [p.name for p in params if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD]
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"


class Identity(Transform):
    """Returns the views unchanged (the "no augmentation" outcome of a :class:`RandomChoice`)."""

    def transform(self, views: ViewBatch, params: Any) -> ViewBatch:
        return views


class Compose(Transform):
    """Apply view transforms in order (transform ``i`` draws from stream ``i``).

    >>> Compose([Identity(), Identity()])
    Compose(
        Identity()
        Identity()
    )
    """

    def __init__(self, transforms: Sequence[Transform]):
        self.transforms = list(transforms)

    def forward(self, views: ViewBatch, rng: KeyedRandom) -> ViewBatch:
        for i, t in enumerate(self.transforms):
            views = t.forward(views, rng.child(i))
        return views

    def __repr__(self) -> str:
        return block_repr("Compose", self.transforms)


def apply_by_group(
    views: ViewBatch, groups: np.ndarray, transforms: Sequence[Transform], rng: KeyedRandom
) -> ViewBatch:
    """Views of group ``j`` (``groups[b] == j``) transformed by ``transforms[j]`` (stream ``j``), the rest kept."""
    changed = [(rows, t.forward(views.select(rows), rng.take(rows).child(j)))
               for j, t in enumerate(transforms)
               for rows in [np.flatnonzero(groups == j)] if len(rows) and not isinstance(t, Identity)]
    return views.update_many(changed)


class RandomChoice(Transform):
    """Apply one of ``transforms`` to each view, picked with probabilities proportional to ``weights``.

    >>> RandomChoice([Identity(), Identity()], weights=[0.25, 0.75])
    RandomChoice(
        Identity()  # p=0.25
        Identity()  # p=0.75
    )
    """

    def __init__(self, transforms: Sequence[Transform], weights: Sequence[float] | None = None):
        if not transforms:
            raise ValueError("transforms must not be empty")
        w = np.ones(len(transforms)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(transforms),):
            raise ValueError(f"weights must have one entry per transform ({len(transforms)}), got {len(w)}")
        if (w < 0).any() or not w.sum() > 0:
            raise ValueError(f"weights must be non-negative with a positive sum, got {w.tolist()}")
        self.transforms = list(transforms)
        self.probs = w / w.sum()
        self._cdf = self.probs.cumsum()
        self._cdf /= self._cdf[-1]

    def choose(self, rng: KeyedRandom) -> np.ndarray:
        """Index of the transform picked for each row."""
        return self._cdf.searchsorted(rng.child("choice").uniform(), side="right").clip(max=len(self.transforms) - 1)

    def forward(self, views: ViewBatch, rng: KeyedRandom) -> ViewBatch:
        return apply_by_group(views, self.choose(rng), self.transforms, rng)

    def __repr__(self) -> str:
        return block_repr("RandomChoice", self.transforms, [f"p={p:.4g}" for p in self.probs])


class PairTransform(Protocol):
    """``t(q, k, rng) -> (q, k)`` for steps that look at both views of a positive pair."""

    def __call__(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]: ...


class Both:
    """A pair step applying one view transform to the query and the key views independently.

    >>> Both(Identity())
    Both(
        Identity()
    )
    """

    def __init__(self, transform: Transform):
        self.transform = transform

    def __call__(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]:
        return self.transform.forward(q, rng.child("q")), self.transform.forward(k, rng.child("k"))

    def __repr__(self) -> str:
        return block_repr("Both", [self.transform])


class Split:
    """A pair step with one view transform for the query views and another for the keys.

    >>> Split(Identity(), Identity())
    Split(
        Identity()  # query
        Identity()  # key
    )
    """

    def __init__(self, query: Transform, key: Transform):
        self.query = query
        self.key = key

    def __call__(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]:
        return self.query.forward(q, rng.child("q")), self.key.forward(k, rng.child("k"))

    def __repr__(self) -> str:
        return block_repr("Split", [self.query, self.key], ["query", "key"])

