#!/usr/bin/env bash
# Bit-identity check for refactors: 6-step pre-training runs of one method per augmentation family (and MoCo) on
# ca-grqc with one thread, and a sha256 of each checkpoint's weights. Run it on a checkout before and after a
# change and diff the two outputs: every line must be equal (the weights depend on the machine, so compare runs
# of one machine).
#   bash scripts/bitcheck.sh [<source tree, default: this checkout>] [<out dir, default: a fresh temporary one>]
# Needs ca-grqc under the data root ($GCC_SGCL_DATA, else ./data).
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}"  # this header, without the other arguments
source "$(dirname "$0")/_env.sh"
tree=$(cd "${1:-$ROOT}" && pwd) out=${2:-$(mktemp -d)}
mkdir -p "$out"
export PYTHONPATH="$tree" OMP_NUM_THREADS=1
run() { (cd "$tree" && python -m gcc_sgcl.engine.pretrain --steps 6 --batch-size 16 --threads 1 --num-workers 0 \
  --corpus ca-grqc --output-dir "$out" "$@" >/dev/null 2>>"$out/err.log") || { echo "FAIL $*"; tail -3 "$out/err.log"; }; }
for m in "sgcl[c=0.25]" gcc graphcl grace mvgrl gca sgcl-no-align cuco byov infogcl; do run --method "$m"; done
run --method gcc --mode moco --nce-k 64
# weights_only: a checkpoint already in <out dir> is anyone's file, and is read as data, never run
python - "$out" <<'PY'
import hashlib, pathlib, sys, torch
for p in sorted(pathlib.Path(sys.argv[1]).glob("*/checkpoint.pt")):
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)["model"]
        digest = hashlib.sha256(b"".join(v.numpy().tobytes() for _, v in sorted(state.items()))).hexdigest()[:16]
    except Exception as error:
        print(f"FAIL {p}: not a checkpoint of tensors and plain values, refused unread ({type(error).__name__})")
        continue
    print(p.parent.name, digest)
PY
