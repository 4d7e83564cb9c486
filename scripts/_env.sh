# Sourced by every script: creates .venv on first use (offline-safe: only the package registries) and
# activates it. Re-installs when setup.py changes. Paths given to scripts are relative to the caller's cwd.
# PYTHON chooses the interpreter the virtualenv is created with (default python3); it must be CPython 3.10 or
# 3.11: dgl==1.1.3 publishes wheels for 3.8-3.11 only, and the package uses 3.10 syntax.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.setup-stamp"
want="$(sha256sum "$ROOT/setup.py" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  PYTHON="${PYTHON:-python3}"
  version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || {
    echo "[env] cannot run PYTHON=$PYTHON; set PYTHON to a Python 3.10 or 3.11 interpreter, e.g. PYTHON=python3.11 bash scripts/..." >&2
    return 1 2>/dev/null || exit 1
  }
  case "$version" in
    3.10|3.11) ;;
    *) echo "[env] $PYTHON is Python $version, but gcc_sgcl needs CPython 3.10 or 3.11 (dgl==1.1.3 has wheels only up to 3.11): install one and choose it with PYTHON=python3.11 bash scripts/..." >&2
       return 1 2>/dev/null || exit 1 ;;
  esac
  echo "[env] bootstrapping $VENV with Python $version (first run takes about a minute)" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -e "$ROOT[test]" >&2
  echo "$want" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
export DGLBACKEND=pytorch
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
