"""Transform protocols, torchvision-style combinators and the name -> class registry.

Two protocols, both drawing every random parameter from the ``numpy.random.Generator`` they are given:

* :class:`ViewTransform` -- ``t(view, rng) -> view``: one view in, a new view out.
* :class:`PairTransform` -- ``t(q, k, rng) -> (q, k)``: steps that need both views of a positive pair
  (alignment).

No transform mutates its input: a result either is the input itself (nothing changed) or a new graph whose
changed features are new tensors (query and key views come from the same subgraph and may share tensors).
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar

import dgl
import numpy as np

T = TypeVar("T")


class ViewTransform(Protocol):
    """``t(view, rng) -> view``; random parameters come from ``rng`` only; the input is never mutated."""

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph: ...


class PairTransform(Protocol):
    """``t(q, k, rng) -> (q, k)`` for steps that look at both views of a positive pair."""

    def __call__(
        self, q: dgl.DGLGraph, k: dgl.DGLGraph, rng: np.random.Generator
    ) -> tuple[dgl.DGLGraph, dgl.DGLGraph]: ...


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


class Identity:
    """Returns the view unchanged (the "no augmentation" outcome of a :class:`RandomChoice`)."""

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        return view

    def __repr__(self) -> str:
        return "Identity()"


class Compose:
    """Apply view transforms in order.

    >>> Compose([Identity(), RandomApply(Identity(), p=0.5)])
    Compose(
        Identity()
        RandomApply(Identity(), p=0.5)
    )
    """

    def __init__(self, transforms: Sequence[ViewTransform]):
        self.transforms = list(transforms)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        for t in self.transforms:
            view = t(view, rng)
        return view

    def __repr__(self) -> str:
        return block_repr("Compose", self.transforms)


class RandomApply:
    """Apply ``transform`` with probability ``p`` (one uniform draw per call, whatever ``p``)."""

    def __init__(self, transform: ViewTransform, p: float):
        self.transform = transform
        self.p = check_probability("p", p)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        return self.transform(view, rng) if rng.random() < self.p else view

    def __repr__(self) -> str:
        return f"RandomApply({self.transform!r}, p={self.p})"


class RandomChoice:
    """Apply one of ``transforms``, picked with probabilities proportional to ``weights``.

    >>> RandomChoice([Identity(), Identity()], weights=[0.25, 0.75])
    RandomChoice(
        Identity()  # p=0.25
        Identity()  # p=0.75
    )
    """

    def __init__(self, transforms: Sequence[ViewTransform], weights: Sequence[float] | None = None):
        if not transforms:
            raise ValueError("transforms must not be empty")
        w = np.ones(len(transforms)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(transforms),):
            raise ValueError(f"weights must have one entry per transform ({len(transforms)}), got {len(w)}")
        if (w < 0).any() or not w.sum() > 0:
            raise ValueError(f"weights must be non-negative with a positive sum, got {w.tolist()}")
        self.transforms = list(transforms)
        self.probs = w / w.sum()
        # ``rng.choice(len(transforms), p=probs)`` bisects this cumulative sum with one ``rng.random()``
        # draw; doing so directly is the same draw without rebuilding and re-checking ``probs`` per call.
        self._cdf = self.probs.cumsum()
        self._cdf /= self._cdf[-1]

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        return self.transforms[int(self._cdf.searchsorted(rng.random(), side="right"))](view, rng)

    def __repr__(self) -> str:
        return block_repr("RandomChoice", self.transforms, [f"p={p:.4g}" for p in self.probs])


class Registry(Generic[T]):
    """Name -> class (or factory) table, so pipelines are built from config strings without ``if/elif``.

    >>> kinds = Registry[type]("kind")
    >>> _ = kinds.register("identity")(Identity)
    >>> kinds["identity"]()
    Identity()
    >>> kinds["nope"]
    Traceback (most recent call last):
    ...
    ValueError: unknown kind 'nope'; choose from ['identity']
    """

    def __init__(self, what: str):
        self.what = what
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(entry: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.what} {name!r} is already registered")
            self._entries[name] = entry
            return entry

        return add

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            raise ValueError(f"unknown {self.what} {name!r}; choose from {sorted(self._entries)}")
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {sorted(self._entries)})"
