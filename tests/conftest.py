"""Shared fixtures."""
import os
from pathlib import Path

import pytest

import gcc_sgcl  # noqa: F401  first: registers dgl 2.x's GraphBolt stand-in before test modules import dgl

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The read-only benchmark copy at ``../shared/data`` (next to the repository); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data not present")
    return SHARED_DATA


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory) -> Path:
    """A 3-step GCC encoder (hidden 16, 3 layers) pre-trained on a 300-node Barabási–Albert graph, one per test
    module: its run folder."""
    import networkx as nx

    from gcc_sgcl.engine.pretrain import pretrain
    from gcc_sgcl.presets import make_config

    cfg = make_config("gcc", {
        "sampling": {"rw_hops": 32, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
        "train": {"steps": 3, "batch_size": 8, "output_dir": str(tmp_path_factory.mktemp("tiny")), "run_name": "tiny"},
    })
    return pretrain(cfg, progress=False, graphs=[gcc_sgcl.as_dgl_graph(nx.barabasi_albert_graph(300, 3, seed=0))])


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Parsed datasets and views built by tests go to a temporary cache, never to the repository's data/."""
    previous = os.environ.get("GCC_SGCL_CACHE")
    os.environ["GCC_SGCL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("GCC_SGCL_CACHE", None)
    else:
        os.environ["GCC_SGCL_CACHE"] = previous
