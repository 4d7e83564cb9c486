#!/usr/bin/env bash
# The GPU check in one command (<= 5 min on one H200 with 16 cores): install from a wheel folder with no network
# into a virtualenv that reuses the machine's torch, `pretrain.sh 0 sgcl` on the five SNAP graphs with DataLoader
# workers, the CUDA model step against the CPU on the same batches, run-to-run equality with deterministic
# algorithms, s/step split into loader wait and model step at batch 256 and 1024, streamed embedding with the model
# on CUDA against the CPU on the same views, and eigh time for n = 16…512 on CPU vs CUDA. Prints one table with the
# virtualenv's interpreter (when the install failed, the rows as they are and that nothing else ran); exit status 1
# when a step failed.
#
#   bash scripts/gpu_check.sh [--cpu-dry-run] [--wheels DIR] [--data DIR] [--workers N]
#   bash scripts/gpu_check.sh --fetch-wheels [DIR]
#
# --cpu-dry-run   no GPU: every step that does not need CUDA, with small step counts (the model-step comparison
#                 and run-to-run equality use the plain-torch path on the CPU, held to bit equality with DGL).
# --wheels DIR    the wheels PYTHON lacks (default build/wheels, ignored by git: carry it to the GPU machine).
# --fetch-wheels  (with network) download into DIR the wheels a Python 3.12 machine that has torch, numpy, scipy,
#                 scikit-learn, networkx, pandas, tensorboard, tqdm and psutil lacks (about 35 MiB).
# --data DIR      the data root holding pretrain/ (default ../shared/data, else shared/data in the repository).
# PYTHON          the interpreter whose torch is used (default python3); the virtualenv goes to a temporary folder.
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}"  # this header, without the other arguments
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dry=0 wheels="$ROOT/build/wheels" data="" workers=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-dry-run) dry=1 ;;
    --wheels) wheels="$2"; shift ;;
    --data) data="$2"; shift ;;
    --workers) workers="$2"; shift ;;
    --fetch-wheels)
      dir="${2:-$ROOT/build/wheels}"; mkdir -p "$dir"
      exec "${PYTHON:-python3}" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 -d "$dir" \
        dgl==2.1.0 torchdata==0.9.0 urllib3 requests charset-normalizer idna certifi matplotlib contourpy cycler \
        fonttools kiwisolver pillow pyparsing python-dateutil six threadpoolctl packaging pytest iniconfig pluggy \
        pygments setuptools wheel ;;
    *) echo "usage: bash scripts/gpu_check.sh [--cpu-dry-run] [--wheels DIR] [--data DIR] [--workers N] | --fetch-wheels [DIR]" >&2
       exit 2 ;;
  esac
  shift
done
if [ -z "$data" ]; then
  data="$ROOT/../shared/data"; [ -d "$data/pretrain" ] || data="$ROOT/shared/data"
fi
if [ "$dry" = 1 ]; then  # small counts: a CPU-only machine (2 cores here) finishes in a few minutes
  workers="${workers:-2}" steps=12 batch=64
  checks=(--dry-run --compare-batches 2 --split-steps 3 --eigh-count 16 --embed-nodes 1024 --embed-copies 2)
else
  workers="${workers:-12}" steps=40 batch=256 checks=(--device cuda:0 --compare-batches 3 --split-steps 10)
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")"
rows="$work/rows.tsv"
began=$(date +%s)
export GCC_SGCL_SYSTEM_TORCH=1 GCC_SGCL_WHEELS="$wheels" GCC_SGCL_VENV="$work/venv" GCC_SGCL_DATA="$data"
export GCC_SGCL_CACHE="${GCC_SGCL_CACHE:-$work/cache}"  # parsed graphs and E_t computed as on a fresh machine
export CUBLAS_WORKSPACE_CONFIG=:4096:8  # cuBLAS's condition for deterministic results (run-to-run step)
echo "[gpu_check] working in $work (logs there)" >&2

row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$rows"; }
seconds_since() { echo $(( $(date +%s) - $1 )); }
table() { python -m gcc_sgcl.bench.gpu_check --table "$rows"; }  # the virtualenv's python, once installed
# Without an installed interpreter (install failed) no Python may import torch: the rows as they are, by awk.
rows_as_they_are() {
  printf '| step | status | result | detail |\n|---|---|---|---|\n'
  awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$rows"
  printf '\nFAILED: install -- no interpreter with the package and its dependencies, so no other step ran\n'
}

# 1. install: only what PYTHON lacks, from the wheel folder, no index
t=$(date +%s)
if [ ! -d "$wheels" ]; then
  row install FAILED "no wheel folder $wheels" "make it with: bash scripts/gpu_check.sh --fetch-wheels"
elif (source "$ROOT/scripts/_env.sh") > "$work/install.log" 2>&1; then
  row install ok "$(seconds_since "$t") s" "GCC_SGCL_SYSTEM_TORCH=1, pip --no-index --find-links $wheels"
else
  row install FAILED "see $work/install.log" "$(tail -n 1 "$work/install.log")"
fi
if ! grep -q $'^install\tok' "$rows"; then
  rows_as_they_are
  exit 1
fi
source "$ROOT/scripts/_env.sh"
set +e
cd "$ROOT"
python - >> "$rows" 2> "$work/platform.log" <<'EOF' || row platform FAILED "see $work/platform.log"
import os, platform, sys
import gcc_sgcl  # first, as every entry point: its GraphBolt stand-in comes before dgl
import torch, dgl
from gcc_sgcl.models.flat import model_path
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
stub = "yes" if "Empty" in (getattr(sys.modules.get("dgl.graphbolt"), "__doc__", "") or "") else "no"
device = "cuda:0" if torch.cuda.is_available() else "cpu"
print(f"platform\tok\tpython {platform.python_version()} ({sys.executable}), torch {torch.__version__}, dgl {dgl.__version__} "
      f"(graphbolt stand-in: {stub})\tGPU: {gpu}; {os.cpu_count()} cores; encoder path on {device}: {model_path(device)}")
EOF

# 2. the headline command, a few dozen steps on the five SNAP graphs with workers
t=$(date +%s)
if bash scripts/pretrain.sh 0 sgcl --steps "$steps" --batch-size "$batch" --num-workers "$workers" \
    --corpus ca-grqc ca-hepth ca-hepph ca-condmat email-enron --output-dir "$work/runs" --run-name gpu-check \
    > "$work/pretrain.log" 2>&1; then
  python - "$work/runs/gpu-check" "$steps" "$batch" "$workers" "$(seconds_since "$t")" >> "$rows" <<'EOF'
import sys
from gcc_sgcl.engine.checkpoint import load_checkpoint
run, steps, batch, workers, wall = sys.argv[1:]
state = load_checkpoint(run)
ok = state["step"] == int(steps)
print(f"pretrain.sh 0 sgcl\t{'ok' if ok else 'FAILED'}\t{state['step']} steps on {state['config']['train']['device']}, "
      f"{state['train_seconds'] / state['step']:.3f} s/step (setup included)\tbatch {batch}, {workers} workers, five SNAP "
      f"graphs, wall {wall} s")
EOF
else
  row "pretrain.sh 0 sgcl" FAILED "see $work/pretrain.log" "$(tail -n 1 "$work/pretrain.log")"
fi

# 3-6. model step vs CPU, run-to-run, s/step split, eigh
if ! python -m gcc_sgcl.bench.gpu_check --rows "$rows" --workers "$workers" "${checks[@]}" > "$work/checks.log" 2>&1; then
  row "python checks" FAILED "see $work/checks.log" "$(tail -n 1 "$work/checks.log")"
fi

total=$(seconds_since "$began")
if [ "$dry" = 1 ]; then
  row total ok "$total s" "CPU-only dry run ($workers workers, small step counts); the GPU run's budget is 300 s"
elif [ "$total" -le 300 ]; then
  row total ok "$total s" "budget 300 s"
else
  row total FAILED "$total s" "over the 300 s budget"
fi
table
