"""GCC's contrastive method in one module, as moco's ``builder.py`` is MoCo's: the query encoder, for MoCo the
momentum key encoder and the queue of keys, the logits of a batch of (query, key) views, the InfoNCE loss, the
optimiser step and the key update after it.

E2E (GCC §3.2, "end-to-end"): the keys are the same encoder's embeddings of the key views; every other key of the
(global) batch is a negative. MoCo: the keys come from a copy of the encoder updated as
``key ← m·key + (1 − m)·query`` after each step, whose batch norm uses the batch's statistics (as GCC's), and the
negatives are a queue of the ``nce_k`` latest keys. ``τ`` divides every logit.

>>> import networkx as nx, dgl
>>> from gcc_sgcl.config import Config
>>> from gcc_sgcl.models import build_encoder
>>> from gcc_sgcl.augment import PairPipeline
>>> from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs
>>> cfg = Config.from_dict({"method": "gcc", "family": "sgcl", "train": {"mode": "moco", "nce_k": 16,
...                         "batch_size": 4}, "sampling": {"rw_hops": 16}})
>>> g = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(60, 3, seed=0)))
>>> q, k = collate_pairs(PretrainPairDataset([g], cfg.sampling, 0, 4, PairPipeline()).__getitems__(range(4)))
>>> step = ContrastiveStep(build_encoder(cfg), cfg)
>>> sorted(step.step(q, k))[:3], int(step.queue.ptr), step.step_count
(['grad_norm', 'loss', 'lr'], 4, 1)
"""
from __future__ import annotations

import copy
from typing import Callable

import torch
from torch import nn

from gcc_sgcl.config import Config
from gcc_sgcl.contrastive.hooks import StepHook
from gcc_sgcl.contrastive.loss import e2e_logits, info_nce, moco_logits
from gcc_sgcl.contrastive.queue import MomentumQueue, momentum_update
from gcc_sgcl.models import to_model_input


def lr_factor(step: int, total: int, warmup_frac: float, decay_frac: float) -> float:
    """Linear warm-up over the first ``warmup_frac`` of steps, linear decay over the last ``decay_frac``."""
    warmup, decay = int(total * warmup_frac), int(total * decay_frac)
    if warmup and step < warmup:
        return (step + 1) / warmup
    if decay and step >= total - decay:
        return (total - step) / decay
    return 1.0


_STEP_SEED_STRIDE = 1_000_003
_RANK_SEED_STRIDE = 2**40  # above seed · _STEP_SEED_STRIDE + step for seeds below 10^6


def dropout_seed(seed: int, step: int, rank: int = 0) -> int:
    """Torch seed of the dropout noise of ``step`` on process ``rank`` (distinct per (seed, step, rank)): a resumed
    run draws the masks it would have drawn."""
    return seed * _STEP_SEED_STRIDE + step + rank * _RANK_SEED_STRIDE


def _one_process(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    return x, 0


def _kept(stats: dict[str, float]) -> dict[str, float]:
    return stats


class ContrastiveStep:
    """The models, optimiser, scheduler and queue of one run; :meth:`step` does one optimisation step.

    Args:
        model: the query encoder (built and seeded by the caller; the MoCo key encoder starts as its copy).
        cfg: the run's configuration (``train``: mode, τ, queue size, momentum, optimiser, schedule, clipping).
        hook: the augmentation family's part of the step beyond its views (CuCo's negatives, BYOV's generators).
        net: what the forward passes call, the encoder itself or its wrapper that averages gradients over
            processes (default: ``model``).
        gather: ``x → (x of every process concatenated, where this process's rows start)``; one process:
            ``(x, 0)``. E2E's keys and MoCo's enqueued keys are the global batch's.
        mean: the statistics of every process averaged (one process: as they are).
        device: where the views go.
    """

    def __init__(self, model: nn.Module, cfg: Config, hook: StepHook | None = None, net: nn.Module | None = None,
                 gather: Callable[[torch.Tensor], tuple[torch.Tensor, int]] = _one_process,
                 mean: Callable[[dict[str, float]], dict[str, float]] = _kept, device: torch.device | None = None,
                 rank: int = 0) -> None:
        t = cfg.train
        self.cfg, self.model, self.hook, self.rank = cfg, model, hook, rank
        self.net = model if net is None else net
        self.gather, self.mean = gather, mean
        self.device = device if device is not None else torch.device(t.device)
        self.key_model = None
        self.queue = None
        if t.mode == "moco":
            self.key_model = copy.deepcopy(model)
            for p in self.key_model.parameters():
                p.requires_grad_(False)
            gen = torch.Generator().manual_seed(t.seed)
            self.queue = MomentumQueue(cfg.model.hidden_size, t.nce_k, generator=gen).to(self.device)
        self.optimizer = torch.optim.Adam(
            model.parameters(), lr=t.lr, betas=(t.beta1, t.beta2), eps=t.eps, weight_decay=t.weight_decay
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: lr_factor(s, t.steps, t.warmup_frac, t.decay_frac)
        )
        self.step_count = 0

    def logits(self, graph_q, graph_k) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(logits, positive index per row, MoCo's keys or None)`` of a batch of model-input views."""
        t = self.cfg.train
        q = self.net(graph_q)
        if t.mode == "e2e":
            keys, offset = self.gather(self.net(graph_k))
            return (*e2e_logits(q, keys, t.nce_t, offset), None)
        self.key_model.eval()
        for m in self.key_model.modules():  # GCC/MoCo: the key encoder's batch norm uses batch statistics
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.train()
        with torch.no_grad():
            k = self.key_model(graph_k)
        return (*moco_logits(q, k, self.queue.keys, t.nce_t), k)

    def step(self, graph_q, graph_k) -> dict[str, float]:
        """One optimisation step on a batch of (query, key) views; returns scalars to log."""
        t = self.cfg.train
        torch.manual_seed(dropout_seed(t.seed, self.step_count, self.rank))
        if self.hook is not None:
            graph_q, graph_k = self.hook.views(graph_q, graph_k, self.step_count)
        graph_q, graph_k = to_model_input(graph_q, self.device), to_model_input(graph_k, self.device)
        self.net.train()
        logits, target, k = self.logits(graph_q, graph_k)
        if self.hook is not None and (bias := self.hook.logit_bias(logits, target, self.step_count)) is not None:
            logits = logits + bias
        loss, prob = info_nce(logits, target)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip_norm)
        self.optimizer.step()
        lr = self.optimizer.param_groups[0]["lr"]
        self.scheduler.step()
        if t.mode == "moco":
            momentum_update(self.key_model, self.model, t.momentum)
            self.queue.enqueue(self.gather(k)[0])
        hooked = {} if self.hook is None else self.hook.update(logits.detach(), target, self.step_count)
        self.step_count += 1
        stats = {
            "loss": loss.item(),
            "prob": prob.item(),
            "lr": lr,
            "grad_norm": float(grad_norm),
            "nodes_q": graph_q.num_nodes() / graph_q.batch_size,
            "nodes_k": graph_k.num_nodes() / graph_k.batch_size,
            **hooked,
        }
        return self.mean(stats)

    def state_dict(self) -> dict:
        """The method's state: step, weights, key encoder and queue, optimiser and schedule, the hook's."""
        return {
            "step": self.step_count,
            "model": self.model.state_dict(),
            "key_model": self.key_model.state_dict() if self.key_model is not None else None,
            "queue": self.queue.state_dict() if self.queue is not None else None,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            **({"step_hook": self.hook.state_dict()} if self.hook is not None else {}),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore from :meth:`state_dict`."""
        self.model.load_state_dict(state["model"])
        if self.key_model is not None:
            self.key_model.load_state_dict(state["key_model"])
            self.queue.load_state_dict(state["queue"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step_count = state["step"]
        if self.hook is not None and "step_hook" in state:
            self.hook.load_state_dict(state["step_hook"])
