"""Spectral crop (SGCL's graph analogue of image cropping) and its random-crop control.

A crop box ``(x_min, x_max, y_min, y_max)`` holds rank percentiles: node ``v`` is kept when
``R_x_min <= x(v) <= R_x_max`` and ``R_y_min <= y(v) <= R_y_max``, where ``x``/``y`` are the eigenvectors of
``lambda_2``/``lambda_3`` and ``R_p`` is the ``p``-quantile of the values over the view's nodes (appendix,
"Augmentation details"). The centre node is always kept.

Both crops leave a view unchanged (and return it as is) when it has fewer than 3 valid eigen columns, when
the box would leave fewer than 3 nodes, or when it would drop nothing.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Identity, RandomChoice, Registry
from gcc_sgcl.sampling.view import PE

MIN_CROP_NODES = 3

CROP_BASES: Registry[Callable[[dgl.DGLGraph], tuple[np.ndarray, np.ndarray]]] = Registry("crop basis")
"""Where the crop coordinates come from: ``"normalized"`` -- the view's ``EIGVEC`` (the Laplacian of the
paper's text and positional embedding); ``"combinatorial"`` -- eigenvectors of ``D - A`` (the Laplacian of
the paper's grid/path theorems, where crops are exactly image crops)."""
CROP_BASES.register("normalized")(F.normalized_coordinates)
CROP_BASES.register("combinatorial")(F.combinatorial_coordinates)

CROPS: Registry[type] = Registry("crop_kind")
"""``"spectral"`` -> :class:`SpectralCrop`, ``"random"`` -> :class:`RandomCrop` (same constructor)."""

PAPER_CROP_TABLE: tuple[tuple[F.Box, float], ...] = (
    ((0.2, 0.8, 0.2, 0.8), 0.1),
    ((0.1, 0.9, 0.1, 0.9), 0.1),
    ((0.0, 0.8, 0.0, 0.8), 0.05),
    ((0.2, 1.0, 0.2, 1.0), 0.05),
)
"""The appendix's crops ``c_1..c_4`` as ``(box, probability)``; "no crop" takes the rest (``c_5 = 0.7``)."""


def _check_box(box: Sequence[float]) -> F.Box:
    b = tuple(float(v) for v in box)
    if len(b) != 4 or not all(0.0 <= v <= 1.0 for v in b) or b[0] > b[1] or b[2] > b[3]:
        raise ValueError(
            f"box must be (x_min, x_max, y_min, y_max) percentiles in [0, 1] with min <= max, got {box}"
        )
    return b  # type: ignore[return-value]


class _BoxCrop:
    """Arguments and box logic shared by :class:`SpectralCrop` and :class:`RandomCrop`."""

    def __init__(
        self,
        box: Sequence[float],
        recompute_pe: bool = True,
        k: int | None = None,
        basis: str = "normalized",
    ):
        if k is not None and k < 1:
            raise ValueError(f"k must be >= 1 or None, got {k}")
        self.box = _check_box(box)
        self.recompute_pe = bool(recompute_pe)
        self.k = k
        self.basis = basis
        self._coordinates = CROP_BASES[basis]

    def spectral_nodes(self, view: dgl.DGLGraph) -> np.ndarray | None:
        """Sorted ids of the nodes the spectral crop keeps, or ``None`` when it leaves ``view`` unchanged."""
        if F.num_valid(view) < 3:  # x, y are eigen columns 1 and 2
            return None
        nodes = F.box_nodes(*self._coordinates(view), self.box)
        return nodes if MIN_CROP_NODES <= nodes.size < view.num_nodes() else None

    def induce(self, view: dgl.DGLGraph, nodes: np.ndarray) -> dgl.DGLGraph:
        k = self.k if self.k is not None else view.ndata[PE].shape[1]
        return F.induced_view(view, nodes, self.recompute_pe, k)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(box={self.box}, recompute_pe={self.recompute_pe}, k={self.k}, "
            f"basis={self.basis!r})"
        )


@CROPS.register("spectral")
class SpectralCrop(_BoxCrop):
    """Keep the nodes inside a percentile box of the (``lambda_2``, ``lambda_3``) eigenvector coordinates.

    Args:
        box: ``(x_min, x_max, y_min, y_max)`` rank percentiles in ``[0, 1]``.
        recompute_pe: recompute the eigen features of the cropped graph (default); ``False`` keeps the rows
            of the old ones (ablation).
        k: positional-embedding size when recomputing; ``None`` keeps the view's.
        basis: key of :data:`CROP_BASES`.

    >>> SpectralCrop((0.2, 0.8, 0.2, 0.8))
    SpectralCrop(box=(0.2, 0.8, 0.2, 0.8), recompute_pe=True, k=None, basis='normalized')
    """

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        nodes = self.spectral_nodes(view)
        return view if nodes is None else self.induce(view, nodes)


@CROPS.register("random")
class RandomCrop(_BoxCrop):
    """Control for :class:`SpectralCrop`: drops as many nodes as the spectral crop with the same box would,
    chosen uniformly at random among the non-centre nodes (same arguments, same unchanged cases)."""

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        spectral = self.spectral_nodes(view)
        if spectral is None:
            return view
        others = rng.choice(np.arange(1, view.num_nodes()), size=spectral.size - 1, replace=False)
        return self.induce(view, np.sort(np.concatenate([[0], others])))


def paper_crop(
    recompute_pe: bool = True,
    *,
    kind: str = "spectral",
    table: Sequence[tuple[Sequence[float], float]] = PAPER_CROP_TABLE,
    basis: str = "normalized",
) -> RandomChoice:
    """One crop per call drawn from ``table`` (``(box, probability)`` rows), no crop with the remaining mass.

    ``kind`` is a key of :data:`CROPS` (``"random"`` builds the random-crop control of the same table).

    >>> paper_crop()  # doctest: +ELLIPSIS
    RandomChoice(
        SpectralCrop(box=(0.2, 0.8, 0.2, 0.8), ...)  # p=0.1
        SpectralCrop(box=(0.1, 0.9, 0.1, 0.9), ...)  # p=0.1
        SpectralCrop(box=(0.0, 0.8, 0.0, 0.8), ...)  # p=0.05
        SpectralCrop(box=(0.2, 1.0, 0.2, 1.0), ...)  # p=0.05
        Identity()  # p=0.7
    )
    """
    probs = [float(p) for _, p in table]
    if any(p < 0 for p in probs) or sum(probs) > 1.0 + 1e-9:
        raise ValueError(f"table probabilities must be non-negative and sum to <= 1, got {probs}")
    crops = [CROPS[kind](box, recompute_pe=recompute_pe, basis=basis) for box, _ in table]
    return RandomChoice([*crops, Identity()], weights=[*probs, max(0.0, 1.0 - sum(probs))])


def paper_random_crop(
    recompute_pe: bool = True,
    *,
    table: Sequence[tuple[Sequence[float], float]] = PAPER_CROP_TABLE,
    basis: str = "normalized",
) -> RandomChoice:
    """:func:`paper_crop` with :class:`RandomCrop` (the ablation's random-crop control)."""
    return paper_crop(recompute_pe, kind="random", table=table, basis=basis)
