"""Embed downstream datasets with a pre-trained encoder: ``<load_path>/<dataset>.npy``.

``python -m gcc_sgcl.engine.generate --load-path saved/RUN --dataset usa_airport imdb-binary`` (flags:
:class:`~gcc_sgcl.config.InputConfig`, :class:`GenerateConfig`); wrapped by
``scripts/generate.sh <gpu> <load_path> <dataset...> [flags...]``. Node datasets get one row per node (the node's RWR
view), graph datasets one row per graph (the whole graph), similarity datasets the rows of graph 1's nodes followed by
graph 2's. A row is the mean of the embeddings of several views (``--copies``): independent walks for a node, by
default GCC's 2 on a registered benchmark dataset (GCC's ``generate.py`` and the results tables average two: GCC's
workflow gives the tables' protocol as written) and 32 on a graph file
(:data:`~gcc_sgcl.engine.views.INFERENCE_COPIES`, the count the views study of ``docs/results.md`` chose;
:meth:`~gcc_sgcl.engine.views.ViewOptions.resolved`); copies of the graph with independently drawn eigenvector signs
for a whole graph, 2 by default (:data:`~gcc_sgcl.engine.views.GRAPH_COPIES`). A dataset given by path (a graph file,
see :mod:`gcc_sgcl.data.files`) is written as ``<stem>.npy``, a single graph's with ``<stem>.ids.txt``: the original
node id of each row, one per line. With ``--with-structural`` each row is joined to the training-free structural
vector of its node or graph (:func:`~gcc_sgcl.engine.inference.joined_rows`), as the results tables' ``<method> ⊕ structural`` rows: wider rows,
which the record marks (its ``joined`` entry) and the task commands read as they are.

Views are streamed (:mod:`gcc_sgcl.engine.stream`): worker processes (``--num-workers``) build them chunk by chunk
while the model (``--threads`` torch threads) encodes the previous chunk, and each row is a running sum over its
views, so memory stays bounded by the graph and the output; the two counts are decided once from the cores this
process may use (:func:`~gcc_sgcl.engine.threads.plan_threads`) and printed, with the time and peak RSS, in a
summary line on stderr. The rows do not depend on the worker count. Under ``torchrun`` (``torchrun --nproc-per-node
N -m gcc_sgcl.engine.generate ...``) each process embeds a contiguous share of the rows (the rows it would give
alone) and rank 0 gathers them (gloo) and writes the one ``.npy``, ids file and record.

Each ``<stem>.npy`` gets a record, ``<stem>.provenance.json`` (:mod:`gcc_sgcl.engine.provenance`): the checkpoint's
sha256 and step and whether its run had finished, the dataset's source (a registered name, or a path and the file's
sha256) and the digest of its graphs, the views' settings (:class:`~gcc_sgcl.engine.views.ViewOptions`) and whether
the rows are joined. The task commands read it (:func:`~gcc_sgcl.engine.provenance.check_provenance`). Every file is
written through a temporary file, so a full disk leaves nothing half-written under a final name, and never through a
symbolic link planted at its name (refused, before anything is embedded); an encoder that gives NaN or inf writes
nothing.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.cli import PlainHelpParser, check_num_workers, check_writable_dir, user_errors
from gcc_sgcl.config import VISIT_BUDGETS, InputConfig, SamplingConfig, visit_budget_power
from gcc_sgcl.data.load import check_dataset_names
from gcc_sgcl.engine.checkpoint import WeightValueError, load_encoder_checkpoint
from gcc_sgcl.engine.distributed import (
    cleanup_distributed, embedding_share, launched_by_torchrun, local_cores, merged_rows, share_device,
)
from gcc_sgcl.engine.inference import check_finite_rows, embed_parts, joined_rows
from gcc_sgcl.engine.provenance import embeddings_record, output_files, write_embeddings
from gcc_sgcl.engine.stream import ResumeState, stream_plan
from gcc_sgcl.engine.threads import ThreadPlan
from gcc_sgcl.engine.views import (
    GCC_COPIES, GRAPH_COPIES, INFERENCE_COPIES, LoadedDataset, ViewOptions, cached_views, view_sources,
)
from gcc_sgcl.fileio import folder_of, refuse_link
from gcc_sgcl.models import GraphEncoder
from gcc_sgcl.settings import NON_NEGATIVE, SEED, Settings, add_arguments, at_least, from_args, setting


@dataclass
class GenerateConfig(Settings):
    """Embedding generation (``generate.sh``): how the views are built and encoded."""

    batch_size: int = setting(256, "views encoded per forward pass", valid=at_least(1))
    copies: int | None = setting(None, f"views averaged per row (default: walks per node, {GCC_COPIES} on a "
                                       f"registered benchmark dataset, GCC's protocol and the tables', and "
                                       f"{INFERENCE_COPIES} on a graph file, the count the views study in "
                                       f"docs/results.md chose; {GRAPH_COPIES} sign draws per whole graph)",
                                 valid=at_least(1))
    seed: int = setting(0, "seed of the views", valid=SEED)
    num_workers: int | None = setting(None, "worker processes building the views beside the model (default: the "
                                            "cores the model's threads leave; 0: built in this process, between "
                                            "forwards)", valid=NON_NEGATIVE)
    threads: int = setting(0, "torch threads of the model (0: a quarter of the cores, at least 1; 1 on a GPU); with "
                              "the view builders they fill the cores this process may use (os.sched_getaffinity)",
                           valid=NON_NEGATIVE)
    cache_views: bool = setting(False, "read/write the encoder-independent views in the cache dir "
                                       "($GCC_SGCL_CACHE)")
    visit_budget: str = setting("pretrain", "visits of a node's RWR view: pretrain = max(rw_hops, "
                                            "round(deg^0.75*e/(e-1)/p)), pre-training's rule; gcc = GCC "
                                            "generate.py's max(rw_hops, round(deg*e/(e-1)/p)); graph datasets "
                                            "embed whole graphs either way", choices=tuple(VISIT_BUDGETS))
    with_structural: bool = setting(False, "join each row to the training-free structural vector of its node or "
                                           "graph (z-scored over the dataset; 8 more columns for nodes, 24 for "
                                           "graphs): the '<method> ⊕ structural' rows of the results tables; the "
                                           "record says so and the task commands read them as they are")

    def views(self, sampling: SamplingConfig) -> ViewOptions:
        """The options of the views of an encoder with the ``sampling`` settings (``copies`` None: each dataset's
        default, :meth:`~gcc_sgcl.engine.views.ViewOptions.resolved`)."""
        return ViewOptions(sampling, self.seed, self.copies, self.visit_budget)


def generate(
    load_path: str | Path,
    datasets: list[str],
    settings: GenerateConfig | None = None,
    device: str = "cpu",
    data_dir: str | None = None,
    progress: bool = True,
) -> list[Path]:
    """Write ``<load_path>/<dataset>.npy`` and its record ``<dataset>.provenance.json`` for each dataset (for a path,
    ``<stem>.npy`` and, for a single graph, ``<stem>.ids.txt``); returns the written paths.

    ``settings`` (default :class:`~gcc_sgcl.engine.generate.GenerateConfig`) sets the views' seed, copies, workers and
    visit budget, the batch size and whether the rows are joined to the structural vector (``with_structural``:
    :func:`~gcc_sgcl.engine.inference.joined_rows`); with ``cache_views`` the views are read from (or written to) the view cache
    (:func:`~gcc_sgcl.engine.views.cached_views`). Names, worker count, batch size, checkpoint (its fields, its
    weights' shapes, and that they are finite) and output folder are checked, and datasets given by path read, before
    anything is embedded, so a malformed file stops the run with nothing written. A dataset whose embedding holds NaN
    or inf stops the run before its files are written (those of the datasets before it stay).
    """
    from gcc_sgcl.data import check_present, dataset_name, is_dataset_path, kind_of_data, load_any

    g = settings or GenerateConfig()
    check_dataset_names(datasets, ("node", "graph", "similarity"), "--dataset")
    check_present(datasets, data_dir)  # every registered dataset's files, before the first is embedded
    visit_budget_power(g.visit_budget, "--visit-budget")
    if g.num_workers is not None:
        check_num_workers(g.num_workers)
    if g.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {g.batch_size}")
    stems = [dataset_name(name) for name in datasets]
    repeated = sorted({stem for stem in stems if stems.count(stem) > 1})
    if repeated:
        raise ValueError(f"several datasets would be written as {', '.join(repeated)}.npy; rename the files")
    loaded = {name: load_any(name, data_dir) for name in datasets if is_dataset_path(name)}  # read once, up front
    if g.cache_views and launched_by_torchrun():
        raise ValueError("--cache-views builds every view of a dataset in each process; under torchrun each process "
                         "streams its share of the rows: leave --cache-views out")
    share = embedding_share()
    device = share_device(device, share)
    try:
        model, cfg, checkpoint = load_encoder_checkpoint(load_path, device)
    except WeightValueError as error:  # a diverged run's
        raise WeightValueError(f"{error}; nothing written for {', '.join(map(str, datasets))}") from None
    load_dir = check_writable_dir(folder_of(load_path), "--load-path")
    for stem in stems:  # a link planted at an output is refused before anything is embedded
        for file in output_files(load_dir / f"{stem}.npy"):
            refuse_link(file)
    written = []
    for name, stem in zip(datasets, stems):
        data = loaded.pop(name, None)  # a path's data, read up front, is freed once written
        data = load_any(name, data_dir) if data is None else data
        views = g.views(cfg.sampling).resolved(kind_of_data(data).per_graph, registered=not is_dataset_path(name))
        record = embeddings_record(checkpoint, cfg, name, data, views.record(), g.with_structural)
        resume = resume_state(load_dir / stem, record, g, share)
        emb = merged_rows(_dataset_rows(model, name, data, views, g, progress, share, resume), share)
        if emb is None:  # a rank other than 0: its rows went to rank 0, which writes them
            resume.discard()
            continue
        emb = joined_rows(emb, data) if g.with_structural else emb
        path = load_dir / f"{stem}.npy"
        check_finite_rows(emb, checkpoint.path, name, path)
        written += write_embeddings(path, emb, getattr(data, "ids", None), record)
        resume.discard()
    return written


def resume_state(prefix: Path, record: dict, g: GenerateConfig, share: tuple[int, int]) -> ResumeState:
    """Where a dataset's streamed rows keep their finished chunks (``<stem>.partial.npy`` / ``.json`` beside the
    output; one pair per rank under ``torchrun``), keyed by what the rows depend on: the embeddings record (encoder,
    dataset, views), the batch size and the share. A stopped ``generate`` run again goes on from them."""
    name = prefix.name if share[1] == 1 else f"{prefix.name}.rank{share[0]}of{share[1]}"
    key = {"record": record, "batch_size": g.batch_size, "share": list(share)}
    return ResumeState(prefix.with_name(name), key)


def _dataset_rows(model: GraphEncoder, name: str, data: LoadedDataset, views: ViewOptions, g: GenerateConfig,
                  progress: bool, share: tuple[int, int], resume: ResumeState | None = None) -> np.ndarray:
    """The encoder rows of dataset ``name`` (loaded as ``data``) under the resolved ``views``, of this rank's
    ``share`` (:func:`~gcc_sgcl.engine.stream.share_of`): streamed, or from the view cache with ``g.cache_views``;
    with ``progress``, prints the summary line (quiet callers get none, as they get no bars)."""
    from gcc_sgcl.data import dataset_name

    started = clock()
    parts = view_sources(name, views, data=data)
    plan = stream_plan(model, parts, g.threads, g.num_workers, local_cores(share))
    if g.cache_views:  # built whole (to be stored), then embedded copy by copy
        parts = cached_views(name, views, data=data, num_workers=plan.builders, progress=progress)
    emb = embed_parts(model, parts, g.batch_size, dataset_name(name), progress, plan, share, resume)
    rank = f" (rank {share[0]} of {share[1]})" if share[1] > 1 else ""
    if progress:
        print(summary_line(dataset_name(name) + rank, emb, views.copies, plan, started), file=sys.stderr, flush=True)
    return emb


def clock() -> tuple[float, float]:
    """Wall seconds and CPU seconds of this process and of its exited children (view builders), for
    :func:`summary_line`."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), time.process_time() + children.ru_utime + children.ru_stime


def summary_line(stem: str, emb: np.ndarray, copies: int, plan: ThreadPlan, started: tuple[float, float]) -> str:
    """One line on what embedding ``stem`` took since ``started`` (:func:`clock`): rows, views per row, the thread
    plan, wall and CPU seconds (view builders included), and this process's peak RSS."""
    wall, cpu = (now - then for now, then in zip(clock(), started))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return (f"[generate] {stem}: {len(emb)} rows x {emb.shape[1]}, {copies} views per row; {plan.describe()}; "
            f"{wall:.1f} s wall, {cpu:.1f} s CPU; peak RSS {peak:.0f} MiB")


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`~gcc_sgcl.config.InputConfig` and :class:`~gcc_sgcl.engine.generate.GenerateConfig`."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.engine.generate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, InputConfig, required=("load_path", "dataset"))
    add_arguments(p, GenerateConfig)
    return p


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    a = command_line().parse_args(argv)
    where = from_args(InputConfig, a)
    with user_errors():
        try:
            for path in generate(where.load_path, where.dataset, from_args(GenerateConfig, a), where.device,
                                 where.data_dir):
                print(path)
        finally:
            cleanup_distributed()  # under torchrun: leave the group generate joined


if __name__ == "__main__":
    main()
