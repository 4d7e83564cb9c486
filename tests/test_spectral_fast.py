"""The batched positional-embedding path and GCC's ARPACK reference against the default per-view path."""
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.bench.pe import rwr_subgraphs, subspace_gap
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.data.powerlaw import powerlaw_graph
from gcc_sgcl.sampling import spectral
from gcc_sgcl.sampling.spectral import (
    PAD_EIGENVALUE,
    arpack_eigen_features,
    batched_eigen_features,
    edge_eigen_features,
    padded_laplacian_eigh,
)

K = 16


@pytest.fixture(scope="module")
def subgraphs():
    """RWR views of a power-law graph, drawn as pre-training draws them, plus a 1-node and a 2-node view."""
    g = powerlaw_graph(3000, 12000, np.random.default_rng(0))
    views = rwr_subgraphs([g], SamplingConfig(rw_hops=64), count=60, seed=0)
    none = np.empty(0, dtype=np.int64)
    return views + [(none, none, 1), (np.array([0, 1]), np.array([1, 0]), 2)]


def _edges(nxg: nx.Graph):
    e = np.array(nxg.edges(), dtype=np.int64).reshape(-1, 2)
    return np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]]), nxg.number_of_nodes()


def test_batched_path_gives_the_default_paths_eigenvalues_and_subspaces(subgraphs):
    sizes = [n for _, _, n in subgraphs]
    assert min(sizes) <= 2 and max(sizes) > 2 * K  # tiny views, views cut at k columns and everything between
    fast = batched_eigen_features(subgraphs, K)
    for f, (src, dst, n) in zip(fast, subgraphs):
        d = edge_eigen_features(src, dst, n, K)
        assert f.valid == d.valid and f.pe.shape == d.pe.shape == (n, K)
        np.testing.assert_allclose(f.eigval, d.eigval, atol=1e-10)  # NaN at the same padded columns
        proj_gap, _ = subspace_gap(f, d)
        assert proj_gap < 1e-9
        x = f.eigvec[:, : f.valid]
        np.testing.assert_allclose(x.T @ x, np.eye(f.valid), atol=1e-10)
        assert np.all(f.eigvec[:, f.valid:] == 0)
        # signs fixed as the default path does: each column's largest-magnitude entry is positive
        assert np.all(x[np.abs(x).argmax(axis=0), np.arange(f.valid)] > 0)
        norms = np.linalg.norm(f.pe, axis=1)
        np.testing.assert_allclose(norms[norms > 0], 1.0, atol=1e-12)


def test_batched_path_matches_gcc_arpack_reference_on_rwr_subgraphs(subgraphs):
    fast = batched_eigen_features(subgraphs, K)
    complete = 0
    for i, (f, (src, dst, n)) in enumerate(zip(fast, subgraphs)):
        ref = arpack_eigen_features(src, dst, n, K, np.random.default_rng(i))
        assert ref.valid == f.valid
        if np.allclose(ref.eigval, f.eigval, atol=1e-8, equal_nan=True):
            complete += 1
            assert subspace_gap(f, ref)[0] < 1e-7
    assert complete >= 0.9 * len(subgraphs)  # ARPACK may miss a copy of a repeated eigenvalue, rarely


def test_arpack_reference_returns_each_eigenvector_of_a_simple_spectrum():
    src, dst, n = _edges(nx.barabasi_albert_graph(80, 3, seed=0))
    ref = arpack_eigen_features(src, dst, n, 6, np.random.default_rng(0))
    dense = edge_eigen_features(src, dst, n, 6)
    np.testing.assert_allclose(ref.eigval, dense.eigval, atol=1e-10)
    np.testing.assert_allclose(np.abs(ref.eigvec.T @ dense.eigvec).diagonal(), 1.0, atol=1e-8)


def test_padding_decouples_exactly_and_sorts_last():
    src, dst, n = _edges(nx.karate_club_graph())
    lam, vec = padded_laplacian_eigh([(src, dst, n)], n)
    lam_pad, vec_pad = padded_laplacian_eigh([(src, dst, n)], n + 21)
    np.testing.assert_allclose(lam_pad[0, :n], lam[0], atol=1e-12)
    assert lam[0].max() <= 2.0 and np.all(lam_pad[0, n:] == PAD_EIGENVALUE)
    assert np.abs(vec_pad[0, n:, :n]).max() < 1e-12  # real eigenvectors have no weight on padded nodes
    assert np.abs(vec_pad[0, :n, n:]).max() < 1e-12
    clusters = np.split(np.arange(n), np.flatnonzero(np.diff(lam[0]) > 1e-6) + 1)
    assert any(len(c) > 1 for c in clusters)  # karate's spectrum has repeated eigenvalues
    for c in clusters:
        u, v = vec[0][:, c], vec_pad[0, :n][:, c]
        np.testing.assert_allclose(v @ v.T, u @ u.T, atol=1e-10)


def test_size_buckets_do_not_change_the_result(subgraphs):
    one = batched_eigen_features(subgraphs, K, bucket=1)  # no padding at all
    for bucket in (8, 64):
        for a, b in zip(one, batched_eigen_features(subgraphs, K, bucket=bucket)):
            np.testing.assert_allclose(a.eigval, b.eigval, atol=1e-10)
            assert subspace_gap(b, a)[0] < 1e-9


def test_tiny_and_large_graphs_fall_back_to_the_default_path(monkeypatch):
    star = _edges(nx.star_graph(9))  # 10 nodes
    tiny = (np.array([0, 1]), np.array([1, 0]), 2)
    monkeypatch.setattr(spectral, "DENSE_MAX_NODES", 8)  # the star now counts as large
    fast = batched_eigen_features([tiny, star], K)
    assert fast[0].valid == 0 and np.all(fast[0].pe == 0) and np.all(np.isnan(fast[0].eigval))
    default = edge_eigen_features(*star, K)
    assert np.array_equal(fast[1].eigvec, default.eigvec) and np.array_equal(fast[1].eigval, default.eigval,
                                                                               equal_nan=True)


def test_batched_path_rejects_bad_arguments():
    with pytest.raises(ValueError, match="bucket"):
        batched_eigen_features([], K, bucket=0)
    with pytest.raises(ValueError, match="k"):
        batched_eigen_features([(np.array([0]), np.array([1]), 5)], 0)
    with pytest.raises(ValueError, match="size"):
        padded_laplacian_eigh([(np.array([0]), np.array([1]), 5)], 4)
