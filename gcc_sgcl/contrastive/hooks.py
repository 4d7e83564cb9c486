"""A family's part of the contrastive step beyond the views its pair pipeline builds (:data:`STEP_HOOKS`).

Most families only make views (:data:`~gcc_sgcl.augment.pipeline.BASELINES`), and their runs have no hook: the step
is GCC's. A family that changes the step itself registers a :class:`StepHook` factory here under its name; the
trainer (:class:`~gcc_sgcl.engine.pretrain.Trainer`) calls the hook at three points of every step:

1. :meth:`StepHook.views` -- the pair of view batches the encoder reads (BYOV: views drawn from learned generators);
2. :meth:`StepHook.logit_bias` -- added to the logits before InfoNCE (CuCo: the curriculum's choice of negatives);
3. :meth:`StepHook.update` -- after the encoder's update, with the step's logits (BYOV: the generators' update).

Its random numbers come from the run's seed and the step (:func:`step_random`), never from torch's global
generator, and its state (:meth:`StepHook.state_dict`) is saved in the checkpoint, so a resumed run continues
exactly.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dgl
import numpy as np
import torch
import torch.nn.functional as TF

from gcc_sgcl.augment.byov import Source, ViewGenerator, generate_views
from gcc_sgcl.config import BYOVConfig, Config, CuCoConfig
from gcc_sgcl.contrastive.curriculum import curriculum_log_weights, draw_ranks, pool_size
from gcc_sgcl.registry import Registry
from gcc_sgcl.sampling.keys import KeyedRandom


def step_random(seed: int, step: int, name: str) -> KeyedRandom:
    """One row of random numbers for ``name`` at ``step`` of a run seeded ``seed``.

    >>> a, b = step_random(0, 5, "cuco"), step_random(0, 6, "cuco")
    >>> bool(a.uniform()[0] != b.uniform()[0]), bool(a.uniform()[0] == step_random(0, 5, "cuco").uniform()[0])
    (True, True)
    """
    return KeyedRandom.for_items(seed, np.array([step])).child(name)


def torch_generator(rng: KeyedRandom) -> torch.Generator:
    """A torch ``Generator`` seeded from the first row of ``rng``."""
    return torch.Generator().manual_seed(int(rng.keys[0] >> np.uint64(1)))


class StepHook:
    """What a family adds to the contrastive step; this base adds nothing (module docstring)."""

    single_process = False
    """True when the hook cannot be split over torchrun's processes (its generators train on the whole batch)."""

    def views(self, graph_q: dgl.DGLGraph, graph_k: dgl.DGLGraph, step: int) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
        """The views the encoder reads at ``step``, from the batch's query and key views."""
        return graph_q, graph_k

    def logit_bias(self, logits: torch.Tensor, target: torch.Tensor, step: int) -> torch.Tensor | None:
        """Added to ``logits`` (positive of row ``i`` at column ``target[i]``) before InfoNCE; None: nothing."""
        return None

    def update(self, logits: torch.Tensor, target: torch.Tensor, step: int) -> dict[str, float]:
        """After the encoder's update, with the step's detached logits; returns scalars to log."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


STEP_HOOKS: Registry[Callable[[Config], StepHook]] = Registry("step hook")
"""Augmentation family -> factory of its :class:`StepHook` from the run's configuration."""


def step_hook(cfg: Config) -> StepHook | None:
    """The hook of ``cfg``'s family, or None when the family only makes views (GCC, SGCL, most baselines)."""
    make = STEP_HOOKS.get(cfg.family)
    return None if make is None else make(cfg)


@STEP_HOOKS.register(CuCoConfig.FAMILY)
class CurriculumNegatives(StepHook):
    """CuCo's curriculum (:mod:`gcc_sgcl.contrastive.curriculum`): at each step ``negatives`` ranks drawn from the
    easiest ``((t + 1) / T)^pacing_power`` of each query's negatives."""

    def __init__(self, cfg: Config):
        a: CuCoConfig = cfg.augment
        self.seed, self.total = cfg.train.seed, max(1, cfg.train.steps)
        self.power, self.count = a.pacing_power, a.negatives
        self.pool = 0

    def logit_bias(self, logits: torch.Tensor, target: torch.Tensor, step: int) -> torch.Tensor:
        self.pool = pool_size(step, self.total, self.power, logits.shape[1] - 1)
        ranks = draw_ranks(self.pool, self.count, step_random(self.seed, step, "cuco").generator(0))
        return curriculum_log_weights(logits, target, self.pool, ranks)

    def update(self, logits: torch.Tensor, target: torch.Tensor, step: int) -> dict[str, float]:
        return {"cuco_pool": float(self.pool)}


@STEP_HOOKS.register(BYOVConfig.FAMILY)
class LearnedViews(StepHook):
    """BYOV's two generators (:mod:`gcc_sgcl.augment.byov`): they make the step's views from its RWR views and are
    trained after the encoder's update by InfoMin."""

    single_process = True

    def __init__(self, cfg: Config):
        a: BYOVConfig = cfg.augment
        self.cfg, self.settings = cfg, a
        with torch.random.fork_rng():  # the encoder's and every later draw of the global generator unchanged
            torch.manual_seed(cfg.train.seed)
            self.generators = torch.nn.ModuleList(
                ViewGenerator(cfg.sampling.positional_embedding_size, a.hidden, a.layers) for _ in range(2))
        self.optimizer = torch.optim.Adam(self.generators.parameters(), lr=a.lr)
        self.sources: tuple[Source, Source] | None = None

    def views(self, graph_q: dgl.DGLGraph, graph_k: dgl.DGLGraph, step: int) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
        a, seed = self.settings, self.cfg.train.seed
        self.sources = (Source.of(graph_q.cpu()), Source.of(graph_k.cpu()))
        rows = np.arange(len(self.sources[0].num_nodes))
        out = []
        self.generators.train()  # BYOV generates with the generators as they train (batch statistics)
        for side, (generator, source) in enumerate(zip(self.generators, self.sources)):
            per_view = KeyedRandom.for_items(seed, step * len(rows) + rows).child("byov").child(side)
            noise = torch_generator(step_random(seed, step, f"byov-noise{side}"))
            views = generate_views(generator, source, per_view, noise, a.walks, a.walk_length, a.threshold,
                                   self.cfg.sampling.positional_embedding_size, self.cfg.sampling.pe_sign)
            out.append(views.to_dgl())
        return out[0], out[1]

    def update(self, logits: torch.Tensor, target: torch.Tensor, step: int) -> dict[str, float]:
        if self.sources is None:
            raise RuntimeError("LearnedViews.update before views: the generators have no source views")
        seed = self.cfg.train.seed
        pair_loss = TF.cross_entropy(logits.detach().cpu().double(), target.cpu(), reduction="none")
        reward = torch.where(pair_loss > pair_loss.mean(), 1.0, self.settings.low_reward).float()
        rows = np.arange(len(reward))
        self.optimizer.zero_grad(set_to_none=True)
        loss = sum(generator.loss(source, reward, torch_generator(step_random(seed, step, f"byov-fit{side}")),
                                  KeyedRandom.for_items(seed, step * len(rows) + rows).child("byov-fit").child(side),
                                  self.settings.fit_edges)
                   for side, (generator, source) in enumerate(zip(self.generators, self.sources)))
        loss.backward()
        self.optimizer.step()
        self.sources = None
        return {"byov_generator_loss": float(loss.item()), "byov_reward_high": float((reward == 1.0).float().mean())}

    def state_dict(self) -> dict[str, Any]:
        return {"generators": self.generators.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.generators.load_state_dict(state["generators"])
        self.optimizer.load_state_dict(state["optimizer"])
