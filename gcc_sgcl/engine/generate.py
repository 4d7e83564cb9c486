"""Embed downstream datasets with a pre-trained encoder: ``<load_path>/<dataset>.npy``.

``python -m gcc_sgcl.engine.generate --load-path saved/RUN --dataset usa_airport imdb-binary``; wrapped by
``scripts/generate.sh <gpu> <load_path> <dataset...>``. Node datasets get one row per node (the node's RWR
view), graph datasets one row per graph (the whole graph), similarity datasets the rows of graph 1's nodes
followed by graph 2's.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from gcc_sgcl.config import Config
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.pretrain import build_encoder
from gcc_sgcl.models import GraphEncoder
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset, collate_views, limit_threads, worker_init


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


def generate(
    load_path: str | Path,
    datasets: list[str],
    device: str = "cpu",
    data_dir: str | None = None,
    seed: int = 0,
    batch_size: int = 256,
    num_workers: int = 0,
    progress: bool = True,
) -> list[Path]:
    """Write ``<load_path>/<dataset>.npy`` for each dataset; returns the written paths."""
    from gcc_sgcl.data import dataset_kind, load_graph_dataset, load_node_dataset, load_similarity_dataset

    model, cfg = load_encoder(load_path, device)
    load_dir = Path(load_path) if Path(load_path).is_dir() else Path(load_path).parent
    written = []
    for name in datasets:
        kind = dataset_kind(name)
        if kind == "node":
            views = [NodeViewDataset(load_node_dataset(name, data_dir).graph, cfg.sampling, seed)]
        elif kind == "graph":
            views = [GraphViewDataset(load_graph_dataset(name, data_dir).graphs, cfg.sampling)]
        elif kind == "similarity":
            pair = load_similarity_dataset(name, data_dir)
            views = [NodeViewDataset(g, cfg.sampling, seed) for g in (pair.graph_1, pair.graph_2)]
        else:
            raise ValueError(f"dataset {name!r} is a {kind} dataset; generate embeds node, graph or similarity datasets")
        emb = np.concatenate([embed(model, v, batch_size, num_workers, f"{name}", progress) for v in views])
        path = load_dir / f"{name}.npy"
        np.save(path, emb)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--load-path", required=True, help="run folder (or checkpoint file) of a pre-training run")
    p.add_argument("--dataset", nargs="+", required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0, help="seed of the RWR views of node-level datasets")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--num-workers", type=int, default=0)
    a = p.parse_args(argv)
    for path in generate(a.load_path, a.dataset, a.device, a.data_dir, a.seed, a.batch_size, a.num_workers):
        print(path)


if __name__ == "__main__":
    main()
