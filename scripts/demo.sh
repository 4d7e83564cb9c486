#!/usr/bin/env bash
# End-to-end demo on the embedded synthetic benchmark (no downloads): pre-train, generate, evaluate,
# print the table.   bash scripts/demo.sh [flags of `python -m gcc_sgcl.experiments.demo --help`]
source "$(dirname "$0")/_env.sh"
exec python -m gcc_sgcl.experiments.demo "$@"
