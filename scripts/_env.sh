# Sourced by every script: creates the virtualenv on first use (offline-safe: only the package registries) and
# activates it. Re-installs when setup.py changes. Paths given to scripts are relative to the caller's cwd.
#
# PYTHON chooses the interpreter the virtualenv is created with (default python3); it must be CPython 3.10, 3.11
# or 3.12: dgl publishes Linux wheels up to 3.11 for 1.1.3 (used there) and up to 3.12 for 2.1.0 (used on 3.12),
# none for 3.13, and the package uses 3.10 syntax.
#
# Modes (environment variables; the default, none set, installs torch==2.13.0 into a fresh .venv: the CPU build where
# pip finds one on disk or on an index it is given, e.g. PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu;
# from PyPI alone, the CUDA build of several GB):
#   GCC_SGCL_SYSTEM_TORCH=1   reuse the torch of PYTHON's site-packages (e.g. a CUDA build such as 2.11+cu130):
#                             the virtualenv sees the system packages and pip installs only what is missing;
#                             the torch must be >= 2.11 (the oldest tested).
#   GCC_SGCL_WHEELS=<dir>     install from the wheels in <dir> only, with no network (pip --no-index); the
#                             folder needs setuptools and wheel too, to build this package.
#   GCC_SGCL_VENV=<dir>       the virtualenv's folder (default .venv in the repository).
# A virtualenv keeps the mode it was created with: delete it to change modes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${GCC_SGCL_VENV:-$ROOT/.venv}"
STAMP="$VENV/.setup-stamp"
TORCH_DEFAULT="torch==2.13.0"
TORCH_MIN="2.11"
want="$(sha256sum "$ROOT/setup.py" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  PYTHON="${PYTHON:-python3}"
  version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || {
    echo "[env] cannot run PYTHON=$PYTHON; set PYTHON to a Python 3.10, 3.11 or 3.12 interpreter, e.g. PYTHON=python3.12 bash scripts/..." >&2
    return 1 2>/dev/null || exit 1
  }
  case "$version" in
    3.10|3.11|3.12) ;;
    *) echo "[env] $PYTHON is Python $version, but gcc_sgcl needs CPython 3.10, 3.11 or 3.12 (dgl has Linux wheels only up to 3.12): install one and choose it with PYTHON=python3.12 bash scripts/..." >&2
       return 1 2>/dev/null || exit 1 ;;
  esac
  venv_args=() pip_args=(-q --disable-pip-version-check) torch_req=("$TORCH_DEFAULT")
  if [ "${GCC_SGCL_SYSTEM_TORCH:-0}" = 1 ]; then
    torch_version="$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)" || {
      echo "[env] GCC_SGCL_SYSTEM_TORCH=1, but $PYTHON cannot import torch: install torch there, or unset it to install $TORCH_DEFAULT" >&2
      return 1 2>/dev/null || exit 1
    }
    if ! "$PYTHON" -c "import sys; v = sys.argv[1].split('+')[0].split('.'); sys.exit(not (int(v[0]), int(v[1])) >= tuple(map(int, sys.argv[2].split('.'))))" "$torch_version" "$TORCH_MIN"; then
      echo "[env] GCC_SGCL_SYSTEM_TORCH=1, but $PYTHON has torch $torch_version; gcc_sgcl is tested with torch >= $TORCH_MIN" >&2
      return 1 2>/dev/null || exit 1
    fi
    venv_args=(--system-site-packages) torch_req=()
  fi
  if [ -n "${GCC_SGCL_WHEELS:-}" ]; then
    pip_args+=(--no-index --find-links "$(cd "$GCC_SGCL_WHEELS" && pwd)")
  fi
  echo "[env] first run: creating $VENV with Python $version${venv_args[*]:+ (system torch ${torch_version:-})}${GCC_SGCL_WHEELS:+ from $GCC_SGCL_WHEELS} (2-10 minutes, once)" >&2
  started=$SECONDS
  # each step checked by hand: set -e does not apply where the caller sources this file inside an `if`
  if ! "$PYTHON" -m venv "${venv_args[@]}" "$VENV"; then
    echo "[env] creating $VENV failed (see above); fix the cause and run again" >&2
    return 1 2>/dev/null || exit 1
  fi
  # pip takes a CPU torch wheel where it finds one (on disk, or an index given by PIP_EXTRA_INDEX_URL); from PyPI
  # alone torch is its CUDA build (several GB)
  echo "[env] installing ${torch_req[*]:+${torch_req[*]} (the CPU build where pip finds one, else the CUDA build from PyPI), }gcc_sgcl, DGL, scipy, scikit-learn, tensorboard and the test tools" >&2
  # pip -q is silent for minutes: a line every GCC_SGCL_HEARTBEAT seconds (default 30) says it is still working
  "$VENV/bin/pip" install "${pip_args[@]}" -e "$ROOT[test]" "${torch_req[@]}" >&2 &
  pip_pid=$! beat=$SECONDS
  while kill -0 "$pip_pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - beat)) -ge "${GCC_SGCL_HEARTBEAT:-30}" ] && kill -0 "$pip_pid" 2>/dev/null; then
      beat=$SECONDS
      echo "[env] still installing: $((SECONDS - started)) s so far (usually 2-10 minutes in all)" >&2
    fi
  done
  if ! wait "$pip_pid"; then
    echo "[env] installing into $VENV failed (see above); fix the cause and run again" >&2
    return 1 2>/dev/null || exit 1
  fi
  echo "$want" > "$STAMP"
  echo "[env] ready in $((SECONDS - started)) s" >&2
fi
export PATH="$VENV/bin:$PATH"
export DGLBACKEND=pytorch
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
