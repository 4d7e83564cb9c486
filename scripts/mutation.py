#!/usr/bin/env python
"""Mutation run over the contrastive core and the encoder: one-line mutants, each run against its targeted tests in a
copy.

    python scripts/mutation.py                  every mutant (about 50 min on 2 busy cores under nice)
    python scripts/mutation.py -k step -j 2     mutants whose id contains "step", two at a time
    python scripts/mutation.py --list           the mutants, without running anything (stale ones marked)

The tree (``gcc_sgcl/``, ``tests/``, ``scripts/``, ``setup.py``) is copied to a scratch folder (``--work``, one per
job), so the repository is never edited. Each mutant replaces one exact, unique line fragment of one file, then runs
``pytest -x`` on the mutated module's doctests, the test files of its area (the encoder's and the embedding rows'
end with ``tests/test_encoder_definition.py``, GCC's encoder equations) and, last,
``tests/test_core_definition.py``; a failure kills it. The first failing test is recorded, so the run also
reports the kill rate without ``test_core_definition.py`` (the mutants it alone kills). A mutant whose original
text is not found is reported as stale (the source changed): update its line here. Survivors are described in
``docs/mutation.md``, each killed by a test or explained as equivalent. Run through ``scripts/_env.sh``'s
virtualenv (``source scripts/_env.sh`` first, or ``.venv/bin/python``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEW = "tests/test_core_definition.py"
CONTRASTIVE = ["tests/test_model_contrastive.py"]
STEP = ["tests/test_model_contrastive.py", "tests/test_engine.py"]
AUGMENT = ["tests/test_augment_view_building.py", "tests/test_augment.py", "tests/test_augment_baselines.py"]
SAMPLING = ["tests/test_augment_view_building.py", "tests/test_sampling.py"]
ENCODER_DEFINITION = "tests/test_encoder_definition.py"
MODELS = ["tests/test_model_contrastive.py", "tests/test_gpu_path.py", ENCODER_DEFINITION]
CROP = AUGMENT
ROWS = ["tests/test_stream.py", "tests/test_api.py", ENCODER_DEFINITION]


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


def m(id: str, path: str, old: str, new: str, tests: list[str]) -> Mutant:
    return Mutant(id, "gcc_sgcl/" + path, old, new, tuple(tests))


LOSS, MEMORY, BUILDER = "contrastive/loss.py", "contrastive/queue.py", "contrastive/builder.py"
GIN, ENCODER, CROPS = "models/gin.py", "models/encoder.py", "augment/crop.py"
BASE, FUNC, PIPE = "augment/base.py", "augment/functional.py", "augment/pipeline.py"
MUTANTS = [
    # contrastive/: InfoNCE, the logits of both modes, the queue, the momentum update
    m("loss.ignores-positive-index", LOSS, "F.cross_entropy(logits, positive_index)",
      "F.cross_entropy(logits, torch.zeros_like(positive_index))", CONTRASTIVE),
    m("loss.prob-softmax-over-rows", LOSS, "logits.softmax(dim=1)", "logits.softmax(dim=0)", CONTRASTIVE),
    m("loss.prob-max-not-mean", LOSS, "positive_index.unsqueeze(1)).mean()", "positive_index.unsqueeze(1)).max()",
      CONTRASTIVE),
    m("loss.e2e-offset-bound-strict", LOSS, "positive_offset <= k.shape[0] - q.shape[0]",
      "positive_offset < k.shape[0] - q.shape[0]", CONTRASTIVE),
    m("loss.e2e-times-temperature", LOSS, "q @ k.t() / temperature", "q @ k.t() * temperature", CONTRASTIVE),
    m("loss.e2e-ignores-offset", LOSS, "torch.arange(positive_offset, positive_offset + q.shape[0], device=q.device)",
      "torch.arange(0, q.shape[0], device=q.device)", CONTRASTIVE),
    m("loss.moco-positive-with-wrong-key", LOSS, "pos = (q * k).sum(", "pos = (q * k.roll(1, 0)).sum(", CONTRASTIVE),
    m("loss.moco-negatives-of-keys", LOSS, "neg = q @ queue.t()", "neg = k @ queue.t()", CONTRASTIVE),
    m("loss.moco-positive-last", LOSS, "torch.cat([pos, neg], dim=1)", "torch.cat([neg, pos], dim=1)", CONTRASTIVE),
    m("loss.moco-no-temperature", LOSS, "torch.cat([pos, neg], dim=1) / temperature", "torch.cat([pos, neg], dim=1)",
      CONTRASTIVE),
    m("queue.init-scale", MEMORY, "stdv = 1.0 / (dim / 3) ** 0.5", "stdv = 1.0 / dim ** 0.5", CONTRASTIVE),
    m("queue.refuses-a-full-batch", MEMORY, "if n > self.size:", "if n >= self.size:", CONTRASTIVE),
    m("queue.ignores-pointer", MEMORY, "idx = (self.ptr + torch.arange(n, device=k.device)) % self.size",
      "idx = torch.arange(n, device=k.device) % self.size", CONTRASTIVE),
    m("queue.pointer-never-wraps", MEMORY, "self.ptr.copy_((self.ptr + n) % self.size)",
      "self.ptr.copy_(self.ptr + n)", CONTRASTIVE),
    m("queue.keys-reversed", MEMORY, "self.keys[idx] = k.detach()", "self.keys[idx] = k.flip(0).detach()",
      CONTRASTIVE),
    m("momentum.alpha-m", MEMORY, "alpha=1.0 - momentum", "alpha=momentum", CONTRASTIVE),
    m("momentum.swapped-weights", MEMORY, "pk.mul_(momentum).add_(pq.detach(), alpha=1.0 - momentum)",
      "pk.mul_(1.0 - momentum).add_(pq.detach(), alpha=momentum)", CONTRASTIVE),
    # contrastive/builder.py: ContrastiveStep.logits and .step
    m("step.no-momentum-update", BUILDER, "            momentum_update(self.key_model, self.model, t.momentum)",
      "            pass", STEP),
    m("step.momentum-update-reversed", BUILDER, "momentum_update(self.key_model, self.model, t.momentum)",
      "momentum_update(self.model, self.key_model, t.momentum)", STEP),
    m("step.no-enqueue", BUILDER, "            self.queue.enqueue(self.gather(k)[0])", "            pass", STEP),
    m("step.enqueue-queries", BUILDER, "return (*moco_logits(q, k, self.queue.keys, t.nce_t), k)",
      "return (*moco_logits(q, k, self.queue.keys, t.nce_t), q.detach())", STEP),
    m("step.key-bn-not-train", BUILDER, "                m.train()", "                pass", STEP),
    m("step.key-dropout-on", BUILDER, "        self.key_model.eval()", "        self.key_model.train()", STEP),
    m("step.keys-from-query-encoder", BUILDER, "k = self.key_model(graph_k)", "k = self.net(graph_k)", STEP),
    m("step.query-not-train-mode", BUILDER, "        self.net.train()", "        pass", STEP),
    m("step.e2e-keys-detached", BUILDER, "self.gather(self.net(graph_k))",
      "self.gather(self.net(graph_k).detach())", STEP),
    m("step.moco-temperature-doubled", BUILDER, "moco_logits(q, k, self.queue.keys, t.nce_t)",
      "moco_logits(q, k, self.queue.keys, 2 * t.nce_t)", STEP),
    m("step.moco-queue-reversed", BUILDER, "moco_logits(q, k, self.queue.keys, t.nce_t)",
      "moco_logits(q, k, self.queue.keys.flip(0), t.nce_t)", STEP),
    m("step.no-zero-grad", BUILDER, "        self.optimizer.zero_grad(set_to_none=True)", "        pass", STEP),
    m("step.no-clipping", BUILDER, "grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip_norm)",
      "grad_norm = torch.nn.utils.get_total_norm([p.grad for p in self.model.parameters() if p.grad is not None])",
      STEP),
    m("step.no-optimizer-step", BUILDER, "        self.optimizer.step()", "        pass", STEP),
    m("step.no-scheduler-step", BUILDER, "        self.scheduler.step()", "        pass", STEP),
    m("step.no-dropout-seed", BUILDER, "        torch.manual_seed(dropout_seed(t.seed, self.step_count, self.rank))",
      "        pass", STEP),
    m("step.count-not-advanced", BUILDER, "        self.step_count += 1", "        pass", STEP),
    # augment/: pair steps, combinators, SGCL's transforms and their functional core
    m("both.key-gets-query-stream", BASE,
      'self.transform.forward(q, rng.child("q")), self.transform.forward(k, rng.child("k"))',
      'self.transform.forward(q, rng.child("q")), self.transform.forward(k, rng.child("q"))', AUGMENT),
    m("split.key-gets-query-stream", BASE, 'self.key.forward(k, rng.child("k"))',
      'self.key.forward(k, rng.child("q"))', AUGMENT),
    m("split.transforms-swapped", BASE,
      'return self.query.forward(q, rng.child("q")), self.key.forward(k, rng.child("k"))',
      'return self.key.forward(q, rng.child("q")), self.query.forward(k, rng.child("k"))', AUGMENT),
    m("compose.one-stream", BASE, "views = t.forward(views, rng.child(i))", "views = t.forward(views, rng)",
      AUGMENT),
    m("choice.ignores-weights", BASE, "self.probs = w / w.sum()", "self.probs = np.ones(len(w)) / len(w)", AUGMENT),
    m("choice.group-complement", BASE, "np.flatnonzero(groups == j)", "np.flatnonzero(groups != j)", AUGMENT),
    m("align.probability-complement", "augment/align.py", "uniform() < self.p", "uniform() >= self.p", AUGMENT),
    m("align.key-not-aligned", "augment/align.py", "k.update(rows, F.align_views(k.select(rows))))", "k)", AUGMENT),
    m("reorder.never-r-max", "augment/spectral_order.py", 'integers(1, self.r_max + 1)', 'integers(1, self.r_max)',
      AUGMENT),
    m("mask.never-max-masked", "augment/spectral_order.py", 'integers(0, self.max_masked + 1)',
      'integers(0, self.max_masked)', AUGMENT),
    m("reorder.ascending", FUNC, "return valid_order(eigval, -key)", "return valid_order(eigval, key)", AUGMENT),
    m("reorder.adjacency-not-laplacian", FUNC, "mu = 1.0 - np.nan_to_num(eigval.astype(np.float64))",
      "mu = np.nan_to_num(eigval.astype(np.float64))", AUGMENT),
    m("reorder.diffusion-order-short-by-one", FUNC, "<= r[:, None, None]", "< r[:, None, None]", AUGMENT),
    m("mask.one-extra-column", FUNC, "(rank < np.asarray(z)[:, None])", "(rank <= np.asarray(z)[:, None])", AUGMENT),
    m("mask.smallest-eigenvalues", FUNC, "order = valid_order(eigval, -np.nan_to_num(eigval.astype(np.float64)))",
      "order = valid_order(eigval, np.nan_to_num(eigval.astype(np.float64)))", AUGMENT),
    m("permute.eigval-kept", FUNC, "eigval=np.take_along_axis(views.eigval, perm, axis=1),", "eigval=views.eigval,",
      AUGMENT),
    m("procrustes.transposed", FUNC, "return (u @ vt).numpy()", "return (u @ vt).mT.numpy()", AUGMENT),
    m("similarity.unclipped", FUNC, "np.clip(np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0), -1.0, 1.0)",
      "np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)", AUGMENT),
    m("crop.centre-may-go", FUNC, "    keep[views.node_ptr[:-1] + views.seed_pos] = True\n", "", AUGMENT),
    m("crop.upper-bound-strict", FUNC, "(x <= rx[view, 1] + tol[:, 0])", "(x < rx[view, 1] - tol[:, 0])", AUGMENT),
    m("crop.random-drops-centre-first", FUNC, "score[views.node_ptr[:-1] + views.seed_pos] = -1.0",
      "score[views.node_ptr[:-1] + views.seed_pos] = 2.0", AUGMENT),
    m("filter.threshold-c", "augment/filter.py", "_ACCEPTS[self.mode](sims, 1.0 - self.c)",
      "_ACCEPTS[self.mode](sims, self.c)", AUGMENT),
    m("filter.probability-inclusive", "augment/filter.py", 'uniform() < self.p', 'uniform() <= self.p', AUGMENT),
    m("filter.one-try-fewer", "augment/filter.py", "for t in range(1, self.t_max):",
      "for t in range(1, self.t_max - 1):", AUGMENT),
    m("filter.tries-not-counted", "augment/filter.py", "            tries[pending] += 1\n", "", AUGMENT),
    m("pipeline.no-identity-share", PIPE, "rest = max(0.0, 1.0 - sum(p for _, p in choices))", "rest = 0.0", AUGMENT),
    # GCC's plain pairs are this pipeline without filter or steps (PairPipeline()): the sampling tests read it too
    m("pipeline.same-walk-for-q-and-k", PIPE, 'child("try0").child(side)) for side in ("q", "k"))',
      'child("try0").child("q")) for side in ("q", "k"))', AUGMENT + SAMPLING),
    m("pipeline.same-signs-for-q-and-k", PIPE, 'k = sampler.build(sets_k, rng.child("k"), self.needs_global_rows)',
      'k = sampler.build(sets_k, rng.child("q"), self.needs_global_rows)', AUGMENT + SAMPLING),
    # sampling/: starts, walks, node sets, eigen-features, signs, keyed streams
    m("starts.degree-power-1", "sampling/dataset.py", "in_degree.astype(np.float64) ** 0.75",
      "in_degree.astype(np.float64) ** 1.0", SAMPLING),
    m("rwr.restart-complement", "sampling/rwr.py", "walkers.mantissas(counter + 1) >= restart_at",
      "walkers.mantissas(counter + 1) < restart_at", SAMPLING),
    m("rwr.first-neighbour-only", "sampling/rwr.py",
      "cur = indices[indptr[cur] + (walkers.at(counter) * d).astype(np.int64)]", "cur = indices[indptr[cur]]",
      SAMPLING),
    m("rwr.budget-factor", "sampling/rwr.py", "math.e / (math.e - 1)", "math.e / (math.e + 1)", SAMPLING),
    m("rwr.budget-ignores-hops", "sampling/rwr.py", "np.maximum(rw_hops, np.floor(scaled + 0.5)",
      "np.maximum(1, np.floor(scaled + 0.5)", SAMPLING),
    m("nodes.start-not-first", "sampling/rwr.py", "out[ptr[:-1]] = starts", "out[ptr[:-1]] = np.sort(starts)",
      SAMPLING),
    m("spectral.columns-n-1", "sampling/spectral.py", "np.clip(np.asarray(num_nodes) - 2, 0, k)",
      "np.clip(np.asarray(num_nodes) - 1, 0, k)", SAMPLING),
    m("spectral.pe-not-normalised", "sampling/spectral.py", "pe[a:a + block] = rows / np.where(norms > 0, norms, 1.0)",
      "pe[a:a + block] = rows", SAMPLING),
    m("spectral.random-walk-laplacian", "sampling/spectral.py",
      "minlength=b * size).astype(np.float64).clip(1.0) ** -0.5",
      "minlength=b * size).astype(np.float64).clip(1.0) ** -1.0", SAMPLING),
    m("spectral.sparse-adjacency-power", "sampling/spectral.py", "clip(1.0) ** -0.5)", "clip(1.0) ** -1.0)",
      SAMPLING),
    m("signs.never-flipped", "sampling/spectral.py", "np.where(np.asarray(u) < 0.5, -1.0, 1.0)",
      "np.where(np.asarray(u) < 0.0, -1.0, 1.0)", SAMPLING),
    m("signs.one-per-view", "sampling/induced.py", 'random_signs(rng.child("pe_sign").uniform(k))',
      'random_signs(rng.child("pe_sign").uniform(1).repeat(k, axis=1))', SAMPLING),
    m("keys.child-unmixed", "sampling/keys.py", "return KeyedRandom(mix(self.keys ^ _name_code(name)))",
      "return KeyedRandom(self.keys ^ _name_code(name))", SAMPLING),
    # models/: GCC's UnsupervisedGIN layer and readout, on both paths, and the encoder around it
    m("gin.outer-relu-dropped", GIN, "h = torch.relu(norm(conv_of(conv, h)))", "h = norm(conv_of(conv, h))", MODELS),
    m("gin.outer-norm-dropped", GIN, "h = torch.relu(norm(conv_of(conv, h)))", "h = torch.relu(conv_of(conv, h))",
      MODELS),
    m("gin.readout-last-layer-only", GIN,
      "return sum(self.dropout(head(pool(s))) for head, s in zip(self.heads, states))",
      "return self.dropout(self.heads[-1](pool(h)))", MODELS),
    m("gin.readout-skips-input-layer", GIN, "states = [x]", "states = []", MODELS),
    m("gin.readout-heads-shared", GIN, "zip(self.heads, states)", "zip([self.heads[-1]] * len(states), states)",
      MODELS),
    m("gin.readout-heads-reversed", GIN, "zip(self.heads, states)", "zip(self.heads, states[::-1])", MODELS),
    m("gin.eps-not-zero", GIN, 'aggregator_type="sum")', 'aggregator_type="sum", init_eps=0.1)', MODELS),
    m("gin.plain-drops-self-term", GIN, "conv.apply_func((1 + conv.eps) * h + agg)",
      "conv.apply_func(conv.eps * h + agg)", MODELS),
    m("gin.plain-sums-out-neighbours", GIN, "index_add_(0, g.dst, h.index_select(0, g.src))",
      "index_add_(0, g.src, h.index_select(0, g.dst))", MODELS),
    m("gin.mlp-inner-relu-dropped", GIN, "nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out_dim)]",
      "nn.BatchNorm1d(hidden), nn.Linear(hidden, out_dim)]", MODELS),
    m("gin.apply-node-func-ignored", GIN, "    if apply_node_func:\n", "    if True:\n", MODELS),
    m("gin.apply-node-func-without-relu", GIN, "layers += [nn.BatchNorm1d(out_dim), nn.ReLU()]",
      "layers += [nn.BatchNorm1d(out_dim)]", MODELS),
    m("gin.set2set-two-iterations", GIN, "Set2Set(hidden_dim, n_iters=3, n_layers=1)",
      "Set2Set(hidden_dim, n_iters=2, n_layers=1)", MODELS),
    m("encoder.degree-clip-off-by-one", ENCODER, "clamp(max=self.max_degree)", "clamp(max=self.max_degree - 1)",
      MODELS),
    m("encoder.seed-flag-zeroed", ENCODER, "g.ndata[SEED].unsqueeze(1).to(pe.dtype)",
      "torch.zeros_like(g.ndata[SEED]).unsqueeze(1).to(pe.dtype)", MODELS),
    # augment/crop.py and the box it applies (functional.box_keep, segment_quantiles)
    m("cropbox.y-bounds-unchecked", CROPS, "b[0] > b[1] or b[2] > b[3]", "b[0] > b[1]", CROP),
    m("cropbox.x-quantiles-of-the-y-bounds", FUNC, "segment_quantiles(x, n, np.array(box[:2]))",
      "segment_quantiles(x, n, np.array(box[2:]))", CROP),
    m("cropbox.y-quantiles-of-x", FUNC, "ry = segment_quantiles(y, n,", "ry = segment_quantiles(x, n,", CROP),
    m("cropbox.x-bounds-swapped", FUNC, "np.array(box[:2])", "np.array(box[1::-1])", CROP),
    m("cropbox.y-lower-bound-reads-the-upper", FUNC, "(y >= ry[view, 0] - tol[:, 1])",
      "(y >= ry[view, 1] - tol[:, 1])", CROP),
    m("cropbox.y-tolerance-of-x", FUNC, "(y <= ry[view, 1] + tol[:, 1])", "(y <= ry[view, 1] + tol[:, 0])", CROP),
    m("cropbox.quantile-position-off-by-one", FUNC, "h = (counts[:, None] - 1) * q", "h = counts[:, None] * q", CROP),
    m("cropbox.crops-with-two-eigen-columns", CROPS, "(views.num_valid >= 3)", "(views.num_valid >= 2)", CROP),
    m("cropbox.min-nodes-off-by-one", CROPS, "(kept >= MIN_CROP_NODES)", "(kept > MIN_CROP_NODES)", CROP),
    m("cropbox.uncroppable-views-cropped", CROPS, "return keep | ~cropped[views.node_view]", "return keep", CROP),
    m("cropbox.random-keeps-the-dropped-count", CROPS, "F.random_keep(views, counts,",
      "F.random_keep(views, views.num_nodes - counts,", CROP),
    # a row of generate / embed_nodes / embed_graphs: the mean over its copies of unit-norm view embeddings
    m("rows.streamed-sum-not-mean", "engine/stream.py", "= total / (unit.copy + 1)", "= total", ROWS),
    m("rows.streamed-first-view-only", "engine/stream.py", "total = emb if unit.copy == 0 else total + emb",
      "total = emb if unit.copy == 0 else total", ROWS),
    m("rows.streamed-mean-over-one-copy-fewer", "engine/stream.py", "total / (unit.copy + 1)",
      "total / max(unit.copy, 1)", ROWS),
    m("rows.built-sum-not-mean", "engine/inference.py", "return np.mean(out, axis=0)", "return np.sum(out, axis=0)",
      ROWS),
    m("rows.built-first-view-only", "engine/inference.py", "return np.mean(out, axis=0)", "return out[0]", ROWS),
    m("rows.view-embedding-not-normalised", ENCODER,
      "return F.normalize(self.gnn(g, self.node_inputs(g)), p=2, dim=-1, eps=1e-5)",
      "return self.gnn(g, self.node_inputs(g))", ROWS),
]


def copy_tree(dest: Path) -> Path:
    """A fresh copy of what the tests need: the package, the tests, the scripts some of them run and ``setup.py``."""
    if dest.exists():
        shutil.rmtree(dest)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gcc_sgcl", "tests", "scripts"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "setup.py", dest / "setup.py")
    return dest


def pytest_command(mutant: Mutant, new_tests: bool) -> list[str]:
    tests = [f for f in mutant.tests if f != NEW] + ([NEW] if new_tests else [])
    return [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
            "--doctest-modules", mutant.path, *tests]


def run_tests(work: Path, cmd: list[str], timeout: float) -> tuple[int | str, str]:
    """``(return code or "timeout", last lines of output)`` of ``cmd`` in ``work`` (its package first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(work), "DGLBACKEND": "pytorch"}
    try:
        done = subprocess.run(["nice", "-n", "10", *cmd], cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return done.returncode, done.stdout[-4000:] + done.stderr[-2000:]


def first_failure(output: str) -> str:
    found = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE)
    return found.group(1) if found else "(no test named: collection or doctest error)"


def matches(mutant: Mutant, root: Path = ROOT) -> int:
    """How often the mutant's original text occurs in its file under ``root``: 1, or it is stale."""
    return (root / mutant.path).read_text().count(mutant.old)


def run_mutant(mutant: Mutant, work: Path, timeout: float, new_tests: bool) -> dict:
    target = work / mutant.path
    source = target.read_text()
    if source.count(mutant.old) != 1:
        return {"id": mutant.id, "status": "stale", "by": f"{source.count(mutant.old)} matches", "seconds": 0.0}
    start = time.time()
    target.write_text(source.replace(mutant.old, mutant.new))
    try:
        code, output = run_tests(work, pytest_command(mutant, new_tests), timeout)
    finally:
        target.write_text(source)
    status = "killed" if code not in (0, 5) else "survived"  # 5: no tests collected counts as a survivor
    by = "timeout" if code == "timeout" else first_failure(output) if status == "killed" else ""
    return {"id": mutant.id, "status": status, "by": by, "seconds": time.time() - start}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only the mutants whose id contains this text (several: comma-separated)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="mutants run at once (one tree copy each)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutant's tests (a timeout kills)")
    parser.add_argument("--work", default=None, help="scratch folder for the copies (default: a new temporary one)")
    parser.add_argument("--without-new", action="store_true", help=f"leave {NEW} out (the kill rate before it)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    mutants = [x for x in MUTANTS if any(part in x.id for part in args.k.split(","))]
    if args.list:
        for x in mutants:
            stale = "" if matches(x) == 1 else f"STALE ({matches(x)} matches) "
            print(f"{stale}{x.id:40s} {x.path}: {x.old.strip()!r} -> {x.new.strip()!r}")
        return 0
    scratch = Path(args.work or tempfile.mkdtemp(prefix="gcc_sgcl_mutation_"))
    works = [copy_tree(scratch / f"tree{j}") for j in range(max(1, args.jobs))]
    baseline = {test for x in mutants for test in x.tests} | ({NEW} if not args.without_new else set())
    code, output = run_tests(works[0], [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                        *sorted(baseline)], args.timeout * 2)
    if code != 0:
        print(f"the unmutated tree fails its tests ({code}); fix that first:\n{output}", file=sys.stderr)
        return 2
    print(f"{len(mutants)} mutants, {args.jobs} at a time, in {scratch} ({time.strftime('%Y-%m-%d %H:%M')})")
    free = list(works)

    def one(x: Mutant) -> dict:
        work = free.pop()
        try:
            result = run_mutant(x, work, args.timeout, not args.without_new)
        finally:
            free.append(work)
        print(f"{result['status']:8s} {result['seconds']:6.1f}s  {x.id:40s} {result['by']}", flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, mutants))
    counted = [r for r in results if r["status"] != "stale"]
    killed = [r for r in counted if r["status"] == "killed"]
    by_new = [r for r in killed if r["by"].startswith(NEW)]
    print(f"\nkilled {len(killed)}/{len(counted)} ({100 * len(killed) / max(1, len(counted)):.0f} %)"
          + ("" if args.without_new else f"; without {NEW}: {len(killed) - len(by_new)}/{len(counted)}"
             f" ({100 * (len(killed) - len(by_new)) / max(1, len(counted)):.0f} %)"))
    for r in results:
        if r["status"] != "killed":
            print(f"  {r['status']}: {r['id']} {r['by']}")
    if args.work is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
