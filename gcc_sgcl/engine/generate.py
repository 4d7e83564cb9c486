"""Embed downstream datasets with a pre-trained encoder: ``<load_path>/<dataset>.npy``.

``python -m gcc_sgcl.engine.generate --load-path saved/RUN --dataset usa_airport imdb-binary``; wrapped by
``scripts/generate.sh <gpu> <load_path> <dataset...>``. Node datasets get one row per node (the node's RWR
view), graph datasets one row per graph (the whole graph), similarity datasets the rows of graph 1's nodes
followed by graph 2's. A dataset given by path (a graph file, see :mod:`gcc_sgcl.data.files`) is written as
``<stem>.npy``, a single graph's with ``<stem>.ids.txt``: the original node id of each row, one per line.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from pathlib import Path

import dgl
import numpy as np
import torch
from tqdm import tqdm

from gcc_sgcl.config import Config, SamplingConfig
from gcc_sgcl.data.paths import atomic_target, resolve_cache_dir
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.pretrain import build_encoder
from gcc_sgcl.models import GraphEncoder
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset, collate_views, limit_threads, worker_init

# Bump when view building changes, so cached views written by older code are rebuilt.
VIEWS_VERSION = 1


def load_encoder(load_path: str | Path, device: str = "cpu") -> tuple[GraphEncoder, Config]:
    """The query encoder and configuration stored in a run folder (or checkpoint file)."""
    state = load_checkpoint(load_path, device)
    cfg = Config.from_dict(state["config"])
    model = build_encoder(cfg).to(device)
    model.load_state_dict(state["model"])
    model.eval()
    return model, cfg


@torch.no_grad()
def embed(
    model: GraphEncoder,
    dataset: torch.utils.data.Dataset,
    batch_size: int = 256,
    num_workers: int = 0,
    desc: str = "embed",
    progress: bool = True,
) -> np.ndarray:
    """Encode every view of ``dataset`` in order; returns a float32 (len(dataset), hidden) array."""
    device = next(model.parameters()).device
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=False, collate_fn=collate_views,
        num_workers=num_workers, worker_init_fn=worker_init,
    )
    if num_workers == 0:
        limit_threads()
    out = [model(g.to(device)).cpu() for g in tqdm(loader, desc=desc, disable=not progress, unit="batch")]
    return torch.cat(out).numpy().astype(np.float32)


def dataset_views(
    name: str,
    sampling: SamplingConfig,
    data_dir: str | None = None,
    seed: int = 0,
    num_workers: int = 0,
    progress: bool = True,
) -> list[list[dgl.DGLGraph]]:
    """The views ``generate`` encodes for dataset ``name``, built once: one list for node and graph datasets,
    two (graph_1's nodes, graph_2's nodes) for similarity datasets. Views depend on the sampling settings and
    ``seed`` only, not on the encoder, so a sweep over encoders can build them once (:func:`cached_views`)."""
    from gcc_sgcl.data import dataset_kind, load_graph_dataset, load_node_dataset, load_similarity_dataset

    kind = dataset_kind(name)
    if kind == "node":
        sets = [NodeViewDataset(load_node_dataset(name, data_dir).graph, sampling, seed)]
    elif kind == "graph":
        sets = [GraphViewDataset(load_graph_dataset(name, data_dir).graphs, sampling)]
    elif kind == "similarity":
        pair = load_similarity_dataset(name, data_dir)
        sets = [NodeViewDataset(g, sampling, seed) for g in (pair.graph_1, pair.graph_2)]
    else:
        raise ValueError(f"dataset {name!r} is a {kind} dataset; generate embeds node, graph or similarity datasets")
    out = []
    for views in sets:
        # small batches: each view's tensors travel from a worker as file descriptors, and one message
        # carries at most ~250 of them ("received 0 items of ancdata")
        loader = torch.utils.data.DataLoader(
            views, batch_size=8, collate_fn=list, num_workers=num_workers, worker_init_fn=worker_init
        )
        if num_workers == 0:
            limit_threads()
        out.append([_own_memory(v) if num_workers else v
                    for batch in tqdm(loader, desc=f"views {name}", disable=not progress, unit="batch")
                    for v in batch])
    return out


def _own_memory(view: dgl.DGLGraph) -> dgl.DGLGraph:
    """A copy of a view received from a DataLoader worker in memory of this process: a worker's tensors
    arrive as shared memory, each holding a file descriptor open as long as it lives, and keeping
    thousands of views would exhaust the descriptor limit."""
    src, dst = view.edges()
    out = dgl.graph((src.clone(), dst.clone()), num_nodes=view.num_nodes(), idtype=view.idtype)
    out.ndata.update({key: value.clone() for key, value in view.ndata.items()})
    return out


def cached_views(
    name: str,
    sampling: SamplingConfig,
    data_dir: str | None = None,
    seed: int = 0,
    num_workers: int = 0,
    progress: bool = True,
) -> list[list[dgl.DGLGraph]]:
    """:func:`dataset_views`, stored as a DGL binary in the cache directory (``$GCC_SGCL_CACHE``) under a
    name made of the dataset, the sampling settings and the seed, and read back on later calls."""
    key = hashlib.sha256(json.dumps([name, dataclasses.asdict(sampling), seed, VIEWS_VERSION]).encode())
    path = resolve_cache_dir() / "views" / f"{name}-{key.hexdigest()[:16]}.bin"
    if path.exists():
        graphs, labels = dgl.load_graphs(str(path))
        bounds = np.cumsum([0] + labels["sizes"].tolist())
        return [graphs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    views = dataset_views(name, sampling, data_dir, seed, num_workers, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp:
        dgl.save_graphs(str(tmp), [v for part in views for v in part],
                        {"sizes": torch.tensor([len(part) for part in views])})
    return views


def generate(
    load_path: str | Path,
    datasets: list[str],
    device: str = "cpu",
    data_dir: str | None = None,
    seed: int = 0,
    batch_size: int = 256,
    num_workers: int = 0,
    progress: bool = True,
    cache: bool = False,
) -> list[Path]:
    """Write ``<load_path>/<dataset>.npy`` for each dataset (for a path, ``<stem>.npy`` and, for a single
    graph, ``<stem>.ids.txt``); returns the written paths.

    Datasets given by path are read before anything else, so a malformed file stops the run with nothing
    written. With ``cache`` the views are read from (or written to) the view cache (:func:`cached_views`).
    """
    from gcc_sgcl.data import dataset_name, is_dataset_path, load_any

    stems = [dataset_name(name) for name in datasets]
    repeated = sorted({stem for stem in stems if stems.count(stem) > 1})
    if repeated:
        raise ValueError(f"several datasets would be written as {', '.join(repeated)}.npy; rename the files")
    ids = {name: getattr(load_any(name, data_dir), "ids", None) for name in datasets if is_dataset_path(name)}
    model, cfg = load_encoder(load_path, device)
    load_dir = Path(load_path) if Path(load_path).is_dir() else Path(load_path).parent
    build = cached_views if cache else dataset_views
    written = []
    for name, stem in zip(datasets, stems):
        views = build(name, cfg.sampling, data_dir, seed, num_workers, progress)
        emb = np.concatenate([embed(model, v, batch_size, 0, stem, progress) for v in views])
        path = load_dir / f"{stem}.npy"
        np.save(path, emb)
        written.append(path)
        if ids.get(name) is not None:
            ids_path = load_dir / f"{stem}.ids.txt"
            ids_path.write_text("".join(f"{i}\n" for i in ids[name].tolist()))
            written.append(ids_path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--load-path", required=True, help="run folder (or checkpoint file) of a pre-training run")
    p.add_argument("--dataset", nargs="+", required=True, help="registered dataset names or graph file paths")
    p.add_argument("--device", default="cpu")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0, help="seed of the RWR views of node-level datasets")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--num-workers", type=int, default=0, help="DataLoader workers building the views")
    p.add_argument("--cache-views", action="store_true",
                   help="read/write the encoder-independent views in the cache dir ($GCC_SGCL_CACHE)")
    a = p.parse_args(argv)
    for path in generate(a.load_path, a.dataset, a.device, a.data_dir, a.seed, a.batch_size, a.num_workers,
                         cache=a.cache_views):
        print(path)


if __name__ == "__main__":
    main()
