"""Every constant of the SGCL augmentation pipeline, in one dataclass."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

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

    def __post_init__(self) -> None:
        used = self.p_mask * self.use_mask + self.p_reorder * self.use_reorder
        if used > 1.0 + 1e-9:
            raise ValueError(f"p_mask + p_reorder must be <= 1 (they are exclusive), got {used}")

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
