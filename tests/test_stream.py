"""Streamed embedding: the rows of embedding each copy whole, whatever the builders and chunks; threads planned
within the cores; a bounded number of views alive."""
import gc
import weakref

import numpy as np
import pytest

from gcc_sgcl.data.powerlaw import powerlaw_graph
from gcc_sgcl.engine import stream as stream_module
from gcc_sgcl.engine.inference import embed_parts
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.views import ViewOptions, dataset_views, view_sources
from gcc_sgcl.engine.stream import ViewSource, plan_units, streamed_rows
from gcc_sgcl.engine.threads import ThreadPlan, plan_threads
from gcc_sgcl.sampling.dataset import NodeViewDataset


@pytest.fixture(scope="module")
def encoder(tiny_encoder):
    return load_encoder_checkpoint(tiny_encoder)[:2]


@pytest.fixture(scope="module")
def graph():
    return powerlaw_graph(700, 2800, np.random.default_rng(3))


def test_streamed_rows_equal_each_copy_embedded_whole_and_averaged(encoder, graph):
    model, cfg = encoder
    whole = embed_parts(model, [list(part) for part in dataset_views("g", ViewOptions(cfg.sampling, seed=4, copies=3),
                                                                      progress=False, data=_node_data(graph))],
                        batch_size=64, progress=False)
    source = ViewSource(NodeViewDataset(graph, cfg.sampling, 4), np.arange(graph.num_nodes()), 3)
    for builders, chunk in ((0, 64), (0, 256), (1, 128), (2, 192)):
        rows = streamed_rows(model, [source], 64, ThreadPlan(1, builders, 2), progress=False, chunk=chunk)
        np.testing.assert_array_equal(rows, whole, err_msg=f"{builders} builders, chunk {chunk}")


def test_streamed_rows_of_graph_and_similarity_datasets_equal_the_built_copies(encoder):
    model, cfg = encoder
    for name in ("synthetic-graphs", "synthetic-similarity"):
        options = ViewOptions(cfg.sampling, copies=2)
        built = embed_parts(model, [list(p) for p in dataset_views(name, options, progress=False)], progress=False)
        streamed = embed_parts(model, view_sources(name, options), progress=False,
                               plan=ThreadPlan(1, 1, 2))
        np.testing.assert_array_equal(streamed, built, err_msg=name)


def test_units_go_chunk_by_chunk_and_copy_by_copy_over_every_row_once():
    units = plan_units([5, 2], [2, 3], 3)
    assert [(u.part, u.start, u.stop, u.copy) for u in units] == [
        (0, 0, 3, 0), (0, 0, 3, 1), (0, 3, 5, 0), (0, 3, 5, 1), (1, 0, 2, 0), (1, 0, 2, 1), (1, 0, 2, 2)]


def test_at_most_one_units_views_are_alive_when_the_next_is_built_in_process(encoder, graph, monkeypatch):
    model, cfg = encoder
    alive, built = [], []

    def building(self, i, build=stream_module.UnitViews.__getitem__):
        gc.collect()
        alive.append(sum(ref() is not None for ref in built))
        views = build(self, i)
        built.append(weakref.ref(views))
        return views

    monkeypatch.setattr(stream_module.UnitViews, "__getitem__", building)
    source = ViewSource(NodeViewDataset(graph, cfg.sampling), np.arange(graph.num_nodes()), 2)
    streamed_rows(model, [source], 64, ThreadPlan(1, 0, 1), progress=False, chunk=128)
    assert alive == [0] * 12  # 6 chunks x 2 copies, none of the earlier units' views held


@pytest.mark.parametrize("cores", [1, 2, 3, 4, 8, 16, 64])
def test_the_automatic_plan_fills_the_cores_without_exceeding_them(cores):
    plan = plan_threads(cores=cores)
    assert plan.model >= 1 and plan.model + plan.builders == max(cores, 1) and not plan.oversubscribed
    on_gpu = plan_threads(cores=cores, on_gpu=True)
    assert on_gpu.model == 1 and on_gpu.builders == cores - 1


def test_given_counts_are_honoured_and_the_summary_says_when_they_oversubscribe():
    assert plan_threads(model=2, cores=4) == ThreadPlan(2, 2, 4, "given")
    assert plan_threads(builders=1, cores=8) == ThreadPlan(2, 1, 8, "given")
    assert "over the cores" in plan_threads(model=3, builders=3, cores=2).describe()
    assert "over the cores" not in plan_threads(cores=2).describe()
    with pytest.raises(ValueError, match="must be >= 0"):
        plan_threads(builders=-1)


def test_generate_prints_its_thread_plan_in_the_summary_line(tiny_encoder, tmp_path, capsys):
    import shutil

    from gcc_sgcl.engine.generate import GenerateConfig, generate

    folder = tmp_path / "encoder"
    shutil.copytree(tiny_encoder, folder)
    generate(folder, ["synthetic-graphs"], GenerateConfig(threads=1, num_workers=1), progress=True)
    err = capsys.readouterr().err
    assert "[generate] synthetic-graphs:" in err and "threads: model 1 + 1 view builder" in err and "(given" in err


def _node_data(graph):
    from gcc_sgcl.data.containers import NodeLabelData

    return NodeLabelData("g", graph, np.zeros(graph.num_nodes(), dtype=np.int64))


def test_gpu_checks_streamed_embedding_step_holds_the_plain_path_to_the_cpu_rows(graph):
    from gcc_sgcl.bench import gpu_check

    row = gpu_check.check_streamed_embedding(graph, "cpu", "plain", 300, 2, 0.0)
    assert row.status == "ok" and row.result.startswith("rows max diff 0.0e+00"), row


def test_gpu_check_without_an_installed_interpreter_prints_its_rows_and_says_install_failed(tmp_path):
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "gpu_check.sh"
    done = subprocess.run(["bash", str(script), "--cpu-dry-run", "--wheels", str(tmp_path / "none")],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)})
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "| install | FAILED | no wheel folder" in done.stdout and "FAILED: install" in done.stdout


def _generate_rank(rank, port, folder, datasets):
    import os

    from gcc_sgcl.engine.distributed import cleanup_distributed
    from gcc_sgcl.engine.generate import GenerateConfig, generate

    os.environ.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    try:
        generate(folder, datasets, GenerateConfig(copies=2, threads=1), progress=False)
    finally:
        cleanup_distributed()


def test_two_gloo_processes_write_the_rows_ids_and_record_of_one_process(tiny_encoder, tmp_path):
    import json
    import shutil
    import socket

    import torch.multiprocessing as mp

    from gcc_sgcl.engine.generate import GenerateConfig, generate

    edges = tmp_path / "g.edgelist"
    g = powerlaw_graph(2500, 9000, np.random.default_rng(8))  # 3 chunks of 1024: rank 0 gets 1, rank 1 gets 2
    src, dst = (t.numpy() for t in g.edges())
    edges.write_text("".join(f"n{u} n{v}\n" for u, v in zip(src, dst) if u < v))
    datasets = ["synthetic-similarity", str(edges)]
    single, split = tmp_path / "single", tmp_path / "split"
    for folder in (single, split):
        shutil.copytree(tiny_encoder, folder)
    generate(single, datasets, GenerateConfig(copies=2, threads=1), progress=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(_generate_rank, args=(port, split, datasets), nprocs=2, start_method="fork")
    for stem in ("synthetic-similarity", "g"):
        np.testing.assert_array_equal(np.load(split / f"{stem}.npy"), np.load(single / f"{stem}.npy"))
        records = [json.loads((f / f"{stem}.provenance.json").read_text()) for f in (single, split)]
        for record in records:
            del record["encoder"]["checkpoint"]  # the folders differ
        assert records[0] == records[1]
    assert (split / "g.ids.txt").read_text() == (single / "g.ids.txt").read_text()


class Stopped(Exception):
    pass


def test_a_stopped_run_goes_on_from_its_saved_chunks_to_a_straight_runs_rows(encoder, graph, tmp_path, monkeypatch):
    model, cfg = encoder
    source = ViewSource(NodeViewDataset(graph, cfg.sampling, 4), np.arange(graph.num_nodes()), 3)
    plan = ThreadPlan(1, 0, 1)
    straight = streamed_rows(model, [source], 64, plan, progress=False, chunk=128)
    encoded, stop_at = [], [7]

    def stopping(model, views, *args, encode=stream_module.encode, **kwargs):
        if len(encoded) == stop_at[0]:  # chunks 0 and 1 (3 copies each) are finished, chunk 2 has one copy
            raise Stopped  # as Ctrl-C would (pytest itself stops on a KeyboardInterrupt)
        encoded.append(len(views))
        return encode(model, views, *args, **kwargs)

    monkeypatch.setattr(stream_module, "encode", stopping)
    state = stream_module.ResumeState(tmp_path / "g", {"seed": 4}, interval=3600)
    with pytest.raises(Stopped):
        streamed_rows(model, [source], 64, plan, progress=False, chunk=128, resume=state)
    assert stream_module.ResumeState(tmp_path / "g", {"seed": 4}).done == {(0, 0), (0, 128)}  # saved as it stopped
    assert stream_module.ResumeState(tmp_path / "g", {"seed": 5}).done == set()  # other views: starts over
    encoded.clear()
    stop_at[0] = None
    again = stream_module.ResumeState(tmp_path / "g", {"seed": 4})
    rows = streamed_rows(model, [source], 64, plan, progress=False, chunk=128, resume=again)
    assert rows.tobytes() == straight.tobytes()
    assert len(encoded) == 3 * (6 - 2)  # only the 4 unfinished chunks of 6 (700 rows, 128 per chunk)
    again.discard()
    assert not list(tmp_path.iterdir())
