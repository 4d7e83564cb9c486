"""The plain-torch encoder path (what runs on a GPU the installed DGL cannot reach), pinned to the DGL path on the
CPU bit for bit, and how the path is chosen, with CUDA and DGL's CUDA support faked."""
import dgl
import numpy as np
import pytest
import torch

from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.bench import gpu_check
from gcc_sgcl.contrastive import e2e_logits, info_nce
from gcc_sgcl.data.synthetic import build_pretrain_corpus
from gcc_sgcl.engine import device
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.inference import embed
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.pretrain import Trainer, build_pipeline, pretrain
from gcc_sgcl.models import FlatGraph, PlainPathError, build_encoder, model_path, to_model_input
from gcc_sgcl.models.flat import MODEL_PATH_ENV
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.dataset import NodeViewDataset, PretrainPairDataset, collate_pairs

FAMILIES = ("gcc", "sgcl", "graphcl", "grace", "mvgrl", "gca")


@pytest.fixture(scope="module")
def corpus():
    """A 1 200-node synthetic corpus (the four generators of the demo's, scaled down)."""
    return build_pretrain_corpus(seed=0, scale=0.05)


_PAIRS: dict[tuple[str, int], tuple] = {}


def _pairs(method: str, graphs, size: int = 32):
    """The first ``size`` (query, key) pairs of a run of ``method``, built by the package's own pipeline, as
    batched DGLGraphs (cached by method and size: the global embeddings of sgcl take seconds)."""
    if (method, size) not in _PAIRS:
        cfg = make_config(method)
        pipeline, embeddings = build_pipeline(cfg, graphs, progress=False)
        dataset = PretrainPairDataset(graphs, cfg.sampling, 0, 10 * size, pipeline, embeddings)
        _PAIRS[method, size] = (cfg, collate_pairs(dataset.__getitems__(list(range(size)))))
    return _PAIRS[method, size]


@pytest.fixture
def threads():
    """Set torch's intra-op threads for one test, restored afterwards."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


def _e2e_step(cfg, q, k):
    """Embeddings, E2E InfoNCE loss and every parameter gradient of a freshly seeded encoder in train mode
    (dropout on, its noise seeded)."""
    torch.manual_seed(0)
    model = build_encoder(cfg).train()
    torch.manual_seed(1)
    emb_q, emb_k = model(q), model(k)
    loss, _ = info_nce(*e2e_logits(emb_q, emb_k, cfg.train.nce_t))
    loss.backward()
    return emb_q.detach(), emb_k.detach(), loss.detach(), {n: p.grad for n, p in model.named_parameters()}


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("method", FAMILIES)
def test_plain_forward_loss_and_every_gradient_equal_dgl_bit_for_bit(corpus, threads, method, num_threads):
    cfg, (q, k) = _pairs(method, corpus)
    threads(num_threads)
    on_dgl = _e2e_step(cfg, q, k)
    on_plain = _e2e_step(cfg, to_model_input(q, "cpu", "plain"), to_model_input(k, "cpu", "plain"))
    for a, b in zip(on_dgl[:3], on_plain[:3]):
        assert torch.equal(a, b)
    assert on_dgl[3].keys() == on_plain[3].keys()
    for name, grad in on_dgl[3].items():
        assert grad is not None and torch.equal(grad, on_plain[3][name]), name


def test_flat_batches_from_views_and_from_the_dgl_graph_are_identical(corpus):
    cfg = make_config("gcc")
    dataset = PretrainPairDataset(corpus, cfg.sampling, 0, 100, PairPipeline())
    views = dataset.__getitems__(list(range(16)))[0]
    a, b = FlatGraph.from_views(views), FlatGraph.from_dgl(views.to_dgl())
    for name in ("src", "dst", "node_graph", "sizes"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert a.ndata.keys() == b.ndata.keys() and all(torch.equal(a.ndata[n], b.ndata[n]) for n in a.ndata)
    assert torch.equal(a.in_degrees(), views.to_dgl().in_degrees())
    assert (a.batch_size, a.num_nodes(), a.num_edges()) == (16, views.num_nodes.sum(), views.num_edges.sum())


def _tensors(state, prefix=""):
    """Every tensor of a (nested) checkpoint by its path, and the other leaves apart."""
    if isinstance(state, dict):
        return {k: v for key, value in state.items() for k, v in _tensors(value, f"{prefix}{key}/").items()}
    if isinstance(state, (list, tuple)):
        return {k: v for i, value in enumerate(state) for k, v in _tensors(value, f"{prefix}{i}/").items()}
    return {prefix: state}


@pytest.mark.parametrize("method,mode", [("gcc", "e2e"), ("sgcl", "moco")])
def test_a_short_run_on_either_path_writes_the_same_checkpoint(corpus, tmp_path, monkeypatch, method, mode):
    runs = {}
    for path in ("dgl", "plain"):
        cfg = make_config(method, {
            "sampling": {"positional_embedding_size": 8},
            "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
            "train": {"mode": mode, "batch_size": 8, "nce_k": 16, "steps": 4, "threads": 1, "save_freq": 2,
                      "output_dir": str(tmp_path), "run_name": path},
        })
        monkeypatch.setenv(MODEL_PATH_ENV, path)
        runs[path] = _tensors(load_checkpoint(pretrain(cfg, progress=False, graphs=corpus)))
    dgl_state, plain_state = runs["dgl"], runs["plain"]
    assert dgl_state.keys() == plain_state.keys()
    for key, value in dgl_state.items():
        if key.startswith(("train_seconds", "config/train/run_name")):
            continue
        same = torch.equal(value, plain_state[key]) if isinstance(value, torch.Tensor) else value == plain_state[key]
        assert same, key


def test_the_trainer_steps_on_flat_batches_as_on_dgl_graphs(corpus):
    cfg, (q, k) = _pairs("gcc", corpus)
    stats = []
    for inputs in ((q, k), (to_model_input(q, "cpu", "plain"), to_model_input(k, "cpu", "plain"))):
        trainer = Trainer(cfg)
        stats.append(trainer.step(*inputs))
        stats.append({n: p.detach().clone() for n, p in trainer.model.named_parameters()})
    assert stats[0] == stats[2]  # loss, prob, lr, grad norm, nodes per view
    assert all(torch.equal(p, stats[3][n]) for n, p in stats[1].items())


def test_embeddings_of_a_checkpoint_are_the_same_on_either_path(corpus, tmp_path, monkeypatch):
    cfg = make_config("gcc", {"train": {"steps": 2, "batch_size": 8, "threads": 1, "output_dir": str(tmp_path)}})
    model, _, _ = load_encoder_checkpoint(pretrain(cfg, progress=False, graphs=corpus))
    views = NodeViewDataset(corpus[0], cfg.sampling, seed=0).__getitems__(range(40))
    on_dgl = embed(model, views, batch_size=16, progress=False)
    monkeypatch.setenv(MODEL_PATH_ENV, "plain")
    assert np.array_equal(on_dgl, embed(model, views, batch_size=16, progress=False))


def test_set2set_readout_is_refused_on_the_plain_path_naming_the_ways_on(corpus):
    _, (q, _) = _pairs("gcc", corpus)
    cfg = make_config("gcc", {"model": {"readout": "set2set"}})
    model = build_encoder(cfg)
    assert model(q).shape == (32, cfg.model.hidden_size)  # DGL runs it
    with pytest.raises(PlainPathError, match="set2set.*DGL only.*readout='sum'.*CPU"):
        model(to_model_input(q, "cpu", "plain"))


def test_model_path_is_dgl_where_dgl_reaches_the_device_and_plain_torch_elsewhere(monkeypatch):
    monkeypatch.delenv(MODEL_PATH_ENV, raising=False)
    asked = []

    def cpu_only_dgl(index):
        asked.append(index)
        return False

    assert model_path("cpu", cpu_only_dgl) == "dgl" and asked == []
    assert model_path("cuda:1", cpu_only_dgl) == "plain" and asked == [1]
    assert model_path("cuda", lambda index: True) == "dgl"


def test_model_path_override_forces_plain_on_cpu_and_refuses_dgl_it_cannot_have(monkeypatch):
    monkeypatch.setenv(MODEL_PATH_ENV, "plain")
    assert model_path("cpu") == "plain"
    monkeypatch.setenv(MODEL_PATH_ENV, "dgl")
    assert model_path("cuda:0", lambda index: True) == "dgl"
    with pytest.raises(PlainPathError, match="GCC_SGCL_MODEL_PATH=dgl.*cannot place graphs on cuda:0"):
        model_path("cuda:0", lambda index: False)
    monkeypatch.setenv(MODEL_PATH_ENV, "fast")
    with pytest.raises(PlainPathError, match="choose one of auto, dgl, plain"):
        model_path("cpu")


def test_model_input_follows_the_chosen_path(corpus, monkeypatch):
    _, (q, _) = _pairs("gcc", corpus)
    monkeypatch.delenv(MODEL_PATH_ENV, raising=False)
    assert isinstance(to_model_input(q, "cpu"), dgl.DGLGraph)
    monkeypatch.setenv(MODEL_PATH_ENV, "plain")
    flat = to_model_input(q, "cpu")
    assert isinstance(flat, FlatGraph) and flat.batch_size == q.batch_size and flat.num_nodes() == q.num_nodes()


@pytest.fixture
def cuda_torch(monkeypatch):
    """torch reports two CUDA devices; GCC_SGCL_MODEL_PATH unset."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.delenv(MODEL_PATH_ENV, raising=False)


def test_a_gpu_with_cpu_only_dgl_is_used_through_the_plain_path_and_says_so(cuda_torch, monkeypatch, capsys):
    monkeypatch.setattr(device, "dgl_sees_gpu", lambda index: False)
    assert device.resolve_device("1") == "cuda:1"
    assert "DGL is CPU-only: the encoder runs in plain torch on cuda:1" in capsys.readouterr().err


def test_a_gpu_with_cuda_dgl_is_used_silently(cuda_torch, monkeypatch, capsys):
    monkeypatch.setattr(device, "dgl_sees_gpu", lambda index: True)
    assert device.resolve_device("0") == "cuda:0" and capsys.readouterr().err == ""


def test_a_missing_gpu_index_is_still_refused(cuda_torch, monkeypatch):
    monkeypatch.setattr(device, "dgl_sees_gpu", lambda index: False)
    with pytest.raises(device.DeviceError, match="GPU 2 does not exist: torch sees 2"):
        device.resolve_device("2")


def test_gpu_check_dry_run_holds_the_plain_path_to_bit_equality_and_reproduces_runs(corpus):
    cfg = gpu_check._config(16, "cpu")
    batches = gpu_check.build_batches(corpus, cfg, 1)
    row = gpu_check.check_model_step(batches, cfg, "cpu", "plain", gpu_check.EXACT)
    assert row.status == "ok" and row.result == "embeddings 0.0e+00, loss 0.0e+00, gradients 0.0e+00"
    assert gpu_check.check_run_to_run(batches, cfg, "cpu", "plain").result == "bit-identical"
    assert not torch.are_deterministic_algorithms_enabled()  # switched back on the way out


def test_gpu_check_table_says_which_steps_failed(tmp_path):
    rows = tmp_path / "rows.tsv"
    rows.write_text("install\tok\t3 s\t\npretrain.sh 0 sgcl\tFAILED\tsee log\tout of memory\n")
    with rows.open("a") as f:
        f.write(gpu_check.Row("eigh n=16", "ok", "cpu 0.1 ms/matrix").tsv() + "\n")
    table = gpu_check.format_table(gpu_check.read_rows(rows))
    assert table.splitlines()[3] == "| pretrain.sh 0 sgcl | FAILED | see log | out of memory |"
    assert table.endswith("FAILED: pretrain.sh 0 sgcl")
    assert gpu_check.format_table(gpu_check.read_rows(rows)[:1]).endswith("all 1 rows ok")
