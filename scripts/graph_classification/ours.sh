#!/usr/bin/env bash
# Graph classification on saved embeddings: RBF SVC (GCC's C=100000 by default), accuracy; the paper's
# protocol of 10 repetitions of stratified 10-fold CV, each test fold scored on a bootstrap resample of itself.
#   bash scripts/graph_classification/ours.sh <load_path> <hidden> <dataset...> [flags...]
#   <hidden>: the embedding size of the encoder (--hidden-size at pre-training; 64 for the shipped encoders)
#   Rows of generate.sh --with-structural (joined to the structural vector) are read as they are: <hidden> is
#   then the encoder's size (or the rows' whole width).
# flags: --svc gcc|grid|c1 (default gcc: C=100000, gamma=1/n_features, as GCC), --folds N, --repeats R,
#        --no-bootstrap, --seed S, --data-dir DIR,
#        --labels FILE... (one 'graph_index label' file per collection given by path, overriding its labels;
#        labels all integers or all names, at least two classes)
# Prints a table and appends to <load_path>/results.csv (with the encoder's step, the views per row and any joined
# vector, from the embeddings' record); the data root comes from $GCC_SGCL_DATA.
# Embeddings of another graph than the dataset's (per <stem>.provenance.json) are refused,
# those of an unfinished run scored with a one-line warning.
source "$(dirname "$0")/../_env.sh"
source "$(dirname "$0")/../_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.tasks.graph_classification
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/graph_classification/ours.sh <load_path> <hidden> <dataset...> [flags...]" \
       "(<hidden>: the encoder's embedding size, 64 for the shipped encoders; --help: every flag)" >&2
  exit 2
fi
load_path=$1 hidden=$2
shift 2
dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
echo "[gcc_sgcl] graph classification of $load_path (loading...)" >&2
exec python -m gcc_sgcl.tasks.graph_classification --load-path "$load_path" --hidden "$hidden" --dataset "$@"
