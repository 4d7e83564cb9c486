"""Multi-process / multi-node pre-training with ``torch.distributed`` (launched by ``torchrun``).

Rank ``r`` of ``W`` trains on rows ``r·B/W … (r+1)·B/W`` of every global mini-batch of ``B`` samples, so the
ranks together see exactly the single-process batches. The pieces that make ``W`` ranks equivalent to one
process with batch ``B``:

* :class:`GlobalBatchNorm`: batch statistics over the whole global batch (the GIN normalises node states,
  and per-rank statistics would change the model); ``torch.nn.SyncBatchNorm`` rejects CPU tensors, so gloo
  runs need this one, and nccl runs use it too so that one implementation is tested;
* :func:`all_gather_rows`: differentiable gather of the E2E keys (every rank scores its queries against all
  ``B`` keys; the backward sums every rank's gradient into the local rows) and of the MoCo keys to enqueue;
* DistributedDataParallel averages the gradients of the per-rank mean losses, which is the gradient of the
  mean over the global batch.

Dropout is the exception: each rank draws its masks from its own stream
(:func:`~gcc_sgcl.contrastive.builder.dropout_seed`), so with dropout on (GCC's 0.5) ``W`` ranks follow another random
path than one process, and a run resumed with another number of processes continues on other masks.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
# the differentiable collectives; torch 2.13 deprecates torch.distributed.nn.functional in their favour
import torch.distributed._functional_collectives as funcol
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from gcc_sgcl.engine.threads import available_cores

ENV_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


@dataclass(frozen=True)
class DistContext:
    """This process's place in an initialised process group and the device it trains on."""

    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        """Rank 0 writes checkpoints, TensorBoard events and progress bars."""
        return self.rank == 0


def launched_by_torchrun() -> bool:
    """Whether the torchrun variables ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` are set (all or none)."""
    present = [name for name in ENV_VARS if name in os.environ]
    if present and len(present) != len(ENV_VARS):
        missing = sorted(set(ENV_VARS) - set(present))
        raise RuntimeError(f"distributed environment is incomplete: {present} set but {missing} missing "
                           "(launch with torchrun, which sets all of them)")
    return bool(present)


def init_distributed(device: str | torch.device) -> DistContext:
    """Join the process group described by torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
    ``MASTER_ADDR``, ``MASTER_PORT``).

    ``device`` is the configured device; only its type matters: CUDA ranks train on ``cuda:<LOCAL_RANK>``
    with the nccl backend, CPU ranks on ``cpu`` with gloo.
    """
    if not launched_by_torchrun():
        raise RuntimeError(f"init_distributed needs the torchrun environment variables {ENV_VARS}")
    rank, world_size, local_rank = (int(os.environ[name]) for name in ENV_VARS)
    if torch.device(device).type == "cuda":
        dev = torch.device("cuda", local_rank)
        torch.cuda.set_device(dev)
        dist.init_process_group("nccl", rank=rank, world_size=world_size, device_id=dev)
    else:
        dev = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
    return DistContext(rank, world_size, local_rank, dev)


def cleanup_distributed() -> None:
    """Leave the process group (no-op when none was joined)."""
    if dist.is_initialized():
        dist.destroy_process_group()


def barrier() -> None:
    """Wait for every rank."""
    dist.barrier()


def rank_batches(first_step: int, steps: int, batch_size: int, rank: int = 0, world_size: int = 1) -> list[range]:
    """Dataset indices of ``rank``'s share of the global batches ``first_step … steps − 1``.

    Global batch ``s`` is ``s·B … (s+1)·B − 1``; rank ``r`` takes the ``r``-th of ``world_size`` equal
    consecutive slices, so the ranks' slices concatenated in rank order are the single-process batch.
    """
    if batch_size % world_size != 0:
        raise ValueError(f"--batch-size {batch_size} (the global batch) must be divisible by the number of "
                         f"processes {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} outside a world of {world_size} processes")
    local = batch_size // world_size
    return [range(s * batch_size + rank * local, s * batch_size + (rank + 1) * local) for s in range(first_step, steps)]


def all_gather_rows(x: torch.Tensor) -> torch.Tensor:
    """Every rank's ``x`` concatenated in rank order along dim 0 (equal shapes on all ranks).

    Differentiable: the gradient reaching the local rows is the sum of every rank's gradient for them.
    """
    return funcol.all_gather_single(x.contiguous(), 0, dist.group.WORLD)


def mean_over_ranks(x: torch.Tensor) -> torch.Tensor:
    """The element-wise mean of ``x`` over ranks (not differentiable; for logging)."""
    x = x.detach().clone()
    dist.all_reduce(x)
    return x / dist.get_world_size()


class GlobalBatchNorm(nn.BatchNorm1d):
    """``BatchNorm1d`` whose training statistics are over the rows of all ranks together.

    Two differentiable all-reduces per call (row sums with the count, then squared deviations); the
    running statistics are updated from the global mean and unbiased variance as ``BatchNorm1d`` does, so
    they stay identical on every rank. In eval mode it is a plain ``BatchNorm1d``.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return super().forward(x)
        self._check_input_dim(x)
        count = torch.full((1,), float(x.shape[0]), dtype=x.dtype, device=x.device)
        sums = funcol.all_reduce(torch.cat([x.sum(dim=0), count]), "sum", dist.group.WORLD)
        n = sums[-1]
        mean = sums[:-1] / n
        var = funcol.all_reduce(((x - mean) ** 2).sum(dim=0), "sum", dist.group.WORLD) / n
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
                self.running_mean.lerp_(mean, factor)
                self.running_var.lerp_(var * n / (n - 1), factor)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        return y * self.weight + self.bias if self.affine else y

    @classmethod
    def convert(cls, module: nn.Module) -> nn.Module:
        """``module`` with every ``BatchNorm1d`` replaced by a :class:`GlobalBatchNorm` sharing its parameters
        and buffers (so ``state_dict`` keys and values are unchanged)."""
        if isinstance(module, nn.BatchNorm1d) and not isinstance(module, cls):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats)
            for name, tensor in [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]:
                setattr(converted, name, tensor)
            converted.train(module.training)
            return converted
        for name, child in module.named_children():
            module.add_module(name, cls.convert(child))
        return module


def wrap_ddp(model: nn.Module, ctx: DistContext) -> DistributedDataParallel:
    """``model`` (already converted with :meth:`GlobalBatchNorm.convert`) in DistributedDataParallel.

    Buffers are not re-broadcast before each forward: the global batch norm keeps them identical on every rank.
    """
    device_ids = [ctx.device] if ctx.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids, forward_sync_buffers=False)


# ---- generate's share of the rows under torchrun (a gloo group that only gathers rows)

def embedding_share() -> tuple[int, int]:
    """``(rank, world)`` of this process: ``(0, 1)``, or under ``torchrun`` its rank among the processes, which
    joins a gloo process group (used only to gather the rows, whatever the model's device)."""
    if not launched_by_torchrun():
        return 0, 1
    if not dist.is_initialized():
        dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size()


def share_device(device: str, share: tuple[int, int]) -> str:
    """Under torchrun a CUDA ``device`` becomes ``cuda:<LOCAL_RANK>``, one GPU per process of a machine."""
    if share[1] > 1 and torch.device(device).type == "cuda":
        return f"cuda:{os.environ.get('LOCAL_RANK', 0)}"
    return device


def local_cores(share: tuple[int, int]) -> int:
    """The cores of this process's share of its machine: all it may use, divided among the torchrun processes of
    the machine (``LOCAL_WORLD_SIZE``)."""
    local = int(os.environ.get("LOCAL_WORLD_SIZE", share[1])) if share[1] > 1 else 1
    return max(1, available_cores() // local)


def merged_rows(emb: np.ndarray, share: tuple[int, int]) -> np.ndarray | None:
    """Every rank's rows, concatenated in rank order, on rank 0 (the shares are contiguous runs of rows); None on
    the other ranks. One process: ``emb`` itself."""
    rank, world = share
    if world == 1:
        return emb
    parts = [None] * world if rank == 0 else None
    dist.gather_object(emb, parts, dst=0)
    return np.concatenate(parts) if rank == 0 else None
