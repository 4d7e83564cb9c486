"""Lets dgl 2.x import beside a torch it ships no GraphBolt library for (imported by ``gcc_sgcl/__init__.py``,
so before any ``import dgl`` of the package).

``import dgl`` 2.1.0 imports its ``dgl.graphbolt`` sub-package, which loads
``dgl/graphbolt/libgraphbolt_pytorch_<torch version>.so`` and raises when the wheel has none for the running torch
(2.1.0 ships them for torch 2.0.0–2.2.1 only; Python 3.12 needs dgl 2.x, and current torch is newer). This
package never uses GraphBolt (DGL's new data-loading stack), so in exactly that case an empty ``dgl.graphbolt``
module is registered first and the import goes on. With dgl 1.x, or a library present, nothing changes.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
import types
from pathlib import Path
from typing import MutableMapping

GRAPHBOLT = "dgl.graphbolt"


def graphbolt_library(dgl_dir: Path, torch_version: str) -> Path:
    """Where dgl 2.x looks for its GraphBolt library for ``torch_version`` (local suffix such as ``+cpu`` dropped,
    as DGL does)."""
    return dgl_dir / "graphbolt" / f"libgraphbolt_pytorch_{torch_version.split('+', 1)[0]}.so"


def needs_graphbolt_stub(dgl_version: str | None, dgl_dir: Path | None, torch_version: str | None) -> bool:
    """Whether ``import dgl`` would fail on GraphBolt: dgl ≥ 2 without the library for the running torch.

    >>> needs_graphbolt_stub("1.1.3", Path("/x/dgl"), "2.13.0+cpu")
    False
    """
    if dgl_version is None or dgl_dir is None or torch_version is None:
        return False
    if int(dgl_version.split(".", 1)[0]) < 2:
        return False
    return not graphbolt_library(dgl_dir, torch_version).exists()


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _dgl_dir() -> Path | None:
    """The installed ``dgl`` package folder, found without importing it."""
    spec = importlib.util.find_spec("dgl")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def install(modules: MutableMapping[str, types.ModuleType] = sys.modules) -> bool:
    """Register an empty ``dgl.graphbolt`` in ``modules`` when dgl ≥ 2 lacks GraphBolt for the running torch and
    dgl is not imported yet; returns whether it did."""
    if "dgl" in modules or GRAPHBOLT in modules:
        return False
    # versions from the installed metadata: neither dgl nor torch is imported to decide
    if not needs_graphbolt_stub(_installed_version("dgl"), _dgl_dir(), _installed_version("torch")):
        return False
    modules[GRAPHBOLT] = types.ModuleType(GRAPHBOLT, "Empty stand-in registered by gcc_sgcl._dgl_compat: this "
                                                     "dgl ships no GraphBolt library for the running torch.")
    return True
