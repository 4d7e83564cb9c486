"""GraphWave: structural node embeddings from diffusion wavelets (Donnat, Zitnik, Hallac and Leskovec, KDD 2018).

Written from the paper with numpy/scipy (``karateclub``, which has GraphWave, pins numpy < 1.23 and pandas
and does not install with this stack). For each scale ``s`` the heat wavelet of node ``a`` is the column
``Ψ_s[:, a] = exp(-s L) δ_a`` of the heat kernel of the normalised Laplacian ``L = I - D^-1/2 A D^-1/2``;
node ``a`` is embedded by the empirical characteristic function of its wavelet coefficients,
``φ_a(t) = 1/n Σ_m exp(i t Ψ_s[m, a])``, sampled at ``hidden / (2 · #scales)`` points ``t`` evenly spaced in
``(0, 100]`` (the reference code samples ``[0, 100]``; ``t = 0`` is dropped since ``φ(0) = 1`` for every
node), real parts then imaginary parts, scale after scale.

Defaults, from the authors' reference implementation: two scales by its automatic rule with its default
approximation ``λ ≈ 1/n`` of the smallest non-zero eigenvalue, i.e. evenly spaced from
``-ln(0.95) · sqrt(n/2)`` to ``-ln(0.80) · sqrt(n/2)`` (1.25 to 5.45 on usa_airport's 1,190 nodes).
``exp(-s L)`` is applied as a Chebyshev polynomial of ``L`` on ``[0, 2]`` (``numpy.polynomial.Chebyshev``
interpolation, trimmed where the coefficients fall below 1e-10: degree 18 at usa_airport's ``s = 5.4``, 24
at h-index's ``s = 11.2``), block by block of columns, so memory stays ``O(n · block)``; being a polynomial
in ``L``, it gives structurally equivalent nodes identical rows. Deterministic: ``rng`` is unused.

Each graph is embedded on its own, as the reference code embeds one graph: its scales and the ``1/n`` of ``φ``
come from its own node count (isolated nodes included). The two graphs of a similarity-search pair (e.g.
KDD 2,867 nodes, ICDM 2,607) therefore get slightly different scales (1.94 / 8.45 against 1.85 / 8.06), so nodes
with the same neighbourhood in the two graphs need not get equal rows.
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
from numpy.polynomial import Chebyshev

from gcc_sgcl.classical.common import adjacency, normalized_laplacian

ETA_MIN = 0.80
ETA_MAX = 0.95
NUM_SCALES = 2
T_MAX = 100.0
CHEBYSHEV_TOL = 1e-10
_INTERPOLATION_DEGREE = 300  # the heat kernel is interpolated at this degree, then trimmed at CHEBYSHEV_TOL
_BLOCK_ENTRIES = 2**21  # wavelet entries (n x block columns) held per array while embedding


def default_scales(num_nodes: int) -> np.ndarray:
    """The reference implementation's automatic scales for a graph of ``num_nodes`` nodes (see above)."""
    spread = np.sqrt(0.5 * num_nodes)  # sqrt(0.5 / λ) with λ ≈ 1 / n
    return np.linspace(-np.log(ETA_MAX) * spread, -np.log(ETA_MIN) * spread, NUM_SCALES)


def heat_kernel_polynomials(scales: Sequence[float]) -> list[Chebyshev]:
    """Chebyshev approximations of ``λ -> exp(-s λ)`` on ``[0, 2]``, one per scale."""
    return [
        Chebyshev.interpolate(lambda x, s=s: np.exp(-s * x), _INTERPOLATION_DEGREE, domain=[0.0, 2.0]).trim(
            CHEBYSHEV_TOL
        )
        for s in scales
    ]


def heat_wavelets(lap: sp.csr_matrix, columns: np.ndarray, polys: Sequence[Chebyshev]) -> list[np.ndarray]:
    """``[p(L)[:, columns] for p in polys]``, dense ``(n, len(columns))``, by the Chebyshev recurrence
    ``T_k+1 = 2 (L - I) T_k - T_k-1`` (``L - I`` maps the polynomials' domain ``[0, 2]`` to their window)."""
    n = lap.shape[0]
    degree = max(p.degree() for p in polys)
    coef = np.zeros((len(polys), degree + 1))
    for row, p in zip(coef, polys):
        row[: p.degree() + 1] = p.coef
    shifted = (lap - sp.identity(n, format="csr")).tocsr()
    out = [np.zeros((n, len(columns))) for _ in polys]
    previous, current = None, np.zeros((n, len(columns)))
    current[columns, np.arange(len(columns))] = 1.0
    for k in range(degree + 1):
        for wavelets, c in zip(out, coef):
            wavelets += c[k] * current
        if k < degree:
            step = shifted @ current
            previous, current = current, step if previous is None else 2 * step - previous
    return out


def graphwave_embedding(g: dgl.DGLGraph, hidden: int, scales: Sequence[float] | None = None) -> np.ndarray:
    """The ``(num_nodes, hidden)`` GraphWave embedding of ``g`` at ``scales`` (default :func:`default_scales`)."""
    scales = default_scales(g.num_nodes()) if scales is None else np.asarray(scales, dtype=np.float64)
    points = hidden // (2 * len(scales))
    if points < 1 or hidden % (2 * len(scales)):
        raise ValueError(
            f"GraphWave's --hidden must be a positive multiple of 2 x {len(scales)} scales (real and imaginary "
            f"parts at each sample point of each scale), got {hidden}"
        )
    times = np.linspace(0.0, T_MAX, points + 1)[1:]
    n = g.num_nodes()
    lap = sp.csr_matrix(normalized_laplacian(adjacency(g)))
    polys = heat_kernel_polynomials(scales)
    out = np.empty((n, hidden))
    block = max(1, _BLOCK_ENTRIES // max(n, 1))
    for start in range(0, n, block):
        columns = np.arange(start, min(start + block, n))
        parts = []
        for wavelets in heat_wavelets(lap, columns, polys):
            parts.extend(np.cos(t * wavelets).mean(axis=0) for t in times)
            parts.extend(np.sin(t * wavelets).mean(axis=0) for t in times)
        out[columns] = np.stack(parts, axis=1)
    return out


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`graphwave_embedding` of each graph (its own default scales), rows stacked in order."""
    return np.concatenate([graphwave_embedding(g, hidden) for g in graphs])
