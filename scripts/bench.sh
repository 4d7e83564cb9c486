#!/usr/bin/env bash
# Performance benchmarks in one run: positional embeddings (ARPACK reference vs batched), sampler pairs/s per
# method and DataLoader workers, seconds per mini-batch gcc vs sgcl, peak memory pre-training on a 1 M-node graph,
# cost vs rw_hops, what each augmentation stage changes.
#   bash scripts/bench.sh [--only memory pe sampler e2e runtime scaling augment] [--corpus ca-hepth] [--nodes …]
source "$(dirname "$0")/_env.sh"
exec python -m gcc_sgcl.bench "$@"
