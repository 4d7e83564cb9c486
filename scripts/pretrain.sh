#!/usr/bin/env bash
# Pre-train an encoder.   bash scripts/pretrain.sh <gpu> [<method>] [flags...]
#   <gpu>: GPU index, or -1 / cpu (a GPU index without CUDA runs on the CPU, and the run says so).
#   <method>: gcc (the default, as GCC's own pretrain.sh), sgcl (SGCL at c = 0.4: the tables' row and the shipped
#   encoders), sgcl-crop, ... (an unknown one lists the valid ones; `bash scripts/pretrain.sh -1 sgcl --help`: every
#   flag, with the method's values as defaults).
#   flags: e.g. --mode moco --steps 1000 --corpus ca-hepth (--corpus takes registered names and graph file paths).
#   Without --corpus the run trains the small built-in `synthetic` corpus; without --steps / --batch-size, the
#   papers' full budget (75 000 steps x 1 024 pairs, days on a CPU). The tables' encoders:
#     bash scripts/pretrain.sh -1 sgcl --corpus ca-grqc ca-hepth ca-hepph ca-condmat email-enron --steps 6000 --batch-size 256
#   Before its first step the run prints what it trains, on what, for how long and where; after a few steps, its
#   pace. It checkpoints every --save-freq steps and every --save-minutes (default 10). Ctrl-C (or SIGTERM) writes
#   the checkpoint and stops; the same command with --resume continues exactly.
# GCC's README commands work as written: `bash scripts/pretrain.sh <gpu> --batch-size 256` (E2E),
#   `bash scripts/pretrain.sh <gpu> --moco --nce-k 16384` (MoCo); GCC's flag spellings (--moco, --num-layer,
#   --learning_rate, --epochs, --dataset, --model-path, --resume <path>, ...) are listed at the end of --help.
# Several processes (torch.distributed, launched with torchrun): set NPROC, the processes per node.
#   NPROC=2 bash scripts/pretrain.sh -1 gcc --batch-size 1024 ...   2 CPU processes (gloo), 512 samples each
#   NPROC=4 bash scripts/pretrain.sh 0 gcc ...                      4 GPUs (nccl), rank r on cuda:<local rank>
#   --batch-size stays the global batch (divisible by the number of processes); the run matches a single
#   process with that batch. With a GPU, <gpu> only selects CUDA (choose GPUs with CUDA_VISIBLE_DEVICES).
#   Multi-node: on every node set NNODES (node count), NODE_RANK (0 … NNODES-1), MASTER_ADDR (node 0's
#   address) and MASTER_PORT (a free port on it, default 29500), and give --output-dir a shared file system
#   (rank 0 writes the checkpoint; every rank reads it on --resume).
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
case ${2:-} in -h|--help) set -- "$2" ;; esac  # `pretrain.sh -1 --help`: the script's help too
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.engine.pretrain
if [ $# -lt 1 ]; then
  echo "usage: [NPROC=N [NNODES=M NODE_RANK=i MASTER_ADDR=host MASTER_PORT=port]] \
bash scripts/pretrain.sh <gpu> [<method>] [flags...]   (bash scripts/pretrain.sh --help)" >&2
  exit 2
fi
# the command as typed, for the literal resume hint a stopped run prints
GCC_SGCL_COMMAND="$(printf '%q ' ${NPROC:+NPROC=$NPROC} ${NNODES:+NNODES=$NNODES} bash "$0" "$@")"
export GCC_SGCL_COMMAND="${GCC_SGCL_COMMAND% }"
gpu=$1
shift
method=gcc  # GCC's interface: pretrain.sh <gpu> [flags]
if [ $# -gt 0 ] && [[ $1 != -* ]]; then method=$1; shift; fi
for arg in "$@"; do case $arg in -h|--help) GCC_SGCL_PROG="bash $0 $gpu $method" exec python -m gcc_sgcl.engine.pretrain \
  --method "$method" --help ;; esac; done
echo "[gcc_sgcl] pre-training $method (loading torch and DGL; the run's summary follows)" >&2
if [ -z "${NPROC:-}" ] && [ -z "${NNODES:-}" ]; then
  exec python -m gcc_sgcl.engine.pretrain --method "$method" --gpu "$gpu" "$@"
fi
if [ "${NNODES:-1}" = 1 ] && [ -z "${MASTER_ADDR:-}" ]; then
  rendezvous=(--standalone)  # one node: torchrun picks a free port
else
  rendezvous=(--node_rank "${NODE_RANK:?multi-node runs need NODE_RANK}"
              --master_addr "${MASTER_ADDR:?multi-node runs need MASTER_ADDR}" --master_port "${MASTER_PORT:-29500}")
fi
exec torchrun --nproc_per_node "${NPROC:-1}" --nnodes "${NNODES:-1}" "${rendezvous[@]}" \
  -m gcc_sgcl.engine.pretrain --method "$method" --gpu "$gpu" "$@"
