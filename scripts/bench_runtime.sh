#!/usr/bin/env bash
# Seconds per mini-batch for gcc vs sgcl (and any other preset) on the same graphs, in one run.
#   bash scripts/bench_runtime.sh [--methods gcc sgcl] [--corpus ca-hepth] [--batch-size 16] [--batches 60]
source "$(dirname "$0")/_env.sh"
exec python -m gcc_sgcl.experiments.runtime "$@"
