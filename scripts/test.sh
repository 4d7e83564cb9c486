#!/usr/bin/env bash
# Run the test suite (bootstraps .venv on first use).   bash scripts/test.sh [pytest args...]
source "$(dirname "$0")/_env.sh"
exec python -m pytest -q tests "$@"
