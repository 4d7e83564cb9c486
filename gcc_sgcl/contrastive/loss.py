"""InfoNCE for the two ways GCC draws negatives."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def info_nce(logits: torch.Tensor, positive_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of ``logits`` (already divided by τ) with the positive at ``positive_index`` per row.

    Returns ``(loss, prob)`` where ``prob`` is the mean softmax probability given to the positive.
    """
    loss = F.cross_entropy(logits, positive_index)
    with torch.no_grad():
        prob = logits.softmax(dim=1).gather(1, positive_index.unsqueeze(1)).mean()
    return loss, prob


def e2e_logits(
    q: torch.Tensor, k: torch.Tensor, temperature: float, positive_offset: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """E2E: every other key in the batch is a negative (K = batch − 1). Positive of row i is column
    ``positive_offset + i``: ``k`` may hold the keys of the whole global batch while ``q`` holds one
    process's slice of it starting at row ``positive_offset``."""
    if not 0 <= positive_offset <= k.shape[0] - q.shape[0]:
        raise ValueError(f"positive_offset {positive_offset} puts {q.shape[0]} positives outside {k.shape[0]} keys")
    logits = q @ k.t() / temperature
    return logits, torch.arange(positive_offset, positive_offset + q.shape[0], device=q.device)


def moco_logits(
    q: torch.Tensor, k: torch.Tensor, queue: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """MoCo: column 0 is the positive ``<q_i, k_i>``, the rest ``<q_i, queue_j>``."""
    pos = (q * k).sum(dim=1, keepdim=True)
    neg = q @ queue.t()
    logits = torch.cat([pos, neg], dim=1) / temperature
    return logits, torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
