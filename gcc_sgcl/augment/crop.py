"""Spectral crop (SGCL's graph analogue of image cropping) and its random-crop control.

A crop box ``(x_min, x_max, y_min, y_max)`` holds rank percentiles: node ``v`` is kept when
``R_x_min <= x(v) <= R_x_max`` and ``R_y_min <= y(v) <= R_y_max``, where ``x``/``y`` are the eigenvectors of
``lambda_2``/``lambda_3`` (signs as the view drew them) and ``R_p`` is the ``p``-quantile of the values over the
view's nodes (appendix, "Augmentation details"). The centre node is always kept.

Both crops leave a view unchanged when it has fewer than 3 valid eigen columns, when the box would leave fewer
than 3 nodes, or when it would drop nothing. Cropped views get fresh eigen-features (one batched
eigendecomposition over all cropped views) unless ``recompute_pe`` is off (an ablation).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Identity, RandomChoice, Transform
from gcc_sgcl.config import PAPER_CROP_TABLE, Box
from gcc_sgcl.registry import Registry
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom

MIN_CROP_NODES = 3

CROP_BASES: Registry[Callable[[ViewBatch], tuple[np.ndarray, np.ndarray]]] = Registry("crop basis")
"""Where the crop coordinates come from: ``"normalized"`` -- the views' ``EIGVEC`` (the Laplacian of the
paper's text and positional embedding); ``"combinatorial"`` -- eigenvectors of ``D - A`` (the Laplacian of
the paper's grid/path theorems, where crops are exactly image crops)."""
CROP_BASES.register("normalized")(F.normalized_coordinates)
CROP_BASES.register("combinatorial")(F.combinatorial_coordinates)

CROPS: Registry[type] = Registry("crop_kind")
"""``"spectral"`` -> :class:`SpectralCrop`, ``"random"`` -> :class:`RandomCrop` (same constructor)."""


class CropParams(NamedTuple):
    keep: np.ndarray  # (N,) node rows kept
    signs: KeyedRandom  # sign stream of the recomputed eigen-features


def _check_box(box: Sequence[float]) -> Box:
    b = tuple(float(v) for v in box)
    if len(b) != 4 or not all(0.0 <= v <= 1.0 for v in b) or b[0] > b[1] or b[2] > b[3]:
        raise ValueError(
            f"box must be (x_min, x_max, y_min, y_max) percentiles in [0, 1] with min <= max, got {box}"
        )
    return b  # type: ignore[return-value]


class _BoxCrop(Transform):
    """Arguments and box logic shared by :class:`SpectralCrop` and :class:`RandomCrop`."""

    def __init__(self, box: Sequence[float], recompute_pe: bool = True, basis: str = "normalized"):
        self.box = _check_box(box)
        self.recompute_pe = bool(recompute_pe)
        self.basis = basis
        self._coordinates = CROP_BASES[basis]

    def spectral_keep(self, views: ViewBatch) -> np.ndarray:
        """``(N,)`` nodes the spectral crop keeps (every node of the views it leaves unchanged)."""
        keep = F.box_keep(*self._coordinates(views), views, self.box)
        kept = np.bincount(views.node_view[keep], minlength=len(views))
        cropped = (views.num_valid >= 3) & (kept >= MIN_CROP_NODES) & (kept < views.num_nodes)
        return keep | ~cropped[views.node_view]

    def transform(self, views: ViewBatch, params: CropParams) -> ViewBatch:
        return F.crop_views(views, params.keep, self.recompute_pe, params.signs)


@CROPS.register("spectral")
class SpectralCrop(_BoxCrop):
    """Keep the nodes inside a percentile box of the (``lambda_2``, ``lambda_3``) eigenvector coordinates.

    Args:
        box: ``(x_min, x_max, y_min, y_max)`` rank percentiles in ``[0, 1]``.
        recompute_pe: recompute the eigen features of cropped views (default); ``False`` keeps the rows of
            the old ones (ablation).
        basis: key of :data:`CROP_BASES`.

    >>> SpectralCrop((0.2, 0.8, 0.2, 0.8))
    SpectralCrop(box=(0.2, 0.8, 0.2, 0.8), recompute_pe=True, basis='normalized')
    """

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> CropParams:
        return CropParams(self.spectral_keep(views), rng.child("crop"))


@CROPS.register("random")
class RandomCrop(_BoxCrop):
    """Control for :class:`SpectralCrop`: drops as many nodes as the spectral crop with the same box would,
    chosen uniformly at random among the non-centre nodes (same arguments, same unchanged cases)."""

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> CropParams:
        counts = np.bincount(views.node_view[self.spectral_keep(views)], minlength=len(views))
        return CropParams(F.random_keep(views, counts, rng.child("nodes").ragged(views.num_nodes)), rng.child("crop"))


def paper_crop(
    recompute_pe: bool = True,
    *,
    kind: str = "spectral",
    table: Sequence[tuple[Sequence[float], float]] = PAPER_CROP_TABLE,
    basis: str = "normalized",
) -> RandomChoice:
    """One crop per view drawn from ``table`` (``(box, probability)`` rows), no crop with the remaining mass.

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
