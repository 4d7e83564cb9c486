"""The Random baseline of the SGCL paper's similarity table (taken from GCC's): every node, or every graph, gets an
independent standard-normal vector of ``hidden`` columns, drawn from ``rng``. It knows nothing of the graph, so its
scores are the level of chance under each task's protocol.

>>> import numpy as np
>>> embed_rows(3, 4, np.random.default_rng(0)).shape
(3, 4)
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np


def embed_rows(count: int, hidden: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` rows of ``hidden`` independent N(0, 1) draws."""
    if hidden < 1:
        raise ValueError(f"the random embedding needs hidden >= 1, got {hidden}")
    return rng.standard_normal((count, hidden))


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """One random row per node of ``graphs``, in order."""
    return embed_rows(sum(g.num_nodes() for g in graphs), hidden, rng)


def embed_graphs(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """One random row per graph."""
    return embed_rows(len(graphs), hidden, rng)
