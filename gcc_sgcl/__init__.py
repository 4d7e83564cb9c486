"""gcc_sgcl: GCC and SGCL (spectral augmentations for graph contrastive learning) on DGL."""
import os

os.environ.setdefault("DGLBACKEND", "pytorch")

__version__ = "0.1.0"

_API = ("Encoder", "as_dgl_graph", "load_encoder")


def __getattr__(name: str):
    """``gcc_sgcl.load_encoder`` & co. (:mod:`gcc_sgcl.api`), imported on first use so that ``import gcc_sgcl``
    stays light."""
    if name in _API:
        from gcc_sgcl import api

        return getattr(api, name)
    raise AttributeError(f"module 'gcc_sgcl' has no attribute {name!r}")
