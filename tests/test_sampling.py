"""RWR sampler and Laplacian positional embedding."""
import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.sampling.dataset import (
    GraphViewDataset,
    NodeViewDataset,
    PretrainPairDataset,
    collate_pairs,
    worker_init,
)
from gcc_sgcl.sampling.rwr import max_nodes_per_seed, rwr_subgraph_nodes, rwr_visits
from gcc_sgcl.sampling.spectral import eigen_features
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, NID, PE, SEED


def _dgl(nxg: nx.Graph) -> dgl.DGLGraph:
    return dgl.to_bidirected(dgl.from_networkx(nx.convert_node_labels_to_integers(nxg)))


def _reference_spectrum(nxg: nx.Graph):
    """Dense numpy eigendecomposition of networkx's normalised Laplacian (an independent construction)."""
    lap = nx.normalized_laplacian_matrix(nx.convert_node_labels_to_integers(nxg), weight=None).toarray()
    return np.linalg.eigh(lap)


@pytest.mark.parametrize(
    "nxg",
    [nx.petersen_graph(), nx.karate_club_graph(), nx.grid_2d_graph(5, 4), nx.barabasi_albert_graph(60, 2, seed=3)],
    ids=["petersen", "karate", "grid", "ba60"],
)
def test_pe_matches_dense_eigh_reference_up_to_rotation(nxg):
    k = 8
    feats = eigen_features(_dgl(nxg), k)
    lam, u = _reference_spectrum(nxg)
    assert feats.valid == min(nxg.number_of_nodes() - 2, k)
    np.testing.assert_allclose(feats.eigval[: feats.valid], lam[: feats.valid], atol=1e-8)
    x = feats.eigvec[:, : feats.valid]
    np.testing.assert_allclose(x.T @ x, np.eye(feats.valid), atol=1e-8)  # orthonormal columns
    # Compare projectors onto each whole eigenvalue cluster inside the first `valid` columns
    # (vectors inside a repeated eigenvalue are only defined up to rotation).
    groups = np.split(np.arange(len(lam)), np.where(np.diff(lam) > 1e-6)[0] + 1)
    for grp in groups:
        if grp[-1] >= feats.valid:
            break
        p_ours = x[:, grp] @ x[:, grp].T
        p_ref = u[:, grp] @ u[:, grp].T
        np.testing.assert_allclose(p_ours, p_ref, atol=1e-7)
    norms = np.linalg.norm(feats.pe, axis=1)
    np.testing.assert_allclose(norms[norms > 0], 1.0, atol=1e-6)


def test_pe_matches_gcc_arpack_path():
    """GCC's path: ARPACK largest eigenvalues of D^-1/2 A D^-1/2 → same subspace as our smallest of L."""
    from scipy.sparse.linalg import eigsh

    from gcc_sgcl.sampling.spectral import normalized_adjacency

    g = _dgl(nx.barabasi_albert_graph(80, 3, seed=0))
    k = 6
    mu, u = eigsh(normalized_adjacency(g), k=k, which="LA", v0=np.ones(80))
    order = np.argsort(-mu)
    ours = eigen_features(g, k)
    np.testing.assert_allclose(ours.eigval, 1 - mu[order], atol=1e-8)
    np.testing.assert_allclose(np.abs(ours.eigvec.T @ u[:, order]).diagonal(), 1.0, atol=1e-6)


def test_pe_zero_padded_when_graph_has_at_most_k_nodes():
    g = _dgl(nx.cycle_graph(10))
    f = eigen_features(g, 32)
    assert f.pe.shape == (10, 32) and f.valid == 8
    assert np.all(f.pe[:, 8:] == 0) and np.all(np.isnan(f.eigval[8:])) and not np.any(np.isnan(f.eigval[:8]))
    for n in (1, 2):
        tiny = eigen_features(_dgl(nx.path_graph(n)), 32)
        assert tiny.valid == 0 and np.all(tiny.pe == 0)


def test_rwr_visits_budget_and_first_step_always_taken():
    g = _dgl(nx.barabasi_albert_graph(300, 2, seed=1))
    rng = np.random.default_rng(0)
    # restart_prob close to 1: a scalar restart probability in DGL would leave most walks empty;
    # with GCC semantics every walk still takes its first step, so the budget is reached.
    visits = rwr_visits(g, 5, 100, 0.99, 10, rng)
    assert visits.size == 100 and visits.dtype == np.int64
    # at restart 0.99 nearly every walk is a single step: most visits are neighbours of the start node
    assert np.isin(visits, g.successors(5).numpy()).mean() > 0.95


def test_rwr_subgraph_seed_first_and_size_bound():
    g = _dgl(nx.barabasi_albert_graph(500, 3, seed=2))
    rng = np.random.default_rng(1)
    for start in (0, 17, 250):
        nodes = rwr_subgraph_nodes(g, start, 64, 0.8, 10, rng)
        budget = max_nodes_per_seed(int(g.in_degrees(start)), 64, 0.8)
        assert nodes[0] == start and len(set(nodes.tolist())) == len(nodes)
        assert 2 <= len(nodes) <= budget + 1


def test_max_nodes_formula_matches_gcc():
    assert max_nodes_per_seed(1, 256, 0.8) == 256
    deg = 5000
    assert max_nodes_per_seed(deg, 256, 0.8) == int(deg**0.75 * np.e / (np.e - 1) / 0.8 + 0.5)


def test_isolated_start_node_gives_single_node_view():
    g = dgl.graph(([0, 1], [1, 0]), num_nodes=3)
    nodes = rwr_subgraph_nodes(g, 2, 16, 0.8, 10, np.random.default_rng(0))
    assert nodes.tolist() == [2]


def test_pair_views_seed_is_node_zero_flagged_and_parent_ids_kept():
    g = _dgl(nx.powerlaw_cluster_graph(400, 3, 0.2, seed=0))
    ds = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=0, length=10)
    for i in range(10):
        q, k = ds[i]
        for v in (q, k):
            assert v.ndata[SEED][0] == 1 and v.ndata[SEED].sum() == 1
            assert v.ndata[PE].shape == (v.num_nodes(), 32) and v.ndata[EIGVEC].shape == v.ndata[EIGVAL].shape
            parent = v.ndata[NID]
            src, dst = v.edges()
            assert g.has_edges_between(parent[src], parent[dst]).all()
        assert q.ndata[NID][0] == k.ndata[NID][0]  # both views start from the same node


def test_pair_dataset_is_deterministic_per_index():
    g = _dgl(nx.barabasi_albert_graph(300, 3, seed=0))
    a = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=7, length=5)
    b = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=7, length=5)
    c = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=8, length=5)
    qa, _ = a[3]
    qb, _ = b[3]
    assert torch.equal(qa.ndata[NID], qb.ndata[NID]) and torch.equal(qa.ndata[PE], qb.ndata[PE])
    assert any(not torch.equal(a[i][0].ndata[NID], c[i][0].ndata[NID]) for i in range(5))


def test_start_nodes_follow_degree_power_075():
    star = _dgl(nx.star_graph(9))  # centre degree 9, leaves degree 1
    path = _dgl(nx.path_graph(4))
    ds = PretrainPairDataset([star, path], SamplingConfig(), seed=0, length=1)
    rng = np.random.default_rng(0)
    draws = [ds.draw_start(rng) for _ in range(20000)]
    w = np.array([9**0.75] + [1.0] * 9 + [1.0, 2**0.75, 2**0.75, 1.0])
    expected = w / w.sum()
    counts = np.zeros(len(w))
    for gi, node in draws:
        counts[node + (10 if gi == 1 else 0)] += 1
    np.testing.assert_allclose(counts / counts.sum(), expected, atol=0.01)


def test_batches_identical_with_zero_and_two_workers():
    g = _dgl(nx.barabasi_albert_graph(300, 3, seed=0))
    ds = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=3, length=24)

    def batches(workers):
        loader = torch.utils.data.DataLoader(
            ds, batch_size=6, sampler=range(6, 24), collate_fn=collate_pairs,
            num_workers=workers, worker_init_fn=worker_init, timeout=60 if workers else 0,
        )
        return [(q.ndata[PE].clone(), k.batch_num_nodes().clone()) for q, k in loader]

    serial, parallel = batches(0), batches(2)
    assert len(serial) == 3
    for (pa, na), (pb, nb) in zip(serial, parallel):
        assert torch.equal(pa, pb) and torch.equal(na, nb)


def test_node_and_graph_view_datasets():
    g = _dgl(nx.karate_club_graph())
    nodes = NodeViewDataset(g, SamplingConfig(rw_hops=16), seed=0)
    assert len(nodes) == 34
    v = nodes[5]
    assert v.ndata[NID][0] == 5 and v.ndata[SEED][0] == 1
    graphs = GraphViewDataset([g, _dgl(nx.path_graph(2))], SamplingConfig())
    whole = graphs[0]
    assert whole.num_nodes() == 34
    assert whole.ndata[SEED].argmax() == int(g.out_degrees().argmax())
    assert graphs[1].ndata[PE].abs().sum() == 0  # two nodes: no eigenvector columns, all padding


def test_large_graphs_use_lobpcg_with_the_same_subspaces(monkeypatch):
    """Above DENSE_MAX_NODES the sparse path must give the dense path's eigenvalues and subspaces, also
    when the top eigenvalue repeats (one copy of 1 per connected component)."""
    from gcc_sgcl.sampling import spectral

    components = [nx.powerlaw_cluster_graph(150, 3, 0.2, seed=4)] + [nx.star_graph(20 + i) for i in range(6)]
    g = _dgl(nx.disjoint_union_all(components))
    dense = eigen_features(g, 16)
    monkeypatch.setattr(spectral, "DENSE_MAX_NODES", 100)

    def no_dense(_):
        raise AssertionError("the sparse path fell back to dense eigh")

    monkeypatch.setattr(spectral.np.linalg, "eigh", no_dense)
    sparse = eigen_features(g, 16)
    monkeypatch.undo()
    np.testing.assert_allclose(sparse.eigval, dense.eigval, atol=1e-8)
    lam = dense.eigval
    groups = np.split(np.arange(16), np.where(np.diff(lam) > 1e-6)[0] + 1)
    for grp in groups[:-1]:  # the last group may continue past column 16
        p_dense = dense.eigvec[:, grp] @ dense.eigvec[:, grp].T
        p_sparse = sparse.eigvec[:, grp] @ sparse.eigvec[:, grp].T
        np.testing.assert_allclose(p_sparse, p_dense, atol=1e-6)


def test_formats_the_sampler_reads_exist_before_workers_fork():
    """Forked DataLoader workers share the parent's graph arrays only if no worker has to build a format of its
    own: the dataset must create CSR (walks, induced edges) and CSC (in-degrees) up front, and sampling must
    not create any other."""
    src, dst = (t.numpy() for t in _dgl(nx.barabasi_albert_graph(300, 3, seed=0)).edges())
    g = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=300)  # COO only, as loaders build it
    assert g.formats()["created"] == ["coo"]
    ds = PretrainPairDataset([g], SamplingConfig(rw_hops=32), seed=0, length=4)
    created = sorted(g.formats()["created"])
    assert {"csr", "csc"} <= set(created)
    _, indices = ds.csrs[0]
    assert indices.ctypes.data == g.adj_tensors("csr")[1].data_ptr()  # the dataset keeps DGL's arrays, no copy
    for i in range(4):
        ds[i]
    assert sorted(g.formats()["created"]) == created
