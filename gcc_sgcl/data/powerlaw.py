"""A seeded Chung–Lu power-law graph built with numpy, for memory and speed tests at the paper's scale.

Node ``i`` gets the expected degree ``w_i ∝ (i + 1)^(-1/(γ-1))`` (a degree distribution with tail exponent
``γ``), scaled to the requested mean degree and capped at ``max_degree`` (default ``sqrt(2·num_edges)``,
i.e. ``sqrt(Σ w)`` before the cap: the usual Chung–Lu bound). Each of ``num_edges`` edges draws both
endpoints independently ∝ ``w``; self-loops and repeated pairs are then dropped, so the graph has slightly
fewer than ``num_edges`` undirected edges.

The ``2·num_edges`` endpoints are drawn as multinomial counts per node, laid out and shuffled — the same
distribution as i.i.d. draws, several times faster than ``Generator.choice(p=…)`` (a binary search per
draw over a CDF of ``num_nodes`` entries).
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.data.graphs import simple_undirected_graph


def powerlaw_weights(
    num_nodes: int, num_edges: int, exponent: float = 2.5, max_degree: float | None = None
) -> np.ndarray:
    """Expected degrees ``w`` (float64, descending) with mean ``2·num_edges/num_nodes`` before the cap."""
    if num_nodes < 2 or num_edges < 1:
        raise ValueError(f"num_nodes must be >= 2 and num_edges >= 1, got {num_nodes} and {num_edges}")
    if exponent <= 2.0:
        raise ValueError(f"exponent (power-law tail γ) must be > 2 for a finite mean degree, got {exponent}")
    w = np.arange(1, num_nodes + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    w *= 2.0 * num_edges / w.sum()
    cap = np.sqrt(2.0 * num_edges) if max_degree is None else float(max_degree)
    if cap <= 0:
        raise ValueError(f"max_degree must be > 0, got {max_degree}")
    return np.minimum(w, cap)


def powerlaw_graph(
    num_nodes: int,
    num_edges: int,
    rng: np.random.Generator,
    exponent: float = 2.5,
    max_degree: float | None = None,
) -> dgl.DGLGraph:
    """A Chung–Lu graph (see the module docstring) as a simple bidirected ``int64`` DGLGraph.

    >>> g = powerlaw_graph(1000, 5000, np.random.default_rng(0))
    >>> g.num_nodes(), 4800 < g.num_edges() // 2 <= 5000
    (1000, True)
    """
    w = powerlaw_weights(num_nodes, num_edges, exponent, max_degree)
    ends = np.repeat(np.arange(num_nodes, dtype=np.int64), rng.multinomial(2 * num_edges, w / w.sum()))
    rng.shuffle(ends)
    return simple_undirected_graph(ends[:num_edges], ends[num_edges:], num_nodes)
