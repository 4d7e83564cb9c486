#!/usr/bin/env bash
# Fine-tune a pre-trained encoder end to end (encoder + linear head) on downstream labels, stratified 10-fold CV:
#   bash scripts/finetune.sh <load_path> <gpu> <dataset...> [flags...]
# flags: --epochs N (30), --folds N (10), --max-folds M, --batch-size B, --lr LR, --warmup-epochs,
#        --rampdown-epochs, --seed S, --data-dir DIR, --no-progress
# Node datasets report micro-F1, graph datasets accuracy; prints a table line per dataset and appends it to
# <load_path>/results.csv (task *_finetuned). The data root comes from $GCC_SGCL_DATA.
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.tasks.finetune
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/finetune.sh <load_path> <gpu> <dataset...> [flags...]" >&2
  exit 2
fi
load_path=$1 gpu=$2
shift 2
dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
echo "[gcc_sgcl] fine-tuning $load_path on $* (loading torch and DGL...)" >&2
device=$(python -m gcc_sgcl.engine.device "$gpu")
exec python -m gcc_sgcl.tasks.finetune --device "$device" --load-path "$load_path" --dataset "$@"
