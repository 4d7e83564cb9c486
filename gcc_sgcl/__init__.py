"""gcc_sgcl: GCC and SGCL (spectral augmentations for graph contrastive learning) on DGL."""
import os

os.environ.setdefault("DGLBACKEND", "pytorch")

from gcc_sgcl import _dgl_compat  # noqa: E402  before any module of the package imports dgl

_dgl_compat.install()

__version__ = "0.1.0"

_API = ("Encoder", "as_dgl_graph", "load_encoder", "read_graph_file")


def __getattr__(name: str):
    """``gcc_sgcl.load_encoder`` & co. (:mod:`gcc_sgcl.api`), imported on first use so that ``import gcc_sgcl``
    stays light."""
    if name in _API:
        from gcc_sgcl import api

        return getattr(api, name)
    raise AttributeError(f"module 'gcc_sgcl' has no attribute {name!r}")
