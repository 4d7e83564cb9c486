#!/usr/bin/env bash
# GCC's similarity_search/baseline.sh: a training-free embedding of each dataset, then similarity_search on it.
#   bash scripts/similarity_search/baseline.sh <hidden_size> <baseline> <dataset...> [task flags...]
# <baseline>: prone or graphwave (GCC's), or another training-free method (structural, spectral, rolx, panther,
#   wl-kernel, graph2vec, random: docs/baselines.md); the same as
#   `bash scripts/baseline.sh <hidden_size> <baseline> <dataset...>` (its --help: every method and flag).
source "$(dirname "$0")/../_help.sh"
show_help_if_asked "$0" "${1:-}"  # this header, without the other arguments
exec bash "$(dirname "$0")/../baseline.sh" "$@"
