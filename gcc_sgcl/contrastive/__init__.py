"""Contrastive objectives: InfoNCE, the MoCo queue and the momentum update."""
from gcc_sgcl.contrastive.loss import e2e_logits, info_nce, moco_logits
from gcc_sgcl.contrastive.queue import MomentumQueue, momentum_update

__all__ = ["e2e_logits", "info_nce", "moco_logits", "MomentumQueue", "momentum_update"]
