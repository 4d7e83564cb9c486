#!/usr/bin/env bash
# Pre-train an encoder.   bash scripts/pretrain.sh <gpu> <method> [flags...]
#   <gpu>: GPU index, or -1 / cpu.   <method>: gcc, sgcl, ... (an unknown one lists the valid ones)
#   flags: any of `python -m gcc_sgcl.engine.pretrain --method <method> --help` (`bash scripts/pretrain.sh -1 <method>
#   --help`: the method's augmentation flags), e.g. --mode moco --steps 1000 --corpus ca-hepth
#   (--corpus takes registered names and graph file paths, e.g. --corpus ca-hepth my_graph.edgelist)
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
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.engine.pretrain
if [ $# -lt 2 ]; then
  echo "usage: [NPROC=N [NNODES=M NODE_RANK=i MASTER_ADDR=host MASTER_PORT=port]] \
bash scripts/pretrain.sh <gpu> <method> [flags...]" >&2
  exit 2
fi
gpu=$1 method=$2
shift 2
device=$(python -m gcc_sgcl.engine.device "$gpu")
if [ -z "${NPROC:-}" ] && [ -z "${NNODES:-}" ]; then
  exec python -m gcc_sgcl.engine.pretrain --method "$method" --device "$device" "$@"
fi
if [ "${NNODES:-1}" = 1 ] && [ -z "${MASTER_ADDR:-}" ]; then
  rendezvous=(--standalone)  # one node: torchrun picks a free port
else
  rendezvous=(--node_rank "${NODE_RANK:?multi-node runs need NODE_RANK}"
              --master_addr "${MASTER_ADDR:?multi-node runs need MASTER_ADDR}" --master_port "${MASTER_PORT:-29500}")
fi
exec torchrun --nproc_per_node "${NPROC:-1}" --nnodes "${NNODES:-1}" "${rendezvous[@]}" \
  -m gcc_sgcl.engine.pretrain --method "$method" --device "$device" "$@"
