"""``<method> ⊕ structural`` rows are one thing wherever they are made: ``generate --with-structural``, the API's
``with_structural=True`` and the rows the sweep joins and evaluates (``run --with-structural``); the task commands
read the wider rows as they are."""
import json

import numpy as np
import pytest

import gcc_sgcl
from gcc_sgcl.classical.structural import GRAPH_COLUMNS, NODE_COLUMNS
from gcc_sgcl.data import load_any
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine import views as views_module
from gcc_sgcl.engine.provenance import record_path
from gcc_sgcl.experiments import frozen_sweep
from gcc_sgcl.experiments.encoders import run_folder
from gcc_sgcl.experiments.sweep import Sweep
from gcc_sgcl.tasks import graph_classification, node_classification, similarity_search

# per dataset kind: node, graph, similarity (the structural vector z-scored over both graphs' nodes)
DATASETS = {"synthetic-roles": NODE_COLUMNS, "synthetic-graphs": GRAPH_COLUMNS, "synthetic-similarity": NODE_COLUMNS}
METHOD = "gcc[k=8]"  # a small positional embedding keeps the views cheap
HIDDEN = 64  # the preset's hidden size


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 2-step encoder trained by a one-job sweep with ``with_structural``, the joined rows that sweep handed to
    its evaluation (captured there, the evaluation itself skipped), and the embeddings ``generate
    --with-structural --copies 2`` writes for it (views read back from the sweep's view cache)."""
    root = tmp_path_factory.mktemp("join")
    mp = pytest.MonkeyPatch()
    mp.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    evaluated: dict[str, list[np.ndarray]] = {}

    def capture(name, data, emb, lam, protocol):
        evaluated.setdefault(name, []).append(emb)
        return []

    mp.setattr(frozen_sweep, "evaluate_dataset", capture)
    sweep = Sweep(methods=[METHOD], seeds=[0], datasets=list(DATASETS), steps=2, batch_size=8, num_workers=0,
                  output_dir=str(root / "runs"), rows=str(root / "rows.jsonl"), folds=2, repeats=1,
                  with_structural=True)
    frozen_sweep.run_sweep(sweep, progress=False)
    mp.undo()
    run = run_folder(sweep.encoder_config(METHOD, "e2e", 0))
    mp.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    generate_module.main(["--load-path", str(run), "--dataset", *DATASETS, "--with-structural", "--cache-views",
                          "--copies", str(views_module.GCC_COPIES)])  # the sweep's views
    joined = {name: next(rows for rows in embs if rows.shape[1] > HIDDEN) for name, embs in evaluated.items()}
    yield run, joined
    mp.undo()


def test_generate_with_structural_writes_the_sweeps_joined_rows(swept):
    """Bit-equal: the sweep, generate and the API all join the float32 structural vector
    (``embed_dataset`` and ``structural_vector`` both return float32)."""
    run, joined = swept
    for name, columns in DATASETS.items():
        written = np.load(run / f"{name}.npy")
        assert written.dtype == np.float32 and written.shape == joined[name].shape
        assert written.shape[1] == HIDDEN + len(columns)
        np.testing.assert_array_equal(written, joined[name])


def test_the_record_says_the_rows_are_joined_and_to_what(swept):
    run, _ = swept
    for name, columns in DATASETS.items():
        record = json.loads(record_path(run / f"{name}.npy").read_text())
        assert record["joined"] == {"vector": "structural", "encoder_columns": HIDDEN, "vector_columns": list(columns)}
        assert record["embeddings"]["shape"] == [len(np.load(run / f"{name}.npy")), HIDDEN + len(columns)]


def test_the_api_with_structural_gives_generates_file_bit_for_bit(swept):
    """Same views, same encoder rows, same float64 structural vector and one ``joined``: assert_array_equal."""
    run, _ = swept
    enc = gcc_sgcl.load_encoder(run)
    copies = views_module.GCC_COPIES  # the fixture's generate --copies
    nodes = enc.embed_nodes(load_any("synthetic-roles").graph, copies=copies, with_structural=True)
    graphs = enc.embed_graphs(load_any("synthetic-graphs").graphs, copies=copies, with_structural=True)
    np.testing.assert_array_equal(nodes, np.load(run / "synthetic-roles.npy"))
    np.testing.assert_array_equal(graphs, np.load(run / "synthetic-graphs.npy"))


@pytest.mark.parametrize("hidden", [HIDDEN, HIDDEN + len(NODE_COLUMNS)], ids=["encoder-size", "whole-width"])
def test_node_classification_reads_joined_rows_by_the_encoders_size_or_the_whole_width(swept, hidden):
    run, _ = swept
    (result,) = node_classification.main(["--load-path", str(run), "--hidden", str(hidden), "--dataset",
                                           "synthetic-roles", "--folds", "2", "--repeats", "1"])
    assert 0 <= result.mean <= 1


def test_graph_classification_and_similarity_search_read_joined_rows(swept):
    run, _ = swept
    (result,) = graph_classification.main(["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset",
                                            "synthetic-graphs", "--folds", "2", "--repeats", "1"])
    hits = similarity_search.main(["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset",
                                   "synthetic-similarity"])
    assert 0 <= result.mean <= 1 and hits and all(0 <= h.mean <= 1 for h in hits)


def test_another_hidden_size_is_refused_naming_both_blocks(swept):
    run, _ = swept
    with pytest.raises(SystemExit, match=r"hidden size 72 \(64 of the encoder joined to 8 structural, generate "
                                         r"--with-structural\) but --hidden is 32"):
        node_classification.main(["--load-path", str(run), "--hidden", "32", "--dataset", "synthetic-roles"])
