"""Tiny data files and edge sets, shared by the data tests."""
from pathlib import Path

import dgl


def write_file(path: Path, text: str) -> Path:
    """``path`` holding ``text``, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def edge_set(g: dgl.DGLGraph) -> set[tuple[int, int]]:
    """The directed edges of ``g`` as ``(src, dst)`` pairs."""
    src, dst = g.edges()
    return set(zip(src.tolist(), dst.tolist()))


def undirected(*pairs: tuple[int, int]) -> set[tuple[int, int]]:
    """Both directions of every pair."""
    return {(u, v) for a, b in pairs for u, v in ((a, b), (b, a))}
