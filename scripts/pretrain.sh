#!/usr/bin/env bash
# Pre-train an encoder.   bash scripts/pretrain.sh <gpu> <method> [flags...]
#   <gpu>: GPU index, or -1 / cpu.   <method>: gcc, sgcl, ... (an unknown one lists the valid ones)
#   flags: any of `python -m gcc_sgcl.engine.pretrain --help`, e.g. --mode moco --steps 1000 --corpus ca-hepth
source "$(dirname "$0")/_env.sh"
if [ $# -lt 2 ]; then
  echo "usage: bash scripts/pretrain.sh <gpu> <method> [flags...]" >&2
  exit 2
fi
gpu=$1 method=$2
shift 2
device=$(python -c "from gcc_sgcl.engine.device import resolve_device; print(resolve_device('$gpu'))")
exec python -m gcc_sgcl.engine.pretrain --method "$method" --device "$device" "$@"
