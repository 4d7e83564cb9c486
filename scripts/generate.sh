#!/usr/bin/env bash
# Embed downstream datasets with a pre-trained encoder: writes <load_path>/<dataset>.npy
#   bash scripts/generate.sh <gpu> <load_path> <dataset...> [flags...]
# flags (after the datasets; --help lists them all): --with-structural joins each row to the training-free
#   structural vector of its node or graph (the results tables' '<method> ⊕ structural' rows: 8 more columns for
#   nodes, 24 for graphs; the record says so, and the task scripts read them as they are), --copies N (views
#   averaged per row; default per node GCC's 2 on a registered dataset, the tables' protocol, and 32 on a graph
#   file, the views study's choice; 2 per graph), --threads T (model threads), --seed S,
#   --visit-budget pretrain|gcc, --batch-size B, --num-workers W, --cache-views, --data-dir DIR.
# A dataset is a registered name or a graph file path (edge list, .mtx, .graphml, .gml, DGL binary, GIN text,
# TU directory); a path writes <load_path>/<stem>.npy and, for one graph, <stem>.ids.txt (row i's node id).
# Each .npy gets <stem>.provenance.json (checkpoint sha256 and step, dataset source and digest, views' settings),
# which the task scripts check; an encoder giving NaN/inf writes nothing. Ctrl-C leaves nothing half-written.
# NPROC=N bash scripts/generate.sh ...: N processes (torchrun, gloo on CPU) each embed a share of the rows, the same
# rows a single process gives, merged into one .npy (several machines: torchrun -m gcc_sgcl.engine.generate ...).
# GCC's README works as written: <load_path> may be the run folder or its checkpoint file (the embeddings land in
# its folder), and GCC's per-graph names of the similarity graphs (kdd icdm sigir cikm sigmod icde) embed their
# pair (kdd or icdm: kdd_icdm.npy, both graphs' rows), which `similarity_search/ours.sh <load_path> 64 kdd_icdm`
# reads; GCC's h-index-rand-1 / h-index-top-1 are this code's h-index-rand1 / h-index-top1.
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
dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
datasets=()  # GCC's per-graph similarity names → their pair, each pair once
while [ $# -gt 0 ] && [[ $1 != -* ]]; do
  case $1 in
    kdd|icdm) name=kdd_icdm ;; sigir|cikm) name=sigir_cikm ;; sigmod|icde) name=sigmod_icde ;; *) name=$1 ;;
  esac
  if [[ " ${datasets[*]} " != *" $name "* ]]; then
    datasets+=("$name")
    [ "$name" != "$1" ] && echo "[gcc_sgcl] $1 (GCC's name of a graph of $name): embedding the pair $name" >&2
  fi
  shift
done
set -- "${datasets[@]}" "$@"
echo "[gcc_sgcl] embedding ${datasets[*]} with $load_path (loading torch and DGL...)" >&2
device=$(python -m gcc_sgcl.engine.device "$gpu")
if [ -n "${NPROC:-}" ]; then  # the nodes split across NPROC processes on this machine, merged into one .npy
  exec torchrun --standalone --nproc_per_node "$NPROC" -m gcc_sgcl.engine.generate --device "$device" \
    --load-path "$load_path" --dataset "$@"
fi
exec python -m gcc_sgcl.engine.generate --device "$device" --load-path "$load_path" --dataset "$@"
