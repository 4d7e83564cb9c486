"""ProNE: fast and scalable network embedding (Zhang, Dong, Wang, Tang and Ding, IJCAI 2019).

Two steps, written from the paper with scipy and scikit-learn (no maintained package installs with this
stack: ``karateclub`` pins numpy < 1.23, ``nodevectors`` needs pandas):

1. *Sparse matrix factorisation.* On the edges ``(i, j)`` only, ``M_ij = log p_ij - log P_j`` with
   ``p_ij = A_ij / d_i`` the random-walk transition probability and ``P_j`` the negative-sampling
   distribution ``(sum_i p_ij)^0.75``, normalised to sum 1 (one negative per positive). A randomized
   truncated SVD ``M ≈ U Σ V^T`` (``sklearn.utils.extmath.randomized_svd``, 5 power iterations) gives
   ``R = U Σ^1/2`` with L2-normalised rows.
2. *Spectral propagation.* With self-loops added (``Ã = A + I``, ``D̃`` its degrees) and the random-walk
   Laplacian ``L = I - D̃^-1 Ã`` (spectrum in ``[0, 2)``), the band-pass filter
   ``g(λ) = exp(-θ/2 ((λ - μ)^2 - 1))`` is applied through its Chebyshev expansion in
   ``X = (L - μ I)^2 / 2 - I`` (spectrum in ``[-1, 1]``): ``exp(-θ x) = I_0(θ) + 2 Σ_k (-1)^k I_k(θ) T_k(x)``
   with modified Bessel functions ``I_k``, truncated to ``order`` terms. The propagated matrix
   ``D̃^-1 Ã (R - g(L) R)`` is re-orthogonalised by a dense SVD into ``U_d Σ_d^1/2``, rows L2-normalised
   (the authors' code multiplies by ``Ã`` itself and leaves out ``g``'s constant factor ``e^(-θ/2)``).

Defaults follow the paper: ``order = 10``, ``μ = 0.2``, ``θ = 0.5`` (its dimension 128 is ``--hidden`` here).
The embedding of a graph is defined up to a rotation, so the rows of two different graphs (a similarity
dataset's pair) are not comparable with each other.
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
from scipy.special import iv
from sklearn.preprocessing import normalize
from sklearn.utils.extmath import randomized_svd
from threadpoolctl import threadpool_limits

from gcc_sgcl.classical.common import adjacency

ORDER = 10
MU = 0.2
THETA = 0.5
NEGATIVE_POWER = 0.75
POWER_ITERATIONS = 5


def sparse_factorization(adj: sp.csr_matrix, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Step 1: the ``(n, dim)`` rows ``U Σ^1/2`` (L2-normalised) of the randomized tSVD of ProNE's matrix."""
    deg = np.diff(adj.indptr).astype(np.float64)
    transition = sp.diags(np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)) @ adj
    negative = np.asarray(transition.sum(axis=0)).ravel() ** NEGATIVE_POWER
    negative /= negative.sum()
    target = transition.tocsr()
    target.data = np.log(target.data) - np.log(negative[target.indices])
    u, sigma, _ = randomized_svd(
        target, n_components=dim, n_iter=POWER_ITERATIONS, random_state=int(rng.integers(2**31 - 1))
    )
    return normalize(u * np.sqrt(sigma))


def spectral_propagation(
    adj: sp.csr_matrix, features: np.ndarray, order: int = ORDER, mu: float = MU, theta: float = THETA
) -> np.ndarray:
    """Step 2: ``features`` filtered by ProNE's band-pass ``g(L)``, propagated and re-orthogonalised."""
    if order < 2:
        raise ValueError(f"order (number of Chebyshev terms) must be >= 2, got {order}")
    n = adj.shape[0]
    looped = (adj + sp.identity(n, format="csr")).tocsr()
    walk = sp.diags(1.0 / np.asarray(looped.sum(axis=1)).ravel()) @ looped
    shifted = sp.identity(n, format="csr") * (1.0 - mu) - walk  # L - μ I

    def apply_x(v: np.ndarray) -> np.ndarray:
        return 0.5 * (shifted @ (shifted @ v)) - v

    previous, current = features, apply_x(features)
    filtered = iv(0, theta) * previous - 2 * iv(1, theta) * current
    for k in range(2, order):
        previous, current = current, 2 * apply_x(current) - previous
        filtered += 2 * (-1) ** k * iv(k, theta) * current
    filtered *= np.exp(-theta / 2)  # exp(-θ/2 ((λ-μ)^2 - 1)) = e^(-θ/2) exp(-θ x) with x = (λ-μ)^2/2 - 1
    propagated = walk @ (features - filtered)
    u, sigma, _ = np.linalg.svd(propagated, full_matrices=False)
    return normalize(u * np.sqrt(sigma))


def prone_embedding(
    g: dgl.DGLGraph, dim: int, rng: np.random.Generator, order: int = ORDER, mu: float = MU, theta: float = THETA
) -> np.ndarray:
    """The ``(num_nodes, dim)`` ProNE embedding of ``g`` (randomness: the tSVD's start, drawn from ``rng``)."""
    adj = adjacency(g)
    if not 1 <= dim < adj.shape[0]:
        raise ValueError(f"ProNE dimension (--hidden) must be in [1, {adj.shape[0]}) for a graph of "
                         f"{adj.shape[0]} nodes, got {dim}")
    # tall-skinny dense algebra gains little from BLAS threads; on the shared 2-core machine one thread was
    # several times faster (0.2-0.8 s against 5 s on synthetic-roles)
    with threadpool_limits(limits=1, user_api="blas"):
        return spectral_propagation(adj, sparse_factorization(adj, dim, rng), order, mu, theta)


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`prone_embedding` of each graph with ``hidden`` dimensions, rows stacked in order."""
    return np.concatenate([prone_embedding(g, hidden, rng) for g in graphs])
