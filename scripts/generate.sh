#!/usr/bin/env bash
# Embed downstream datasets with a pre-trained encoder: writes <load_path>/<dataset>.npy
#   bash scripts/generate.sh <gpu> <load_path> <dataset...> [flags...]
# flags (after the datasets; --help lists them all): --with-structural joins each row to the training-free
#   structural vector of its node or graph (the results tables' '<method> ⊕ structural' rows: 8 more columns for
#   nodes, 24 for graphs; the record says so, and the task scripts read them as they are), --copies N (views
#   averaged per row; default 32 per node, 2 per graph; GCC's and the tables' protocol: --copies 2), --seed S,
#   --visit-budget pretrain|gcc, --batch-size B, --num-workers W, --cache-views, --data-dir DIR.
# A dataset is a registered name or a graph file path (edge list, .mtx, .graphml, .gml, DGL binary, GIN text,
# TU directory); a path writes <load_path>/<stem>.npy and, for one graph, <stem>.ids.txt (row i's node id).
# Each .npy gets <stem>.provenance.json (checkpoint sha256 and step, dataset source and digest, views' settings),
# which the task scripts check; an encoder giving NaN/inf writes nothing.
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.engine.generate
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/generate.sh <gpu> <load_path> <dataset...> [flags...] (e.g. --with-structural;" \
       "--help: every flag)" >&2
  exit 2
fi
gpu=$1 load_path=$2
shift 2
device=$(python -m gcc_sgcl.engine.device "$gpu")
exec python -m gcc_sgcl.engine.generate --device "$device" --load-path "$load_path" --dataset "$@"
