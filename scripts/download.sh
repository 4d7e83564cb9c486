#!/usr/bin/env bash
# Fetch benchmark datasets into the data root (default ./data; --data-dir DIR or $GCC_SGCL_DATA).
# Usage: bash scripts/download.sh [--data-dir DIR] [--no-verify] NAME... | all
# A relative --data-dir is taken relative to the current directory.
source "$(dirname "$0")/_env.sh"
python -m gcc_sgcl.data.download "$@"
