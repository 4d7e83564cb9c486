#!/usr/bin/env bash
# Run the test suite and every docstring example (bootstraps .venv on first use).   bash scripts/test.sh [pytest args...]
source "$(dirname "$0")/_env.sh"
cd "$ROOT"
exec python -m pytest -q --doctest-modules tests gcc_sgcl "$@"
