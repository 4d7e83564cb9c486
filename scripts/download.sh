#!/usr/bin/env bash
# Fetch benchmark datasets into the data root (default ./data; --data-dir DIR or $GCC_SGCL_DATA).
# Usage: bash scripts/download.sh [--data-dir DIR] [--no-verify] NAME... | all
# A relative --data-dir is taken relative to the current directory.
# --help: this text, every flag, and each downloadable dataset with where its files come from.
source "$(dirname "$0")/_env.sh"
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.data.download
python -m gcc_sgcl.data.download "$@"
