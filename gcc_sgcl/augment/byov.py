"""BYOV's learned views (You et al., WSDM 2022, "Bringing Your Own View"), re-implemented on GCC views.

BYOV replaces GraphCL's prefabricated augmentations by two learned graph generators, one per view, trained in
tandem with the encoder (Shen-Lab/GraphCL_Automated, ``semisupervised_TU_LP/pretrain``). Here each generator works
on one RWR view of a pair -- generator 1 on the query's, generator 2 on the key's -- as BYOV's does on a TU graph:

* encoder (``res_gcn.py`` ``vgae_encoder``): node inputs (the view's ``PE``, the centre flag, ``log(1 + degree)``;
  BYOV reads the dataset's degree features) -> batch norm -> a feature layer -> ``layers`` GCN layers (batch norm,
  propagation ``D^-1/2 (A + I) D^-1/2``, ReLU) -> a mean and a softplus standard deviation per node;
  ``z = mean + std * eps``;
* decoder (``vgae_decoder``): the logit of an edge ``(u, v)`` is ``MLP(z_u * z_v)``;
* a view (``vgae.generate``, ``tu_dataset.py`` ``generator_generate``): the transition matrix ``P`` =
  row-normalised ``exp(MLP(z_u * z_v))`` without its diagonal, entries below ``threshold`` dropped, rows left empty
  made uniform, rows renormalised; ``walks`` walks of ``walk_length`` steps on ``P``; the view holds the nodes
  visited and the steps taken, as undirected edges, with its own eigen features. BYOV starts its walks from
  uniformly chosen nodes; here the first starts from the view's centre, which every GCC view keeps;
* training, InfoMin (``experiment_generative.py``; ``main.py`` reaches it with ``--principle infomax`` and saves its
  weights as ``weights_infomin``): after each encoder step, each generator's VGAE loss on its source views -- per
  view, the mean BCE of its edges plus that of as many uniformly drawn non-edges, times the pair's reward (1 when
  the pair's contrastive loss is above the batch mean, else ``low_reward``), plus the mean KL of its nodes divided
  by its node count -- is minimised by Adam.

BYOV builds the views in its DataLoader from a copy of the generators taken once an epoch; here they are generated
in the training process by the current generators, at every step.
"""
from __future__ import annotations

from dataclasses import dataclass

import dgl
import numpy as np
import torch
import torch.nn.functional as TF
from torch import nn

from gcc_sgcl.augment import functional as F
from gcc_sgcl.sampling.batch import ViewBatch, offsets
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.spectral import eigen_arrays
from gcc_sgcl.sampling.view import PE, SEED
from gcc_sgcl.sampling.induced import sign_draws


@dataclass(frozen=True)
class Source:
    """The structure and inputs of a batch of views a generator reads (from a batched ``DGLGraph`` with ``PE`` and
    ``SEED``): batched edge endpoints (both directions, view after view), nodes and edges per view, centre rows, node
    inputs and the normalised adjacency ``D^-1/2 (A + I) D^-1/2`` of BYOV's ``GCNConv`` (``edge_norm``)."""

    num_nodes: np.ndarray
    num_edges: np.ndarray
    src: torch.Tensor
    dst: torch.Tensor
    seed_rows: np.ndarray
    inputs: torch.Tensor
    adjacency: torch.Tensor

    @classmethod
    def of(cls, g: dgl.DGLGraph) -> Source:
        src, dst = (e.long() for e in g.edges(order="eid"))
        n = g.num_nodes()
        degree = g.in_degrees().to(torch.float32)
        seed = g.ndata[SEED].to(torch.float32)
        inputs = torch.cat([g.ndata[PE].to(torch.float32), seed[:, None], torch.log1p(degree)[:, None]], dim=1)
        return cls(g.batch_num_nodes().numpy().astype(np.int64), g.batch_num_edges().numpy().astype(np.int64),
                   src, dst, np.flatnonzero(g.ndata[SEED].numpy()), inputs, normalized_adjacency(src, dst, n))

    @property
    def node_ptr(self) -> np.ndarray:
        return offsets(self.num_nodes)

    def local_edges(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """View ``b``'s undirected edges ``(u, v)``, ``u < v``, in its local ids."""
        lo, hi = offsets(self.num_edges)[b:b + 2]
        base = self.node_ptr[b]
        return F.undirected_pairs(self.src[lo:hi].numpy() - base, self.dst[lo:hi].numpy() - base)


def normalized_adjacency(src: torch.Tensor, dst: torch.Tensor, n: int) -> torch.Tensor:
    """``D^-1/2 (A + I) D^-1/2`` of the directed edges ``src -> dst`` (row = target) as a sparse ``(n, n)`` tensor.

    >>> normalized_adjacency(torch.tensor([0, 1]), torch.tensor([1, 0]), 2).to_dense().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    degree = torch.bincount(dst, minlength=n).to(torch.float32) + 1.0
    loops = torch.arange(n)
    rows, cols = torch.cat([dst, loops]), torch.cat([src, loops])
    values = (degree[rows] * degree[cols]).rsqrt()
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), values, (n, n), check_invariants=False).coalesce()


class ViewGenerator(nn.Module):
    """One of BYOV's two generators, a VGAE on views with ``k`` PE columns (module docstring).

    >>> ViewGenerator(8, hidden=4, layers=2).convs
    ModuleList(
      (0-1): 2 x Linear(in_features=4, out_features=4, bias=True)
    )
    """

    def __init__(self, k: int, hidden: int = 32, layers: int = 3):
        super().__init__()
        width = k + 2
        self.input_norm = nn.BatchNorm1d(width)
        self.features = nn.Linear(width, hidden)
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers))
        self.convs = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.mean = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.std = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.Softplus())
        self.decoder = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        for m in self.modules():  # BYOV's ResGCN initialises its batch norms so
            if isinstance(m, nn.BatchNorm1d):
                nn.init.constant_(m.weight, 1.0)
                nn.init.constant_(m.bias, 1e-4)

    def encode(self, source: Source, noise: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(z, mean, std)`` of every node (``eps`` drawn from ``noise``)."""
        h = TF.relu(self.features(self.input_norm(source.inputs)))
        for norm, conv in zip(self.norms, self.convs):
            h = TF.relu(torch.sparse.mm(source.adjacency, conv(norm(h))))
        mean, std = self.mean(h), self.std(h)
        eps = torch.randn(mean.shape, generator=noise, dtype=mean.dtype)
        return mean + std * eps, mean, std

    def edge_logits(self, z: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The decoder's logit of each pair ``(u[i], v[i])``."""
        return self.decoder(z[u] * z[v]).squeeze(-1)

    @torch.no_grad()
    def transition(self, z: torch.Tensor, threshold: float) -> torch.Tensor:
        """``(n, n)`` float64 transition matrix of one view's nodes ``z`` (module docstring); a draw, not
        differentiated."""
        n = len(z)
        if n == 1:
            return torch.zeros((1, 1), dtype=torch.float64)
        logits = self.decoder(z[:, None, :] * z[None, :, :]).squeeze(-1).double()
        logits.fill_diagonal_(-torch.inf)
        p = torch.softmax(logits, dim=1)  # exp, row-normalised: BYOV's, without its overflow to inf
        p = torch.where(p < threshold, torch.zeros_like(p), p)
        p[p.sum(dim=1) == 0] = 1.0  # a row left empty: uniform
        p.fill_diagonal_(0.0)
        return p / p.sum(dim=1, keepdim=True)

    def loss(self, source: Source, reward: torch.Tensor, noise: torch.Generator, rng: KeyedRandom,
             edges: int = 0) -> torch.Tensor:
        """BYOV's reward-weighted VGAE loss on ``source`` (one ``reward`` per view; module docstring), each view's
        BCE averaged over ``edges`` of its directed edges and as many non-edges drawn uniformly with replacement
        (row ``b`` of ``rng`` for view ``b``), or over all its edges and as many non-edges (``edges = 0``, BYOV's)."""
        z, mean, std = self.encode(source, noise)
        b = len(source.num_nodes)
        pos_view, pos_u, pos_v, neg_view, neg_u, neg_v = fitting_pairs(source, rng, edges)
        positive = TF.binary_cross_entropy_with_logits(self.edge_logits(z, pos_u, pos_v), torch.ones(len(pos_u)),
                                                       reduction="none")
        negative = TF.binary_cross_entropy_with_logits(self.edge_logits(z, neg_u, neg_v), torch.zeros(len(neg_u)),
                                                       reduction="none")
        rec = view_means(positive, pos_view, b) + view_means(negative, neg_view, b)
        kl = -0.5 * (1 + 2 * torch.log(std.clamp_min(1e-10)) - mean ** 2 - std ** 2).sum(dim=1)
        node_view = torch.from_numpy(np.repeat(np.arange(b), source.num_nodes))
        kl = view_means(kl, node_view, b) / torch.from_numpy(source.num_nodes).to(kl)
        return (rec * reward + kl).mean()


def view_means(values: torch.Tensor, view: torch.Tensor, b: int) -> torch.Tensor:
    """Mean of ``values`` per view (0 for a view without any, as PyG's ``global_mean_pool`` leaves it out).

    >>> view_means(torch.tensor([1.0, 3.0, 5.0]), torch.tensor([0, 0, 2]), 3).tolist()
    [2.0, 0.0, 5.0]
    """
    sums = torch.zeros(b, dtype=values.dtype).index_add(0, view, values)
    counts = torch.bincount(view, minlength=b).to(values)
    return sums / counts.clamp_min(1)


def fitting_pairs(source: Source, rng: KeyedRandom, edges: int = 0) -> tuple[torch.Tensor, ...]:
    """``(pos_view, pos_u, pos_v, neg_view, neg_u, neg_v)``: batched node rows of the directed edges a generator
    fits and of as many non-edges (PyG's ``negative_sampling`` default), with their views. ``edges = 0``: every
    edge of each view; else ``edges`` of them per view drawn uniformly with replacement (row ``b`` of ``rng``).
    Non-edges are drawn uniformly with replacement among each view's unordered non-adjacent pairs; a view without
    any has none."""
    ptr, eptr = source.node_ptr, offsets(source.num_edges)
    out = {name: [] for name in ("pv", "pu", "pw", "nv", "nu", "nw")}
    src, dst = source.src.numpy(), source.dst.numpy()
    for b in range(len(source.num_nodes)):
        lo, hi = eptr[b], eptr[b + 1]
        gen = rng.generator(b)
        pick = np.arange(lo, hi) if edges == 0 or hi == lo else lo + gen.integers(0, hi - lo, size=edges)
        out["pv"].append(np.full(len(pick), b))
        out["pu"].append(src[pick])
        out["pw"].append(dst[pick])
        a, c = F.non_edges(*source.local_edges(b), int(source.num_nodes[b]))
        count = len(pick) if len(a) else 0
        draw = gen.integers(0, max(len(a), 1), size=count)
        out["nv"].append(np.full(count, b))
        out["nu"].append(a[draw] + ptr[b])
        out["nw"].append(c[draw] + ptr[b])
    return tuple(torch.from_numpy(np.concatenate(out[name]).astype(np.int64)) for name in out)


def walk_views(transitions: list[torch.Tensor], centres: np.ndarray, walks: int, length: int,
               rng: KeyedRandom) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Walks on each view's transition matrix (``transitions[b]``, rows summing to 1, or a 1-node view's zero):
    ``walks`` of ``length`` steps per view, walk 0 from its centre (local id ``centres[b]``), the others from distinct
    uniformly chosen other nodes (uniformly with replacement from all its nodes when it has too few), all views'
    walkers stepping together; row ``b`` of ``rng`` draws view ``b``'s. Returns the batched node rows visited
    (``(N,)`` bool) and every step taken as batched rows ``(from, to)``.

    >>> ring = torch.roll(torch.eye(4, dtype=torch.float64), 1, dims=1)  # 0 -> 1 -> 2 -> 3 -> 0
    >>> visited, frm, to = walk_views([ring], np.array([0]), 1, 2, KeyedRandom.for_items(0, np.arange(1)))
    >>> visited.tolist(), frm.tolist(), to.tolist()
    ([True, True, True, False], [0, 1], [1, 2])
    """
    sizes = np.array([len(p) for p in transitions], dtype=np.int64)
    b, ptr = len(sizes), offsets(sizes)
    node_view = np.repeat(np.arange(b), sizes)
    local = np.arange(int(sizes.sum())) - ptr[node_view]
    # row R's cumulative probabilities plus R (its last forced to exactly 1): one increasing array, so one search
    # finds every walker's next node, the first column whose cumulative probability exceeds its uniform
    cdf = []
    for p in transitions:
        c = p.cumsum(dim=1)
        c[:, -1] = 1.0
        cdf.append(c)
    rows = np.arange(len(node_view), dtype=np.float64)
    flat = torch.cat([c.reshape(-1) for c in cdf]).numpy() + np.repeat(rows, sizes[node_view])
    row_start = np.repeat(offsets(sizes * sizes)[:-1], sizes) + local * sizes[node_view]
    # walkers: the centre, then `walks - 1` distinct others by random keys, or draws with replacement
    extra = walks - 1
    centre_rows = ptr[:-1] + centres
    keys = rng.child("starts").ragged(sizes)
    keys[centre_rows] = np.inf
    order = np.lexsort((keys, node_view))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - ptr[node_view[order]]  # position among its view's nodes by key
    enough = sizes - 1 >= extra
    distinct = np.flatnonzero((rank < extra) & enough[node_view])
    few = np.flatnonzero(~enough)
    drawn = np.floor(rng.take(few).child("repeat").uniform(extra) * sizes[few][:, None]).astype(np.int64)
    current = np.concatenate([centre_rows, distinct, (ptr[few][:, None] + drawn).reshape(-1)])
    walker = np.concatenate([np.zeros(b, np.int64), 1 + rank[distinct], np.tile(1 + np.arange(extra), len(few))])
    view = node_view[current] if len(current) else np.zeros(0, np.int64)
    uniforms = rng.child("walk").uniform(walks * length)  # view b, walker j, step t: uniforms[b, t * walks + j]
    visited = np.zeros(len(node_view), dtype=bool)
    visited[current] = True
    frm, to = [], []
    for t in range(length):
        pos = np.searchsorted(flat, current + uniforms[view, t * walks + walker], side="right")
        nxt = ptr[view] + np.minimum(pos - row_start[current], sizes[view] - 1)
        frm.append(current)
        to.append(nxt)
        visited[nxt] = True
        current = nxt
    empty = np.zeros(0, np.int64)
    return visited, np.concatenate(frm) if frm else empty, np.concatenate(to) if to else empty


@torch.no_grad()
def generate_views(generator: ViewGenerator, source: Source, rng: KeyedRandom, noise: torch.Generator, walks: int,
                   length: int, threshold: float, k: int, pe_sign: str) -> ViewBatch:
    """The views ``generator`` makes of ``source`` (row ``b`` of ``rng`` for view ``b``'s walks and PE signs): the
    nodes the walks visit, the steps they take as undirected edges, their own eigen features; ``nid`` holds each
    node's local id in its source view."""
    z, _, _ = generator.encode(source, noise)
    ptr = source.node_ptr
    centres = source.seed_rows - ptr[:-1]
    transitions = [generator.transition(z[ptr[b]:ptr[b + 1]], threshold) for b in range(len(source.num_nodes))]
    visited, frm, to = walk_views(transitions, centres, walks, length, rng)
    node_view = np.repeat(np.arange(len(source.num_nodes)), source.num_nodes)
    view = node_view[frm]
    u, v = np.minimum(frm, to) - ptr[view], np.maximum(frm, to) - ptr[view]
    size = int(source.num_nodes.max(initial=1))
    codes = np.unique((view * size + u)[u != v] * size + v[u != v])
    view, u, v = codes // (size * size), codes // size % size, codes % size
    view, src, dst = np.concatenate([view, view]), np.concatenate([u, v]), np.concatenate([v, u])
    order = np.lexsort((dst, src, view))
    total = int(source.num_nodes.sum())
    width = np.zeros((total, k), np.float32)  # placeholders: the eigen features are computed below
    walked = ViewBatch(num_nodes=source.num_nodes, num_edges=np.bincount(view, minlength=len(source.num_nodes)),
                       src=src[order], dst=dst[order], nid=np.arange(total) - ptr[node_view], seed_pos=centres,
                       pe=width, eigvec=width, eigval=np.full((len(source.num_nodes), k), np.nan, np.float32),
                       pe_sign=pe_sign).induce(visited)
    pe, eigvec, eigval = eigen_arrays(walked.num_nodes, walked.num_edges, walked.src, walked.dst, k,
                                      sign_draws(pe_sign, rng.child("pe"), k))
    return walked.replace(pe=pe, eigvec=eigvec, eigval=eigval)
