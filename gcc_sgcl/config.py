"""The method's settings: the dataclass groups of pre-training, stored in every checkpoint.

This module holds the pre-training settings (:class:`SamplingConfig`, :class:`ModelConfig`, :class:`TrainConfig`,
the augmentation families of :data:`AUGMENT_FAMILIES`, :class:`Config` and :func:`migrate`) and the input settings
every tool shares (:class:`InputConfig`). Each is a :class:`~gcc_sgcl.settings.Settings` dataclass: every field
states its default, help and valid range (:func:`~gcc_sgcl.settings.setting`) and becomes a command-line flag
(:mod:`gcc_sgcl.settings`, the machinery). Each tool's own settings live beside the tool (e.g.
:class:`~gcc_sgcl.engine.generate.GenerateConfig`, :class:`~gcc_sgcl.tasks.settings.EvalConfig`,
:class:`~gcc_sgcl.experiments.settings.SweepConfig`).

A run's augmentation settings are its family's (:data:`AUGMENT_FAMILIES`: SGCL's stages or one baseline's), chosen
by the method's preset. The pre-training configuration is stored in each checkpoint, so ``generate`` needs only the
run folder; one stored in an older layout is read through :func:`migrate`. This module imports only
:mod:`gcc_sgcl.method` (a method's name, :class:`~gcc_sgcl.method.MethodSpec`) and :mod:`gcc_sgcl.settings` from
the package; the method presets (``gcc``, ``sgcl``, …) that fill the pre-training dataclasses, and pre-training's
command line, live in :mod:`gcc_sgcl.presets`.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from gcc_sgcl.method import MethodSpec
from gcc_sgcl.settings import NON_NEGATIVE, POSITIVE, PROBABILITY, SEED32, Range, Settings, at_least, default_of, setting

MODES = ("e2e", "moco")
NAME_MAX = 255  # bytes of a folder name on Linux and macOS file systems
PE_SIGNS = ("random", "canonical")
# Visit budget of a node's inference view, max(rw_hops, round(deg^power · e/(e−1) / restart_prob)), by name: the
# power of pre-training (GCC's LoadBalanceGraphDataset), or the one of GCC's generate.py (GraphDataset.__getitem__).
VISIT_BUDGETS: dict[str, float] = {"pretrain": 0.75, "gcc": 1.0}


def visit_budget_power(name: str, parameter: str = "visit_budget") -> float:
    """The power of visit budget ``name`` (:data:`VISIT_BUDGETS`); an unknown name is refused naming ``parameter``."""
    if name not in VISIT_BUDGETS:
        raise ValueError(f"{parameter} must be one of {', '.join(VISIT_BUDGETS)}, got {name!r}")
    return VISIT_BUDGETS[name]


STAGES = ("filter", "crop", "align", "mask", "reorder")

Box = tuple[float, float, float, float]
"""``(x_min, x_max, y_min, y_max)`` as rank percentiles in ``[0, 1]`` (``0.2`` means ``R_0.2``)."""

PAPER_CROP_TABLE: tuple[tuple[Box, float], ...] = (
    ((0.2, 0.8, 0.2, 0.8), 0.1),
    ((0.1, 0.9, 0.1, 0.9), 0.1),
    ((0.0, 0.8, 0.0, 0.8), 0.05),
    ((0.2, 1.0, 0.2, 1.0), 0.05),
)
"""The appendix's crops ``c_1..c_4`` as ``(box, probability)``; "no crop" takes the rest (``c_5 = 0.7``)."""


def parse_crop_entry(text: str) -> tuple[Box, float]:
    """``"x_min,x_max,y_min,y_max:p"`` → ``((x_min, x_max, y_min, y_max), p)`` (a ``--crop-table`` entry)."""
    try:
        box_text, p_text = text.split(":")
        box = tuple(float(v) for v in box_text.split(","))
        if len(box) != 4:
            raise ValueError
        return box, float(p_text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--crop-table entries look like 'x_min,x_max,y_min,y_max:p' (rank percentiles), got {text!r}"
        ) from None


@dataclass
class SamplingConfig(Settings):
    """RWR subgraph sampling and positional embedding (GCC's defaults)."""

    rw_hops: int = setting(256, "minimum node visits collected per RWR view (the degree rule may ask for more; GCC)",
                           valid=at_least(1))
    restart_prob: float = setting(0.8, "probability that a random walk with restart returns to its seed at each "
                                       "step (GCC)", valid=Range(0, 1, low_open=True, high_open=True))
    walk_length: int = setting(10, "steps per walk before a forced restart; at restart 0.8 walks are effectively "
                                   "untruncated (this code)", valid=at_least(1))
    positional_embedding_size: int = setting(32, "k: Laplacian eigenvectors used as the nodes' positional "
                                                 "embedding (GCC: 32; the SGCL paper also reports 64)",
                                             valid=at_least(1))
    pe_sign: str = setting("random", "eigenvector signs of the positional embedding: random = a +-1 per column "
                                     "and view, as GCC's ARPACK start; canonical = fixed signs", choices=PE_SIGNS)


READOUTS = ("sum", "set2set")


@dataclass
class ModelConfig(Settings):
    """GIN encoder (GCC's UnsupervisedGIN)."""

    hidden_size: int = setting(64, "width of the GIN layers and of the embedding (GCC)", valid=at_least(1))
    num_layers: int = setting(5, "GIN layers counting the input layer, as GCC (5 = input + 4 GINConv)",
                              valid=at_least(2))
    degree_embedding_size: int = setting(16, "width of the learned node-degree embedding (GCC)", valid=at_least(1))
    max_degree: int = setting(512, "degrees above this share one embedding row (GCC)", valid=at_least(1))
    dropout: float = setting(0.5, "dropout on each layer's readout (GCC)", valid=Range(0, 1, high_open=True))
    readout: str = setting("sum", "graph readout: sum = sum-pool every layer and add (GCC); set2set = Set2Set on "
                                  "the last layer", choices=READOUTS)
    apply_node_func: bool = setting(True, "batch norm + ReLU after each GIN layer's MLP (GCC's ApplyNodeFunc)")


# What a field missing from a saved config means: the behaviour before the field existed (a saved config
# always holds every field of its day), so checkpoints written earlier rebuild the encoder they trained.
SAVED_BEFORE_FIELD: dict[str, dict[str, Any]] = {
    "model": {"apply_node_func": False},
    "sampling": {"pe_sign": "canonical"},
}


# Training settings that say where and at what pace a run goes, not what it learns: two runs differing only in
# them train the same encoder (``threads`` and ``device`` may change float reductions, not the experiment).
RUN_PLACE_FIELDS = ("num_workers", "threads", "flush_denormal", "save_freq", "save_minutes", "log_freq", "data_dir",
                    "output_dir", "run_name", "device")


@dataclass
class TrainConfig(Settings):
    """Contrastive pre-training loop."""

    mode: str = setting("e2e", "e2e = negatives from the batch (end to end); moco = negatives from a queue of "
                               "keys of a momentum encoder (MoCo)", choices=MODES)
    batch_size: int = setting(0, "pairs per step; 0 = the mode's default (GCC: E2E 1024, MoCo 32)",
                              valid=NON_NEGATIVE)
    nce_k: int = setting(16384, "MoCo queue length in keys (GCC; E2E uses the batch: K = batch size - 1)",
                         valid=at_least(1))
    nce_t: float = setting(0.07, "InfoNCE temperature (GCC)", valid=POSITIVE)
    momentum: float = setting(0.999, "MoCo key-encoder momentum (GCC)", valid=PROBABILITY)
    steps: int = setting(75000, "optimiser steps; 0 = save the untrained encoder (GCC: 75000)", valid=NON_NEGATIVE)
    lr: float = setting(0.005, "peak Adam learning rate (GCC)", valid=POSITIVE)
    beta1: float = setting(0.9, "Adam beta1 (GCC)", valid=Range(0, 1, high_open=True))
    beta2: float = setting(0.999, "Adam beta2 (GCC)", valid=Range(0, 1, high_open=True))
    eps: float = setting(1e-8, "Adam epsilon (GCC)", valid=POSITIVE)
    weight_decay: float = setting(1e-5, "Adam weight decay (GCC)", valid=NON_NEGATIVE)
    warmup_frac: float = setting(0.1, "fraction of the steps with a linear learning-rate warm-up (GCC)",
                                 valid=PROBABILITY)
    decay_frac: float = setting(0.1, "fraction of the steps with a linear decay at the end (GCC)", valid=PROBABILITY)
    clip_norm: float = setting(1.0, "gradient-norm clipping threshold (GCC)", valid=POSITIVE)
    num_workers: int | None = setting(None, "DataLoader processes building views (default: the cores the model "
                                            "threads leave; 0 = in the main process, between steps); results do not "
                                            "depend on it", valid=NON_NEGATIVE)
    threads: int = setting(0, "torch threads of the model step (0 = half the CPU cores); float reductions, hence "
                              "the bits of the result, depend on it", valid=NON_NEGATIVE)
    flush_denormal: bool = setting(False, "flush denormal floats (below 1.2e-38) to zero in the model step on the "
                                          "CPU: weights of channels that no longer get a gradient, which weight decay "
                                          "drives towards 0, make later steps about 2.5x slower; like --threads, it "
                                          "changes the bits of the result, not the experiment (it applies to the "
                                          "thread running the step, every op at --threads 1)")
    seed: int = setting(0, "seed of the weights, walks and augmentations", valid=SEED32)
    save_freq: int = setting(1000, "write the checkpoint every N steps (and at the end)", valid=at_least(1))
    save_minutes: float = setting(10.0, "also write the checkpoint once this many minutes of wall time passed since "
                                        "the last one, so a kill loses minutes, not hours (0 = by step only)",
                                  valid=at_least(0))
    log_freq: int = setting(10, "write TensorBoard scalars every N steps", valid=at_least(1))
    corpus: list[str] = setting(["synthetic"], "pre-training graphs: registered names (e.g. ca-grqc ca-hepth "
                                               "ca-hepph ca-condmat email-enron, GCC's SNAP graphs) or graph files")
    data_dir: str = setting("", "data root ('' = $GCC_SGCL_DATA, else ./data)")
    output_dir: str = setting("saved", "where the run folder is made")
    run_name: str = setting("", "run folder name ('' = <method>_<mode>_<corpus>_s<seed>)")
    device: str = setting("cpu", "torch device of the model step (the scripts map <gpu> to it)")

    def effective_batch_size(self) -> int:
        """The batch size actually used (mode default when ``batch_size`` is 0)."""
        if self.batch_size > 0:
            return self.batch_size
        return 1024 if self.mode == "e2e" else 32

    def check_together(self) -> None:
        if self.warmup_frac + self.decay_frac > 1.0:
            raise ValueError(f"--warmup-frac + --decay-frac must be <= 1, got {self.warmup_frac} + {self.decay_frac}")
        if self.mode == "moco" and self.nce_k % self.effective_batch_size() != 0:
            raise ValueError(
                f"MoCo needs --nce-k ({self.nce_k}) to be a multiple of the batch size ({self.effective_batch_size()})"
            )
        if self.mode == "e2e" and self.effective_batch_size() < 2:
            raise ValueError("E2E needs --batch-size >= 2 (negatives come from the batch)")
        name = self.run_name
        if name in (".", "..") or "\0" in name or any(sep and sep in name for sep in (os.sep, os.altsep, "/")):
            raise ValueError(f"--run-name must be one folder name inside --output-dir (no '/', no '.' or '..'), "
                             f"got {name[:200]!r}")
        if len(name.encode()) > NAME_MAX:
            raise ValueError(f"--run-name is {len(name.encode())} bytes long; a folder name holds at most {NAME_MAX} "
                             f"(got {name[:40]!r}...)")


@dataclass
class AugmentConfig(Settings):
    """SGCL's augmentations, the settings of :func:`~gcc_sgcl.augment.pipeline.build_pair_pipeline` (appendix,
    "Augmentation details and sequences"); each stage has a ``use_*`` flag so single-augmentation presets are
    expressible, and GCC is this family with every stage off.

    From the paper: the crop table (``p_crop = 0.3``) and the grid for ``c`` (0.2 ... 0.45). *Not* stated
    in the paper, chosen here: ``p_filter``, ``t_max``, ``p_align``, ``p_mask``, ``p_reorder``, ``r_max``,
    ``max_masked`` (the appendix's ``M``), ``c`` (middle of the grid) and the crop ``basis`` (the paper's text
    reads as the normalised Laplacian of the embedding; its grid/path theorems hold for ``D - A``).

    The global embedding ``E_t`` (filter, align) must have as many columns as the positional embedding for
    ``Align``. The contrastive baselines' view generation replaces this family: :class:`GraphCLConfig`,
    :class:`GraceConfig`, :class:`MVGRLConfig`, :class:`GCAConfig`, :class:`CuCoConfig`, :class:`InfoGCLConfig`,
    :class:`BYOVConfig` (:data:`AUGMENT_FAMILIES`).
    """

    FAMILY = "sgcl"

    # similar / diverse filter of the candidate random-walk pairs (before views are built)
    use_filter: bool = setting(True, "SGCL stage: keep or redraw a pair by its views' spectral similarity")
    filter_mode: str = setting("similar", "similar = accept pairs with cos > 1 - c; diverse = cos < 1 - c (paper)")
    p_filter: float = setting(0.5, "probability that a pair goes through the filter (this code)", valid=PROBABILITY)
    c: float = setting(0.3, "SGCL's similar/diverse filter threshold c: a pair is similar when the cosine of its "
                            "views' summed global-embedding rows exceeds 1 - c; every preset with the filter trains at 0.4, the "
                            "c grid's choice on the tables' columns (the paper grid-searches 0.2 ... 0.45 and states "
                            "no choice; before the grid, the middle 0.3)", valid=PROBABILITY,
                       flags=("filter_threshold", "c"))
    t_max: int = setting(5, "redraws of a rejected pair before it is kept anyway (this code)", valid=at_least(1))
    # crop, each view independently; crop_table rows are (box, probability), "no crop" takes the rest
    use_crop: bool = setting(True, "SGCL stage: spectral crop of each view (keep a box of the eigen-grid)")
    crop_kind: str = setting("spectral", "spectral = the paper's crop; random = the random-crop control")
    crop_table: tuple[tuple[Box, float], ...] = setting(
        PAPER_CROP_TABLE, "crop boxes 'x_min,x_max,y_min,y_max:p' (rank percentiles) with their probabilities; "
                          "'no crop' takes the rest (paper's appendix: c_1 ... c_4)", parse=parse_crop_entry)
    crop_basis: str = setting("normalized", "eigenvectors spanning the crop grid: normalized = normalised "
                                            "Laplacian (the paper's text); combinatorial = D - A (its theorems)")
    recompute_pe: bool = setting(True, "recompute the positional embedding of a cropped view (this code)")
    # alignment to E_t, one draw for the pair
    use_align: bool = setting(True, "SGCL stage: local-global alignment of the pair to the global embedding E_t")
    p_align: float = setting(0.5, "probability that a pair is aligned (this code)", valid=PROBABILITY)
    # mask | reorder | nothing, each view independently (mask and reorder are mutually exclusive)
    use_mask: bool = setting(True, "SGCL stage: mask up to --max-masked eigenvectors of a view")
    p_mask: float = setting(0.25, "probability that a view is masked (this code; p_mask + p_reorder <= 1)",
                            valid=PROBABILITY)
    max_masked: int = setting(8, "most eigenvectors masked in one view (the appendix's M, value of this code)",
                              valid=at_least(1))
    use_reorder: bool = setting(True, "SGCL stage: frequency reorder of a view: its eigenvector columns in the order "
                                      "of a diffusion of order r (by their weight sum_{j<=r} (1 - lambda)^j), r <= "
                                      "r_max drawn per view (paper)")
    p_reorder: float = setting(0.25, "probability that a view is reordered (this code)", valid=PROBABILITY)
    r_max: int = setting(10, "largest diffusion order r of a reorder, r ~ U{1..r_max} per view (the paper's r <= "
                             "r_max; value of this code)", valid=at_least(1))
    permute_kind: str = setting("spectral", "spectral = the paper's reorder (by a diffusion of order r); random = the "
                                            "random-permute control (a uniformly random column order)")
    # global embedding E_t (see gcc_sgcl.augment.global_embedding)
    global_method: str = setting("netmf", "global embedding E_t of the corpus graph: netmf = NetMF matrix "
                                          "factorisation (this code: the paper names Node2vec, LINE and DeepWalk, "
                                          "whose implicit matrix NetMF factorises)")
    global_window: int = setting(1, "NetMF window size T (this code)", valid=at_least(1))

    def check_together(self) -> None:
        used = self.p_mask * self.use_mask + self.p_reorder * self.use_reorder
        if used > 1.0 + 1e-9:
            raise ValueError(f"--p-mask + --p-reorder must be <= 1 (they are exclusive), got {used}")

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


# The contrastive baselines' view generation, re-implemented in GCC's structure-only setting (appendix, "Position
# of our work": GCC's encoder and training loop, ``PE`` as node features), each family with its settings and their
# sources; views built by :data:`gcc_sgcl.augment.pipeline.BASELINES` under the family's name.

@dataclass
class GraphCLConfig(Settings):
    """GraphCL (You et al., 2020): one of node dropping / subgraph / edge perturbation / attribute masking per view,
    uniformly, all at ratio 0.2 -- Shen-Lab/GraphCL ``semisupervised_TU/pre-training/main.py`` (``--aug_ratio1/2
    0.2``) and ``tu_dataset.py`` (``random4``)."""

    FAMILY = "graphcl"
    FLAG_PREFIX = "graphcl_"

    ratio: float = setting(0.2, "ratio of each augmentation (GraphCL's --aug_ratio)", valid=PROBABILITY)


@dataclass
class GraceConfig(Settings):
    """GRACE (Zhu et al., 2020): edge removing 0.2 / 0.4 and feature masking 0.3 / 0.4 for the query / key view --
    CRIPAC-DIG/GRACE ``config.yaml``, Cora (the script's default dataset, DBLP, uses 0.1 / 0.4 and 0.1 / 0.0)."""

    FAMILY = "grace"
    FLAG_PREFIX = "grace_"

    drop_edge_q: float = setting(0.2, "edge-removal rate of the query view (GRACE, Cora)", valid=PROBABILITY)
    drop_edge_k: float = setting(0.4, "edge-removal rate of the key view (GRACE, Cora)", valid=PROBABILITY)
    drop_feature_q: float = setting(0.3, "feature-masking rate of the query view (GRACE, Cora)", valid=PROBABILITY)
    drop_feature_k: float = setting(0.4, "feature-masking rate of the key view (GRACE, Cora)", valid=PROBABILITY)


@dataclass
class MVGRLConfig(Settings):
    """MVGRL (Hassani & Khasahmadi, 2020): the key view is the PPR diffusion of the key's structural view,
    ``alpha = 0.2`` (kavehhassani/mvgrl ``utils.compute_ppr``); MVGRL feeds the dense diffusion to its own encoder,
    GCC's ignores edge weights, so it is sparsified: top-``k`` per row with ``k`` = the view's mean degree (``topk =
    0``) by default, or ``sparsify="threshold"`` at ``eps`` (1e-2; MVGRL thresholds Citeseer only, at the eps of
    1e-5 ... 1e-2 that matches the graph's density; not density-matched on these views)."""

    FAMILY = "mvgrl"
    FLAG_PREFIX = "mvgrl_"

    alpha: float = setting(0.2, "PPR (personalised PageRank) teleport probability of the diffusion view (MVGRL)",
                           valid=Range(0, 1, low_open=True))
    sparsify: str = setting("topk", "how the dense diffusion is sparsified: topk or threshold")
    topk: int = setting(0, "entries kept per row with topk (0 = the view's mean degree)", valid=NON_NEGATIVE)
    eps: float = setting(1e-2, "entries below this are dropped with threshold (MVGRL, Citeseer)",
                         valid=Range(0, 1, low_open=True))
    diffusion: str = setting("ppr", "diffusion of the key view: ppr (MVGRL's default) or heat, exp(t ((A + I) D^-1 - "
                                    "I)) (MVGRL's other diffusion, the SGCL paper's 'MVGRL heat')")
    t: float = setting(5.0, "time of the heat diffusion (MVGRL's compute_heat default)", valid=POSITIVE)


@dataclass
class GCAConfig(Settings):
    """GCA (Zhu et al., 2021): degree-centrality scheme, edge dropping 0.3 / 0.4, feature masking 0.1 / 0.0, cap
    ``p_tau = 0.7`` for both -- CRIPAC-DIG/GCA ``train.py`` ``default_param`` (``drop_scheme='degree'``;
    ``drop_edge_weighted(threshold=0.7)``, ``drop_feature_weighted_2``'s default threshold 0.7); the script's default
    run (``--param local:wikics.json``) overrides them with edge dropping 0.2 / 0.3 and feature masking 0.1 / 0.1."""

    FAMILY = "gca"
    FLAG_PREFIX = "gca_"

    drop_edge_q: float = setting(0.3, "edge-dropping rate of the query view (GCA)", valid=PROBABILITY)
    drop_edge_k: float = setting(0.4, "edge-dropping rate of the key view (GCA)", valid=PROBABILITY)
    drop_feature_q: float = setting(0.1, "feature-masking rate of the query view (GCA)", valid=PROBABILITY)
    drop_feature_k: float = setting(0.0, "feature-masking rate of the key view (GCA)", valid=PROBABILITY)
    p_tau: float = setting(0.7, "cap of a degree-weighted dropping probability (GCA)", valid=PROBABILITY)


@dataclass
class CuCoConfig(Settings):
    """CuCo (Chu et al., IJCAI 2021): a curriculum of negatives -- each query's negatives (the other keys of the batch,
    or MoCo's queue) sorted from easy to hard by their similarity to it, ``negatives`` of them drawn at step t of T
    from the easiest share ((t + 1) / T)^pacing_power -- and a key view with a tenth of its nodes dropped --
    BUPT-GAMMA/CuCo ``unsupervised_TU/cuco.py`` (``rank_negative_queue``, ``sample_negative_index`` with ``lamda =
    1/2``, ``negative_number = 16``) and ``aug.py`` (``--aug dnodes``: ``drop_nodes`` drops ``node_num / 10``)."""

    FAMILY = "cuco"
    FLAG_PREFIX = "cuco_"

    node_drop: float = setting(0.1, "share of the key view's nodes dropped, never its centre (CuCo's default "
                                    "augmentation dnodes drops a tenth)", valid=PROBABILITY)
    negatives: int = setting(16, "negatives drawn per query at each step from the curriculum's pool, with "
                                 "replacement (CuCo's negative_number)", valid=at_least(1))
    pacing_power: float = setting(0.5, "lambda of the pacing function: at step t of T the pool is the easiest "
                                        "((t + 1) / T)^lambda of the negatives (CuCo's root pacing 1/2; 1 = linear)",
                                  valid=POSITIVE)


@dataclass
class InfoGCLConfig(Settings):
    """InfoGCL (Xu et al., NeurIPS 2021): per positive pair, the two views InfoGCL's optimal-view rule picks
    (Corollary 1: least mutual information between the views, the task's information kept) among GraphCL's
    augmentations of each view (none, node dropping, subgraph, edge perturbation, attribute masking at GraphCL's ratio
    0.2; Shen-Lab/GraphCL ``--aug_ratio``): the shared information is measured by the Jaccard overlap of the two views'
    nodes and edges, and an augmentation keeps the task's information when the centre keeps its neighbours. The
    contrast is GCC's global-global one. InfoGCL's authors released no code."""

    FAMILY = "infogcl"
    FLAG_PREFIX = "infogcl_"

    ratio: float = setting(0.2, "ratio of each candidate augmentation (GraphCL's --aug_ratio, InfoGCL's candidates)",
                           valid=PROBABILITY)


@dataclass
class BYOVConfig(Settings):
    """BYOV (You et al., WSDM 2022): each view of a pair is generated from its RWR view by a learned graph generator
    (a VGAE: GCN encoder, MLP edge decoder): walks on the generator's transition matrix give the view's nodes and
    edges; after each encoder step the generators are trained by InfoMin, their VGAE loss weighted by a reward of 1
    for the pairs whose contrastive loss is above the batch mean, else 0.01 -- Shen-Lab/GraphCL_Automated
    ``semisupervised_TU_LP/pretrain`` (``res_gcn.py`` ``vgae``, ``tu_dataset.py`` ``generator_generate`` with
    ``n_walk = 16``, ``n_walkLen = 20``, ``experiment_generative.py``, ``main.py`` ``--lr 0.001``). The generators
    are 32 wide where BYOV's are 128 (``--hidden``: their dense decoder costs hidden^2 per pair of nodes) and fit a
    sample of each view's edges where BYOV's fit them all (``fit_edges``), for the time of a step."""

    FAMILY = "byov"
    FLAG_PREFIX = "byov_"

    walks: int = setting(16, "walks per generated view, the first from the view's centre (BYOV's n_walk; 4 on "
                             "COLLAB)", valid=at_least(1))
    walk_length: int = setting(20, "steps of each walk on the generator's transition matrix (BYOV's n_walkLen; 10 on "
                                   "COLLAB)", valid=at_least(1))
    hidden: int = setting(32, "width of the generators' encoder and decoder (BYOV: 128; smaller here, see the family's "
                              "docs)", valid=at_least(1))
    layers: int = setting(3, "GCN layers of each generator's encoder after its feature layer (BYOV's "
                             "--n_layers_conv)", valid=at_least(1))
    lr: float = setting(0.001, "Adam learning rate of the generators (BYOV's --lr)", valid=POSITIVE)
    threshold: float = setting(0.1, "transition probabilities below this are dropped before a walk (BYOV's "
                                    "vgae.generate)", valid=Range(0, 1, high_open=True))
    low_reward: float = setting(0.01, "reward of a pair whose contrastive loss is not above the batch mean; 1 above "
                                      "it (BYOV's InfoMin reward)", valid=PROBABILITY)
    fit_edges: int = setting(64, "edges per view (and as many non-edges) the generators' VGAE loss averages over, "
                                 "drawn uniformly; 0 = every edge, as BYOV (this code: the RWR views of GCC's corpus "
                                 "have 840 edges on average)", valid=NON_NEGATIVE)


AugmentSettings = Union[AugmentConfig, GraphCLConfig, GraceConfig, MVGRLConfig, GCAConfig, CuCoConfig, InfoGCLConfig,
                        BYOVConfig]
AUGMENT_FAMILIES: dict[str, type] = {k.FAMILY: k for k in typing.get_args(AugmentSettings)}
"""Augmentation family → its settings class; a method's preset chooses the family (``gcc`` and ``sgcl*``: ``sgcl``)."""

GROUPS = {"sampling": SamplingConfig, "model": ModelConfig, "train": TrainConfig}
"""The settings groups of every method; the ``augment`` group is the method's family's (:data:`AUGMENT_FAMILIES`)."""

CONFIG_KEYS = ("method", "family", *GROUPS, "augment")
"""The keys of a stored configuration (:meth:`Config.to_dict`)."""


def migrate(saved: dict[str, Any]) -> dict[str, Any]:
    """A stored configuration (:meth:`Config.to_dict`) in this code's layout: one written before the augmentation
    families (no ``family``; one flat ``augment`` group of SGCL's stages, a ``baseline`` name and every baseline's
    ``<family>_<field>`` settings) keeps the family it trained and that family's settings; one in this layout is
    returned as it is.

    >>> old = {"method": "mvgrl", "augment": {"baseline": "mvgrl", "use_crop": False, "mvgrl_alpha": 0.1,
    ...                                       "grace_drop_edge_q": 0.2}}
    >>> migrate(old)
    {'method': 'mvgrl', 'family': 'mvgrl', 'augment': {'alpha': 0.1}}
    >>> migrate({"method": "gcc", "augment": {"baseline": "", "use_crop": False, "mvgrl_alpha": 0.1}})["augment"]
    {'use_crop': False}
    """
    if "family" in saved:
        return saved
    flat = dict(saved.get("augment", {}))
    family = flat.pop("baseline", "") or AugmentConfig.FAMILY
    prefixes = {k.FLAG_PREFIX: k.FAMILY for k in AUGMENT_FAMILIES.values() if k.FLAG_PREFIX}
    stages = {f.name for f in dataclasses.fields(AugmentConfig)}
    # a name of no family stays, for Config.from_dict to refuse as unknown
    owner = {name: next((fam for pre, fam in prefixes.items() if name.startswith(pre)),
                        AugmentConfig.FAMILY if name in stages else family) for name in flat}
    prefix = AUGMENT_FAMILIES[family].FLAG_PREFIX if family in AUGMENT_FAMILIES else ""
    augment = {name.removeprefix(prefix): value for name, value in flat.items() if owner[name] == family}
    rest = {key: value for key, value in saved.items() if key not in ("method", "augment")}
    return {"method": saved.get("method", "gcc"), "family": family, **rest, "augment": augment}


@dataclass
class Config:
    """A full run configuration: the groups of every method and the method's augmentation family's settings."""

    method: str = "gcc"
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    augment: AugmentSettings = field(default_factory=AugmentConfig)

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise ``ValueError`` naming the flag of the first setting of a group outside its range or contradicting
        another (:meth:`Settings.check`); run when made, and again by pre-training (a group may have been replaced)."""
        if type(self.augment) not in AUGMENT_FAMILIES.values():
            raise ValueError(f"augment must be the settings of a family ({', '.join(AUGMENT_FAMILIES)}), got "
                             f"{type(self.augment).__name__}")
        for group in (*GROUPS, "augment"):
            getattr(self, group).check()

    @property
    def family(self) -> str:
        """The augmentation family of the views (:data:`AUGMENT_FAMILIES`): ``sgcl`` (GCC too) or a baseline's."""
        return self.augment.FAMILY

    def run_dir_name(self) -> str:
        """``<method>_<mode>_<corpus>_s<seed>`` unless ``--run-name`` is given (a corpus given by path goes by
        its file name; a method's bracketed settings become ``-name=value`` parts: ``sgcl[c=0.35]`` →
        ``sgcl-c=0.35``)."""
        if self.train.run_name:
            return self.train.run_name
        corpus = "+".join(os.path.basename(os.path.normpath(c)) for c in self.train.corpus)
        return f"{MethodSpec.parse(self.method).slug}_{self.train.mode}_{corpus}_s{self.train.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form stored in checkpoints, config.json and result rows: the keys of :data:`CONFIG_KEYS`,
        ``augment`` holding only the family's settings."""
        d = dataclasses.asdict(self)
        return {"method": d.pop("method"), "family": self.family, **d}

    def learning_settings(self) -> dict[str, Any]:
        """:meth:`to_dict` without the training settings of :data:`RUN_PLACE_FIELDS`: what decides the encoder a
        run trains (two configurations with equal learning settings train the same encoder)."""
        d = self.to_dict()
        d["train"] = {k: v for k, v in d["train"].items() if k not in RUN_PLACE_FIELDS}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Config":
        """Inverse of :meth:`to_dict`, of a configuration in any layout stored so far (:func:`migrate`); unknown
        keys are rejected with their name, missing ones take the value of :data:`SAVED_BEFORE_FIELD` if listed
        there (the behaviour before they existed), else the default."""
        d = migrate(d)
        if d["family"] not in AUGMENT_FAMILIES:
            raise ValueError(f"unknown augmentation family {d['family']!r}; families: {', '.join(AUGMENT_FAMILIES)}")
        if "method" not in d:  # the family layout always stores its method
            raise ValueError("not a stored configuration: a 'family' but no 'method'")
        groups = {}
        for name, klass in {**GROUPS, "augment": AUGMENT_FAMILIES[d["family"]]}.items():
            known = {f.name for f in dataclasses.fields(klass)}
            extra = set(d.get(name, {})) - known
            if extra:
                raise ValueError(f"unknown {name} config keys: {sorted(extra)}")
            values = {**SAVED_BEFORE_FIELD.get(name, {}), **d.get(name, {})}
            if "crop_table" in values:
                values["crop_table"] = tuple((tuple(box), float(p)) for box, p in values["crop_table"])
            groups[name] = klass(**values)
        return cls(method=d["method"], **groups)


# ---- the input settings every tool shares (each tool's own settings live beside it) ----

@dataclass
class InputConfig(Settings):
    """What a command reads: a pre-training run folder, the datasets, the data root and the device. Shared by the
    tools of several layers (``data.download``, ``classical``, ``engine.generate``, the tasks, ``experiments``,
    ``bench``), so it lives here, their lowest common layer; each tool's own settings live beside the tool."""

    load_path: str = setting("", "run folder (or checkpoint file) of a pre-training run; the tasks read its "
                                 "<dataset>.npy embeddings")
    dataset: list[str] = setting([], "registered dataset names or graph file paths")
    data_dir: str | None = setting(None, "data root (default: $GCC_SGCL_DATA, else ./data)")
    device: str = setting(default_of(TrainConfig, "device"), "torch device (the scripts map <gpu> to it)")
