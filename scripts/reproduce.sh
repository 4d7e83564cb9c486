#!/usr/bin/env bash
# Reproduce the comparison tables: pre-train, embed, evaluate, then regenerate the report from stored rows.
#   bash scripts/reproduce.sh                    # every stage of the recorded CPU reproduction
#   bash scripts/reproduce.sh report             # only rebuild docs/results.md from docs/results/rows.jsonl
#   bash scripts/reproduce.sh main report        # chosen stages: curve main ablation classical finetune runtime pairs baselines moco report
#   bash scripts/reproduce.sh curve report       # the learning curve (gcc, sgcl; 0 ... 3000 steps x 256) that chooses the budget
#   PROFILE=smoke bash scripts/reproduce.sh      # the same sweep on the synthetic data in a few minutes (saved/smoke)
# Data root: $GCC_SGCL_DATA (default ../shared/data). Stored rows are skipped, finished runs reused, an
# interrupted run resumes from its checkpoint: re-running after a kill continues where it stopped.
source "$(dirname "$0")/_env.sh"
set -euo pipefail
export GCC_SGCL_DATA=${GCC_SGCL_DATA:-../shared/data}
stages=${*:-main ablation classical finetune runtime pairs baselines moco report}

if [ "${PROFILE:-paper-cpu}" = smoke ]; then
  CORPUS=(synthetic); NODE=(synthetic-roles); GRAPH=(synthetic-graphs); SIM=(synthetic-similarity)
  ABL=("${GRAPH[@]}"); HEAT=synthetic-graphs; BUDGET=(--steps 20 --batch-size 32 --repeats 2 --svc c1)
  ROWS=saved/smoke/rows.jsonl; OUT=saved/smoke/results.md; RUNS=saved/smoke
  SEEDS5=(0 1); SEEDS3=(0 1); FT=(--epochs 2 --max-folds 2); RT=(--batches 5); INTRO=()
  CURVE_STEPS=(0 10 30); CURVE=(--batch-size 32 --repeats 2 --svc gcc); CURVE_DATA=("${NODE[@]}" "${GRAPH[@]}")
else
  CORPUS=(ca-grqc ca-hepth ca-hepph ca-condmat email-enron)
  NODE=(usa_airport h-index); GRAPH=(imdb-binary imdb-multi collab rdt-b rdt-5k); SIM=(kdd_icdm sigir_cikm sigmod_icde)
  ABL=(imdb-binary imdb-multi rdt-b rdt-5k); HEAT=rdt-b
  BUDGET=(--steps 100 --batch-size 128 --repeats 3 --svc c1)
  ROWS=docs/results/rows.jsonl; OUT=docs/results.md; RUNS=saved/repro
  SEEDS5=(0 1 2 3 4); SEEDS3=(0 1 2); FT=(--epochs 10 --max-folds 3); RT=(--batches 40)
  INTRO=(--intro docs/results/intro.md)
  CURVE_STEPS=(0 100 300 1000 3000); CURVE=(--batch-size 256 --repeats 10 --svc gcc)
  CURVE_DATA=(usa_airport h-index imdb-binary imdb-multi rdt-b)
fi
# The MoCo queue is a value of this CPU profile, not the runner's default (the paper's 16384, as pretrain.sh's
# --nce-k): 100 steps of 128 keys would leave a 16384-key queue mostly empty; 4096 keys are 32 batches.
MOCO_QUEUE=4096
run() { python -m gcc_sgcl.experiments "$@" --corpus "${CORPUS[@]}" --rows "$ROWS" --output-dir "$RUNS" "${BUDGET[@]}" \
  --moco-queue "$MOCO_QUEUE"; }
SINGLES=(sgcl-crop sgcl-reorder sgcl-mask sgcl-align sgcl-similar sgcl-diverse)
PAIRS=()
stages_list=(crop reorder mask align similar diverse)
for i in "${!stages_list[@]}"; do for j in "${!stages_list[@]}"; do
  a=${stages_list[$i]} b=${stages_list[$j]}
  if [ "$i" -lt "$j" ] && [ "$a+$b" != "similar+diverse" ]; then PAIRS+=("sgcl-$a+$b"); fi
done; done

for stage in $stages; do
  echo "=== stage $stage ($(date +%T))"
  case $stage in
    curve)     for steps in "${CURVE_STEPS[@]}"; do
                 python -m gcc_sgcl.experiments run --methods gcc sgcl --modes e2e --seeds 0 --steps "$steps" \
                   "${CURVE[@]}" --datasets "${CURVE_DATA[@]}" --corpus "${CORPUS[@]}" --rows "$ROWS" --output-dir "$RUNS"
               done ;;
    main)      run run --methods gcc sgcl --modes e2e --seeds "${SEEDS5[@]}" --datasets "${NODE[@]}" "${GRAPH[@]}" "${SIM[@]}" ;;
    baselines) run run --methods graphcl grace mvgrl gca --modes e2e --seeds 0 --datasets "${NODE[@]}" "${GRAPH[@]}" "${SIM[@]}" ;;
    moco)      run run --methods gcc sgcl --modes moco --seeds "${SEEDS3[@]}" --datasets "${NODE[@]}" "${GRAPH[@]}" "${SIM[@]}" ;;
    ablation)  run run --methods sgcl-random-crop sgcl-random-permute --modes e2e --seeds "${SEEDS3[@]}" \
                   --datasets "${NODE[@]}" "${ABL[@]}" ;;
    pairs)     run run --methods "${SINGLES[@]}" "${PAIRS[@]}" --modes e2e --seeds 0 --datasets "$HEAT" ;;
    classical) run run --methods structural spectral prone graphwave --seeds 0 --datasets "${NODE[@]}" "${GRAPH[@]}" "${SIM[@]}" ;;
    finetune)  run finetune --methods gcc sgcl --modes e2e --seeds "${SEEDS3[@]}" --datasets "${NODE[0]}" "${GRAPH[0]}" "${FT[@]}" ;;
    runtime)   python -m gcc_sgcl.experiments runtime --methods gcc sgcl sgcl-random-crop sgcl-random-permute \
                   graphcl grace mvgrl gca --corpus "${CORPUS[@]}" --rows "$ROWS" "${RT[@]}" ;;
    report)    python -m gcc_sgcl.experiments report --rows "$ROWS" --out "$OUT" --heatmap-dataset "$HEAT" "${INTRO[@]}" ;;
    *) echo "unknown stage $stage (curve main ablation classical finetune runtime pairs baselines moco report)" >&2
       exit 2 ;;
  esac
done
