"""gcc_sgcl: GCC and SGCL (spectral augmentations for graph contrastive learning) on DGL."""
import os

os.environ.setdefault("DGLBACKEND", "pytorch")

__version__ = "0.1.0"
