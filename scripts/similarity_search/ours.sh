#!/usr/bin/env bash
# Top-k similarity search on saved embeddings: HITS@20/40; <dataset>.npy holds graph_1 then graph_2 rows.
#   bash scripts/similarity_search/ours.sh <load_path> <hidden> <dataset...> [flags...]
#   <hidden>: the embedding size of the encoder (--hidden-size at pre-training; 64 for the shipped encoders)
#   Rows of generate.sh --with-structural (joined to the structural vector) are read as they are: <hidden> is
#   then the encoder's size (or the rows' whole width).
#   bash scripts/similarity_search/ours.sh <load_path> <hidden> <graph_1 path> <graph_2 path> --pairs FILE
# flags: --ks K..., --seed S, --data-dir DIR, --pairs FILE (lines 'id_1 id_2'; the graphs' own .npy files)
# Prints a table and appends to <load_path>/results.csv (with the encoder's step, the views per row and any joined
# vector, from the embeddings' record); the data root comes from $GCC_SGCL_DATA.
# Embeddings of another graph than the dataset's (per <stem>.provenance.json) are refused,
# those of an unfinished run scored with a one-line warning.
source "$(dirname "$0")/../_env.sh"
source "$(dirname "$0")/../_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.tasks.similarity_search
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/similarity_search/ours.sh <load_path> <hidden> <dataset...> [flags...]" \
       "(<hidden>: the encoder's embedding size, 64 for the shipped encoders; --help: every flag)" >&2
  exit 2
fi
load_path=$1 hidden=$2
shift 2
dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
echo "[gcc_sgcl] similarity search of $load_path (loading...)" >&2
exec python -m gcc_sgcl.tasks.similarity_search --load-path "$load_path" --hidden "$hidden" --dataset "$@"
