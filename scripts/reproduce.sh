#!/usr/bin/env bash
# Reproduce the comparison tables: pre-train, embed, evaluate, then regenerate the report from stored rows.
#   bash scripts/reproduce.sh                    # every stage of the recorded CPU reproduction, in order
#   bash scripts/reproduce.sh report             # only rebuild docs/results.md from docs/results/rows.jsonl.gz
#   bash scripts/reproduce.sh main report        # chosen stages (see the case list below)
#   bash scripts/reproduce.sh curve report       # the learning curve (gcc 3 seeds, sgcl 1; 0 ... 6000 steps x 256) that checks the table budget
#   PROFILE=smoke bash scripts/reproduce.sh      # the same sweep on the synthetic data in a few minutes (saved/smoke)
#   PLAN=1 bash scripts/reproduce.sh             # what each stage still has to do and how long (runs nothing)
#   UNTIL=23:10 bash scripts/reproduce.sh main moco  # start only the jobs whose estimates end by 23:10 (a session's
#                                                # end: saved/ is lost with it, so an encoder cut off is wasted)
#   SEEDS="3 4" bash scripts/reproduce.sh main   # stages main and finetune on these of their 8 seeds only (to
#                                                # interleave the other stages' seeds with the main ones)
#   STASH=1 bash scripts/reproduce.sh main k64   # before the machine goes: write the encoders that the stages
#                                                # still to run need (finished, or the whole state of an unfinished
#                                                # one) to saved/carry, replacing it, and commit it; the next
#                                                # machine's sweep uses or resumes them (saved/carry/*/* --reuse;
#                                                # a sweep running beside the stash skips the folders it replaced)
#                                                # Commit saved/folds with it: the fold predictions of an evaluation
#                                                # cut off part-way, which the next sweep resumes from
# Stages: curve (budget study), cgrid (SGCL's c, one seed), ship (the seed-0 gcc and chosen sgcl encoders,
# exported to saved/pretrained; main then copies them instead of training them again), main (gcc and the chosen sgcl, 8 seeds, with the
# "⊕ structural" rows), views (gcc and the chosen sgcl, 8 seeds, at 2, 8, 32 and 64 inference views on the node-level
# columns; rows in views.jsonl.gz beside the store), loo (the chosen sgcl without each stage in turn, 3 seeds), align
# (the pre-registered alignment check, docs/preregistration-alignment.md: sgcl-no-align at the chosen sgcl's c on
# seeds 3-7, beside loo's 0-2), k64 (sgcl at the paper's k = 64), random (the untrained encoder, 3 seeds, frozen and
# fine-tuned: supervised training from scratch), moco (8 seeds), long (gcc and the chosen sgcl at 4x and 2x the
# table's steps, 3 seeds, rows in long_budget.jsonl.gz beside the store),
# classical (training-free floors and the SGCL paper's task-specific baselines, docs/baselines.md; GCC's SVC on
# their features takes hours on COLLAB), ablation (the chosen sgcl
# with its crop / reorder swapped for the random analogue, as the appendix's ablation table), baselines (GraphCL, GRACE, MVGRL, GCA),
# competitors (the SGCL paper's CuCo, BYOV and InfoGCL as adapted in docs/baselines.md, 3 seeds), pairs (single stages and pairs on RDT-B; the
# similar / diverse filters at the chosen sgcl's c),
# finetune (GCC's recipe), runtime, report. Data root: $GCC_SGCL_DATA (default ../shared/data). Stored rows are
# skipped, finished runs reused, an interrupted run resumes from its checkpoint: re-running after a kill
# continues where it stopped. saved/ does not outlive a session on the project's machines, so the main stage
# fine-tunes each seed's encoders while they are on disk (stage finetune then finds those rows stored).
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}"
set -euo pipefail
export GCC_SGCL_DATA=${GCC_SGCL_DATA:-../shared/data}
stages=${*:-curve cgrid ship main views loo align k64 random moco long classical ablation baselines competitors pairs finetune runtime report}

if [ "${PROFILE:-paper-cpu}" = smoke ]; then
  CORPUS=(synthetic); NODE=(synthetic-roles); GRAPH=(synthetic-graphs); SIM=(synthetic-similarity)
  ABL=("${NODE[@]}" "${GRAPH[@]}"); HEAT=synthetic-graphs; BUDGET=(--steps 30 --batch-size 32 --repeats 2 --svc gcc)
  ROWS=saved/smoke/rows.jsonl; OUT=saved/smoke/results.md; RUNS=saved/smoke
  SEEDS8=(0 1); SEEDS3=(0 1); SEEDS2=(0); ALIGN_SEEDS=(1); C_GRID=(0.2 0.3); MOCO=(--batch-size 8 --moco-queue 64)
  FT=(--epochs 2 --max-folds 2 --view-copies 2); RT=(--batches 5); INTRO=(); SHIP=saved/smoke/pretrained; TAG=synthetic
  CARRY=saved/smoke/carry; FOLDS=saved/smoke/folds
  CURVE_STEPS=(0 10 30); CURVE_DATA=("${NODE[@]}" "${GRAPH[@]}"); CURVE_SEEDS=(0)
else
  CORPUS=(ca-grqc ca-hepth ca-hepph ca-condmat email-enron)
  NODE=(usa_airport h-index); GRAPH=(imdb-binary imdb-multi collab rdt-b rdt-5k); SIM=(kdd_icdm sigir_cikm sigmod_icde)
  ABL=(usa_airport h-index imdb-binary imdb-multi collab rdt-b rdt-5k); HEAT=rdt-b  # the appendix's ablation columns
  # The table budget: the last point of the learning curve (stage curve; docs/results.md gives the rule's
  # verdict), 10 repetitions of 10-fold CV and GCC's SVC as in the papers.
  BUDGET=(--steps 6000 --batch-size 256 --repeats 10 --svc gcc)
  ROWS=docs/results/rows.jsonl.gz; OUT=docs/results.md; RUNS=saved/repro
  SEEDS8=(${SEEDS:-0 1 2 3 4 5 6 7}); SEEDS3=(0 1 2); SEEDS2=(0 1)
  C_GRID=(0.2 0.25 0.3 0.35 0.4 0.45)
  ALIGN_SEEDS=(3 4 5 6 7)  # the pre-registered alignment check's new seeds (loo has 0-2)
  MOCO=(--batch-size 32 --moco-queue 16384)  # the papers' MoCo: batch 32, 16384 keys, as many steps as E2E
  FT=(); RT=(--batches 40)  # fine-tuning: GCC's recipe (FinetuneConfig's defaults: 30 epochs, batch 32, all folds)
  INTRO=(--intro docs/results/intro.md --protocol docs/results/protocol.md --status docs/results/status.md
         --readme README.md)  # the hand-written parts of the report; the README's headline block comes from the rows
  # Every encoder a sweep command trains is exported as it finishes, to $SHIP/<method>_<mode>_<TAG>_<steps>x<batch>_s<seed>
  # (saved/pretrained/README.md lists them); the shipped encoders are those runs: not trained again.
  SHIP=saved/pretrained; TAG=snap5
  CARRY=saved/carry  # encoders carried from an earlier machine (STASH=1), committed
  FOLDS=saved/folds  # fold predictions of evaluations still running (COLLAB's SVC takes hours), committed with it
  CURVE_STEPS=(0 100 300 1000 3000 6000); CURVE_DATA=(usa_airport h-index imdb-binary imdb-multi rdt-b)
  # The curve's seeds: the budget rule reads gcc's curve, whose seed-to-seed spread at 6000 steps is of the size of
  # the rule's threshold, so gcc runs 3 seeds (their 0- and 6000-step encoders are those of stages random and
  # main); sgcl's curve, shown beside it, runs seed 0 only.
  CURVE_SEEDS=(0 1 2)
fi
ALL=("${NODE[@]}" "${GRAPH[@]}" "${SIM[@]}")
# The longer budget: gcc and the chosen sgcl E2E at 4x and 2x the table's steps, 3 seeds, every frozen column, rows in
# a store of their own (the tables keep their one budget). Separate complete schedules, not one long run scored on
# the way: the learning rate warms up and decays over a run's own steps, so a 24000-step run at step 6000 is at its
# peak rate, not the table's recipe; each point here is the table's recipe at a larger budget. Denormal floats are
# flushed to zero in the model step (--flush-denormal: weights of channels without a gradient, which weight decay
# drives below 1.2e-38, made late steps 2.5x slower on this CPU, python -m gcc_sgcl.bench denormal); it changes
# bits, as --threads does.
LONG_STEPS=(24000 12000); LONG_ROWS=${ROWS%/*}/long_budget.jsonl${ROWS##*.jsonl}
[ "${PROFILE:-paper-cpu}" = smoke ] && LONG_STEPS=(60)
# The views study: inference views averaged per row (GCC: 2) on the node-level columns, rows in a store of their own.
VIEW_COPIES=(2 8 32 64); VIEW_DATA=("${NODE[@]}" "${SIM[@]}"); VIEW_ROWS=${ROWS%/*}/views.jsonl${ROWS##*.jsonl}
# The stages that run the sweep (curve, ..., finetune below); ship, runtime and report only export, time or report.
SWEEP_STAGES=(curve cgrid main views loo align random k64 moco long classical ablation baselines competitors pairs finetune)
if [ -n "${STASH:-}" ]; then
  # The carry is replaced by what the named stages need: a stash of no sweep stage would only delete it.
  [ -n "${PLAN:-}" ] && { echo "PLAN and STASH exclude each other" >&2; exit 2; }
  named=0; for stage in $stages; do [[ " ${SWEEP_STAGES[*]} " == *" $stage "* ]] && named=1; done
  [ $named = 1 ] || { echo "STASH: name the sweep stages still to run (their encoders are kept in $CARRY), got:" \
    "$stages" >&2; exit 2; }
  rm -rf "$CARRY.next"
fi
# Fine-tuned columns: the node datasets and the first two graph datasets, 4 of the paper's 6. Measured in the sweep
# (rows' eval_seconds, two folds side by side): H-index ≈ 20 min per encoder, IMDB-M ≈ 75 s. COLLAB and RDT-B are
# left out for their cost: a one-fold probe (2 vs 6 epochs) put them at ≈ 1.2× and ≈ 2.5× H-index's time per
# epoch, i.e. ≈ 25 and ≈ 50 min per encoder, ≈ 2.5 h more per seed pair.
FT_DATA=("${NODE[@]}" "${GRAPH[@]:0:2}")
# One sweep command at the table budget; later flags override earlier ones (MoCo's batch, the curve's steps).
# With PLAN set, each command prints what it still has to do (--plan) instead of doing it; with STASH, it writes
# the encoders that work needs to $CARRY.next (--stash), which replaces $CARRY at the end; with UNTIL, the
# commands skip the jobs that would not end by then (--until). The tables' rows time the studies' own stores too
# (--timings): the long stage's 4x schedule is estimated per step from the table budget's runs.
# Each command reuses the shipped encoders and what $CARRY holds when it starts: a STASH beside a running sweep
# replaces $CARRY, and the next stage's command must not name the folders it removed (an error at start).
run() { local reuse=(); shopt -s nullglob; reuse+=("$SHIP"/*/ "$CARRY"/*/*); shopt -u nullglob
  reuse=("${reuse[@]%/}")
  [ ${#reuse[@]} -eq 0 ] || reuse=(--reuse "${reuse[@]}")
  python -m gcc_sgcl.experiments "$1" --corpus "${CORPUS[@]}" --rows "$ROWS" --timings "$ROWS" --output-dir "$RUNS" \
  --fold-cache "$FOLDS" --ship "$SHIP" --ship-tag "$TAG" "${BUDGET[@]}" "${reuse[@]}" "${@:2}" ${UNTIL:+--until "$UNTIL"} ${PLAN:+--plan} \
  ${STASH:+--stash "$CARRY.next"}; }
# Stages that only export, time or report have nothing to plan or stash.
dry() { [ -n "${PLAN:-}${STASH:-}" ]; }
# The tables' sgcl row: plain sgcl (default c) or the c grid's choice (run stage cgrid first); a plan made before
# the grid is complete counts plain sgcl, which costs the same, and a stash then carries plain sgcl's encoders.
sgcl_method() {
  if dry; then
    python -m gcc_sgcl.experiments sgcl-method --rows "$ROWS" --grid "${C_GRID[@]}" 2>/dev/null || echo sgcl
  else
    python -m gcc_sgcl.experiments sgcl-method --rows "$ROWS" --grid "${C_GRID[@]}"
  fi
}
# Fine-tune on the fine-tuned columns with the profile's recipe: finetune <methods...> --seeds <seeds...> [flags].
finetune() { run finetune --datasets "${FT_DATA[@]}" "${FT[@]}" --methods "$@"; }
C_METHODS=(); for c in "${C_GRID[@]}"; do C_METHODS+=("sgcl[c=$c]"); done
# The chosen sgcl ($1) with one more bracketed setting ($2): sgcl[k=64], sgcl[c=0.4,crop=random].
# A variant of the chosen sgcl ($1): preset $2 with the settings of $1 its stages read, plus settings $3...
# (the package composes the name: sgcl[c=0.4] + crop=random → sgcl[c=0.4,crop=random]); variants: one per preset.
variant() { python -m gcc_sgcl.experiments method "$2" --like "$1" ${3:+--set "${@:3}"}; }
variants() { python -m gcc_sgcl.experiments method "${@:2}" --like "$1"; }

for stage in $stages; do
  echo "=== stage $stage ($(date +%T))"
  case $stage in
    curve)     for seed in "${CURVE_SEEDS[@]}"; do  # seed by seed: a sweep cut off leaves whole curves
                 methods=(gcc); [ "$seed" = 0 ] && methods+=("sgcl[c=0.3]")  # sgcl at the c of its time
                 for steps in "${CURVE_STEPS[@]}"; do
                   run run --methods "${methods[@]}" --seeds "$seed" --datasets "${CURVE_DATA[@]}" --steps "$steps"
                 done
               done ;;
    cgrid)     run run --methods "${C_METHODS[@]}" --seeds 0 --datasets "${ALL[@]}" ;;
    ship)      sgcl=$(sgcl_method) || exit 1
               dry && { echo "(plan: ship exports gcc and $sgcl seed 0 to $SHIP)"; continue; }
               run export --methods gcc --seeds 0
               run export --methods "$sgcl" --seeds 0 ;;
    main)      sgcl=$(sgcl_method) || exit 1; echo "sgcl row: $sgcl"
               for seed in "${SEEDS8[@]}"; do  # a seed's fine-tuning right after its frozen rows
                 run run --methods gcc "$sgcl" --seeds "$seed" --datasets "${ALL[@]}" --with-structural
                 finetune gcc "$sgcl" --seeds "$seed"  # while the seed's encoders are on disk
               done ;;
    views)     sgcl=$(sgcl_method) || exit 1  # seed by seed; a seed's first count trains (and ships) its encoders
               for seed in "${SEEDS8[@]}"; do for copies in "${VIEW_COPIES[@]}"; do
                 run run --methods gcc "$sgcl" --seeds "$seed" --datasets "${VIEW_DATA[@]}" --copies "$copies" \
                   --rows "$VIEW_ROWS"
               done; done ;;
    loo)       sgcl=$(sgcl_method) || exit 1
               names=$(variants "$sgcl" @loo) || exit 1  # sgcl-no-<stage> at the tables' c, one per stage of config.STAGES
               mapfile -t loo <<< "$names"
               run run --methods "${loo[@]}" --seeds "${SEEDS3[@]}" --datasets "${ALL[@]}" ;;
    align)     sgcl=$(sgcl_method) || exit 1  # pre-registered: docs/preregistration-alignment.md
               for seed in "${ALIGN_SEEDS[@]}"; do  # seed by seed: a sweep cut off leaves whole seeds
                 run run --methods "$(variant "$sgcl" sgcl-no-align)" --seeds "$seed" --datasets "${ALL[@]}"
               done ;;
    random)    run run --methods gcc --seeds "${SEEDS3[@]}" --datasets "${ALL[@]}" --steps 0  # untrained encoders,
               finetune gcc --seeds "${SEEDS3[@]}" --steps 0 ;;  # frozen and fine-tuned
    k64)       sgcl=$(sgcl_method) || exit 1
               run run --methods "$(variant "$sgcl" sgcl k=64)" --seeds 0 --datasets "${ALL[@]}" ;;
    moco)      sgcl=$(sgcl_method) || exit 1
               run run --methods gcc "$sgcl" --modes moco --seeds "${SEEDS8[@]}" --datasets "${ALL[@]}" \
                 "${MOCO[@]}" ;;
    long)      sgcl=$(sgcl_method) || exit 1  # 4x for every seed before 2x, pair by pair: a cut-off sweep
               for steps in "${LONG_STEPS[@]}"; do for seed in "${SEEDS3[@]}"; do  # leaves whole 4x pairs
                 run run --methods gcc "$sgcl" --seeds "$seed" --datasets "${ALL[@]}" --steps "$steps" --rows "$LONG_ROWS" \
                   --flush-denormal
               done; done ;;
    ablation)  sgcl=$(sgcl_method) || exit 1
               run run --methods "$(variant "$sgcl" sgcl crop=random)" "$(variant "$sgcl" sgcl permute=random)" \
                 --seeds "${SEEDS3[@]}" --datasets "${ABL[@]}" ;;
    baselines) run run --methods graphcl grace mvgrl gca --seeds "${SEEDS3[@]}" --datasets "${ALL[@]}" ;;
    competitors) for seed in "${SEEDS3[@]}"; do  # the SGCL paper's CuCo, BYOV, InfoGCL (docs/baselines.md), seed by seed
                   run run --methods cuco infogcl byov --seeds "$seed" --datasets "${ALL[@]}"
                 done ;;
    pairs)     sgcl=$(sgcl_method) || exit 1  # the similar / diverse filters at the sgcl row's c
               names=$(variants "$sgcl" @singles @pairs) || exit 1  # the heat-map's cells at the tables' c
               mapfile -t heat <<< "$names"
               run run --methods "${heat[@]}" --seeds "${SEEDS2[@]}" --datasets "$HEAT" ;;
    classical) run run --methods structural spectral prone graphwave wl-kernel graph2vec rolx panther struc2vec random --seeds 0 \
                 --datasets "${ALL[@]}" ;;
    finetune)  sgcl=$(sgcl_method) || exit 1
               finetune gcc "$sgcl" --seeds "${SEEDS8[@]}" ;;
    runtime)   dry && { echo "(plan: runtime measures ${RT[*]} per method in one run)"; continue; }
               sgcl=$(sgcl_method) || exit 1
               python -m gcc_sgcl.experiments runtime --methods gcc "$sgcl" "$(variant "$sgcl" sgcl crop=random)" \
                   "$(variant "$sgcl" sgcl permute=random)" graphcl grace mvgrl mvgrl-heat gca --corpus "${CORPUS[@]}" --rows "$ROWS" "${RT[@]}" ;;
    report)    dry && { echo "(plan: report rebuilds $OUT from $ROWS)"; continue; }
               # a fixed hash seed: scikit-posthocs stacks the CD diagram's bars in a set's order (byte-identical PNGs)
               PYTHONHASHSEED=0 python -m gcc_sgcl.experiments report --rows "$ROWS" --out "$OUT" --heatmap-dataset "$HEAT" "${INTRO[@]}" \
                 --c-grid "${C_GRID[@]}"
               if [ -f "$SHIP/README.md" ]; then python -m gcc_sgcl.experiments shipped --folder "$SHIP"; fi ;;
    *) echo "unknown stage $stage (${SWEEP_STAGES[*]} ship runtime report)" >&2
       exit 2 ;;
  esac
done
if [ -n "${STASH:-}" ]; then
  rm -rf "$CARRY"
  if [ -d "$CARRY.next" ]; then mv "$CARRY.next" "$CARRY"; fi
  echo "carried: $(find "$CARRY" -name checkpoint.pt 2>/dev/null | wc -l) encoders in $CARRY/, what these stages still need"
fi
