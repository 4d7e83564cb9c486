# Sourced by every script: creates .venv on first use (offline-safe: only the package registries) and
# activates it. Re-installs when setup.py changes. Paths given to scripts are relative to the caller's cwd.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.setup-stamp"
want="$(sha256sum "$ROOT/setup.py" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  echo "[env] bootstrapping $VENV (first run takes about a minute)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -e "$ROOT[test]" >&2
  echo "$want" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
export DGLBACKEND=pytorch
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
