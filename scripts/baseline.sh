#!/usr/bin/env bash
# Training-free baselines (GCC's baseline script): embed each dataset with a classical method, then run the
# dataset's task on the embeddings (node_classification, graph_classification or similarity_search).
#   bash scripts/baseline.sh <hidden> <method> <dataset...> [flags...]
# Methods: structural, spectral, prone, graphwave, wl-kernel, graph2vec, rolx, panther, random (docs/baselines.md);
# node-level ones refuse graph datasets, graph-level ones (wl-kernel, graph2vec) node and similarity datasets.
# Datasets are registered names or graph file paths. Flags (from the first argument starting with '-') go to
# the task, e.g. --folds 2 --repeats 1 --labels my_labels.txt; --data-dir DIR also to the embedding step.
# Writes saved/classical/<folder>/<dataset>.npy (relative to the caller's cwd) and appends the scores to
# saved/classical/<folder>/results.csv, <folder> being <method>-<hidden> for the methods <hidden> sizes (prone,
# graphwave, graph2vec, panther, random) and <method> for the others (fixed or data-chosen sizes); each task is given
# the size actually written.
# Every flag goes to every task, and a task refuses a flag it does not take (e.g. --ks, similarity search's):
# give datasets of one kind per call when passing a task's own flags.
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.classical
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/baseline.sh <hidden> <method> <dataset...> [flags...] (methods: python -m gcc_sgcl.classical --help)" >&2
  exit 2
fi
hidden=$1 method=$2
shift 2
dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
datasets=()
while [ $# -gt 0 ] && [[ $1 != -* ]]; do datasets+=("$1"); shift; done
flags=("$@")
data_dir=()
for i in "${!flags[@]}"; do
  case ${flags[$i]} in
    --data-dir) data_dir=(--data-dir "${flags[$((i + 1))]:-}") ;;
    --data-dir=*) data_dir=("${flags[$i]}") ;;
  esac
done
folder=$(python - "$method" "$hidden" <<'PY'
import sys
from gcc_sgcl.classical import METHODS, method_folder
method, hidden = sys.argv[1:]
if method not in METHODS or not hidden.isdigit() or int(hidden) < 1:
    sys.exit(f"baseline.sh: need <hidden> a positive integer and <method> one of {', '.join(METHODS)}; "
             f"got {hidden!r} and {method!r}")
print(method_folder(method, int(hidden)))
PY
)
out="saved/classical/$folder"
for dataset in "${datasets[@]}"; do
  # the embedding CLI prints: <path> <columns> <kind> <seconds>, tab-separated
  line=$(python -m gcc_sgcl.classical --method "$method" --hidden "$hidden" --out-dir "$out" --dataset "$dataset" \
    "${data_dir[@]}")
  echo "$line"
  IFS=$'\t' read -r _ columns kind _ <<< "$line"
  case $kind in
    node) task=node_classification ;;
    graph) task=graph_classification ;;
    similarity) task=similarity_search ;;
    *) echo "baseline.sh: unexpected dataset kind '$kind' for $dataset" >&2; exit 1 ;;
  esac
  python -m gcc_sgcl.tasks.$task --load-path "$out" --hidden "$columns" --dataset "$dataset" "${flags[@]}"
done
