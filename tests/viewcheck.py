"""Bit-level comparisons of view batches, shared by the augmentation tests."""
import numpy as np

from gcc_sgcl.sampling.batch import ViewBatch


def snapshot(views: ViewBatch) -> dict[str, np.ndarray]:
    """Copies of every array of ``views``."""
    return {name: np.array(a, copy=True) for name, a in views.to_arrays().items()}


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaN padding included)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def views_equal(a: ViewBatch, b: ViewBatch) -> bool:
    """Every array of the two batches bit for bit equal."""
    sa, sb = a.to_arrays(), b.to_arrays()
    return sa.keys() == sb.keys() and all(same_bits(sa[n], sb[n]) for n in sa)


def unchanged(views: ViewBatch, snap: dict[str, np.ndarray]) -> bool:
    """Whether ``views`` still holds exactly the arrays of :func:`snapshot` ``snap``."""
    now = views.to_arrays()
    return now.keys() == snap.keys() and all(same_bits(now[n], snap[n]) for n in snap)
