"""MoCo's fixed-size key queue and momentum (EMA) key encoder update."""
from __future__ import annotations

import torch
from torch import nn


class MomentumQueue(nn.Module):
    """A FIFO of the ``size`` most recent keys; queue and pointer are buffers, so they live in ``state_dict``."""

    def __init__(self, dim: int, size: int, generator: torch.Generator | None = None) -> None:
        super().__init__()
        if size < 1:
            raise ValueError(f"queue size (nce_k) must be >= 1, got {size}")
        # GCC starts from uniform noise of the same scale as an embedding coordinate.
        stdv = 1.0 / (dim / 3) ** 0.5
        init = torch.rand(size, dim, generator=generator) * (2 * stdv) - stdv
        self.register_buffer("keys", init)
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    @property
    def size(self) -> int:
        """Number of keys the queue holds."""
        return self.keys.shape[0]

    @torch.no_grad()
    def enqueue(self, k: torch.Tensor) -> None:
        """Overwrite the oldest ``len(k)`` entries with ``k`` (wrapping around the end)."""
        n = k.shape[0]
        if n > self.size:
            raise ValueError(f"cannot enqueue {n} keys into a queue of size {self.size}")
        idx = (self.ptr + torch.arange(n, device=k.device)) % self.size
        self.keys[idx] = k.detach().to(self.keys.dtype)
        self.ptr.copy_((self.ptr + n) % self.size)


@torch.no_grad()
def momentum_update(key_model: nn.Module, query_model: nn.Module, momentum: float) -> None:
    """``key ← m·key + (1 − m)·query`` for every parameter (as GCC/MoCo; batch-norm statistics of the key
    encoder come from its own forward passes)."""
    for pk, pq in zip(key_model.parameters(), query_model.parameters()):
        pk.mul_(momentum).add_(pq.detach(), alpha=1.0 - momentum)
