"""Every constant of the augmentation pipelines (SGCL's and the re-implemented baselines'), in one dataclass."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gcc_sgcl.augment.base import check_probability
from gcc_sgcl.augment.crop import PAPER_CROP_TABLE
from gcc_sgcl.augment.functional import Box

STAGES = ("filter", "crop", "align", "mask", "reorder")


@dataclass
class AugmentConfig:
    """Settings of :func:`~gcc_sgcl.augment.pipeline.build_sgcl_pipeline` (appendix, "Augmentation details
    and sequences"); each stage has a ``use_*`` flag so single-augmentation presets are expressible.

    From the paper: the crop table (``p_crop = 0.3``) and the grid for ``c`` (0.2 ... 0.45). *Not* stated
    in the paper, chosen here: ``p_filter``, ``t_max``, ``p_align``, ``p_mask``, ``p_reorder``, ``r_max``,
    ``max_masked`` (the appendix's ``M``), ``c`` (middle of the grid) and the crop ``basis`` (the paper's text
    reads as the normalised Laplacian of the embedding; its grid/path theorems hold for ``D - A``).

    The global embedding ``E_t`` (filter, align) must have as many columns as the positional embedding for
    ``Align``.

    ``baseline`` replaces SGCL's sequence by a contrastive baseline's view generation, re-implemented in GCC's
    structure-only setting (appendix, "Position of our work": GCC's encoder and training loop, ``PE`` as node
    features); the SGCL stages must then be off. Defaults and their sources:

    * ``graphcl`` (You et al., 2020): one of node dropping / subgraph / edge perturbation / attribute masking
      per view, uniformly, all at ratio 0.2 -- Shen-Lab/GraphCL ``semisupervised_TU/pre-training/main.py``
      (``--aug_ratio1/2 0.2``) and ``tu_dataset.py`` (``random4``).
    * ``grace`` (Zhu et al., 2020): edge removing 0.2 / 0.4 and feature masking 0.3 / 0.4 for the query /
      key view -- CRIPAC-DIG/GRACE ``config.yaml``, Cora (the script's default dataset, DBLP, uses
      0.1 / 0.4 and 0.1 / 0.0).
    * ``mvgrl`` (Hassani & Khasahmadi, 2020): the key view is the PPR diffusion of the key's structural view,
      ``alpha = 0.2`` (kavehhassani/mvgrl ``utils.compute_ppr``); MVGRL feeds the dense diffusion to its
      own encoder, GCC's ignores edge weights, so it is sparsified: top-``k`` per row with ``k`` = the view's
      mean degree (``mvgrl_topk = 0``) by default, or ``mvgrl_sparsify="threshold"`` at ``mvgrl_eps``
      (MVGRL's Citeseer threshold, chosen there from 1e-5 ... 1e-2 to match the mean degree; 1e-2 here).
    * ``gca`` (Zhu et al., 2021): degree-centrality scheme, edge dropping 0.3 / 0.4, feature masking
      0.1 / 0.0, cap ``p_tau = 0.7`` for both -- CRIPAC-DIG/GCA ``train.py`` ``default_param``
      (``drop_scheme='degree'``; ``drop_edge_weighted(threshold=0.7)``, ``drop_feature_weighted_2``'s default
      threshold 0.7).
    """

    # similar / diverse filter of the candidate random-walk pairs (before views are built)
    use_filter: bool = True
    filter_mode: str = "similar"  # or "diverse"
    p_filter: float = 0.5
    c: float = 0.3
    t_max: int = 5
    # crop, each view independently; crop_table rows are (box, probability), "no crop" takes the rest
    use_crop: bool = True
    crop_kind: str = "spectral"  # or "random" (control)
    crop_table: tuple[tuple[Box, float], ...] = PAPER_CROP_TABLE
    crop_basis: str = "normalized"  # or "combinatorial"
    recompute_pe: bool = True
    # alignment to E_t, one draw for the pair
    use_align: bool = True
    p_align: float = 0.5
    # mask | reorder | nothing, each view independently (mask and reorder are mutually exclusive)
    use_mask: bool = True
    p_mask: float = 0.25
    max_masked: int = 8
    use_reorder: bool = True
    p_reorder: float = 0.25
    r_max: int = 10
    permute_kind: str = "spectral"  # or "random" (control)
    # global embedding E_t (see gcc_sgcl.augment.global_embedding)
    global_method: str = "netmf"
    global_window: int = 1
    # baseline view generation instead of SGCL's ("" = none); key of gcc_sgcl.augment.pipeline.BASELINES
    baseline: str = ""
    graphcl_ratio: float = 0.2
    grace_drop_edge_q: float = 0.2
    grace_drop_edge_k: float = 0.4
    grace_drop_feature_q: float = 0.3
    grace_drop_feature_k: float = 0.4
    mvgrl_alpha: float = 0.2
    mvgrl_sparsify: str = "topk"  # or "threshold"; key of gcc_sgcl.augment.pipeline.SPARSIFIERS
    mvgrl_topk: int = 0  # 0: the structural view's mean degree (rounded, at least 1)
    mvgrl_eps: float = 1e-2
    gca_drop_edge_q: float = 0.3
    gca_drop_edge_k: float = 0.4
    gca_drop_feature_q: float = 0.1
    gca_drop_feature_k: float = 0.0
    gca_p_tau: float = 0.7

    def __post_init__(self) -> None:
        used = self.p_mask * self.use_mask + self.p_reorder * self.use_reorder
        if used > 1.0 + 1e-9:
            raise ValueError(f"p_mask + p_reorder must be <= 1 (they are exclusive), got {used}")
        stages = [stage for stage in STAGES if getattr(self, f"use_{stage}")]
        if self.baseline and stages:
            on = ", ".join(f"use_{stage}" for stage in stages)
            raise ValueError(f"baseline {self.baseline!r} replaces the SGCL stages: use its preset or switch off {on}")
        for f in dataclasses.fields(self):
            if f.name.startswith(("graphcl_", "grace_", "gca_")):
                check_probability(f.name, getattr(self, f.name))
        if not 0.0 < self.mvgrl_alpha <= 1.0:
            raise ValueError(f"mvgrl_alpha must be in (0, 1], got {self.mvgrl_alpha}")
        if self.mvgrl_topk < 0:
            raise ValueError(f"mvgrl_topk must be >= 0 (0: the view's mean degree), got {self.mvgrl_topk}")
        if not 0.0 < self.mvgrl_eps <= 1.0:
            raise ValueError(f"mvgrl_eps must be in (0, 1], got {self.mvgrl_eps}")

    @property
    def p_crop(self) -> float:
        """Probability that a view is cropped (the appendix's ``c_1 + ... + c_4``)."""
        return sum(p for _, p in self.crop_table)

    @classmethod
    def only(cls, *stages: str, **overrides: Any) -> AugmentConfig:
        """Config with just ``stages`` (names from :data:`STAGES`) enabled.

        >>> cfg = AugmentConfig.only("crop", crop_kind="random")
        >>> cfg.use_crop, cfg.use_filter, cfg.crop_kind
        (True, False, 'random')
        """
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ValueError(f"stages must be among {STAGES}, got {sorted(unknown)}")
        flags = {f"use_{stage}": stage in stages for stage in STAGES}
        return dataclasses.replace(cls(), **{**flags, **overrides})
