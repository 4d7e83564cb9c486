#!/usr/bin/env bash
# Run the test suite and every docstring example (bootstraps .venv on first use).
#   bash scripts/test.sh                         the whole suite: tests/ and the docstring examples of gcc_sgcl/
#   bash scripts/test.sh tests/test_api.py -x    only what is given (pytest arguments: files, -k, -x, ...)
# Real datasets are read from $GCC_SGCL_DATA (default ../shared/data); tests needing one skip with a reason.
source "$(dirname "$0")/_help.sh"
show_help_if_asked "$0" "${1:-}"  # this header, without the other arguments
source "$(dirname "$0")/_env.sh"
cd "$ROOT"
if [ $# -eq 0 ]; then set -- tests gcc_sgcl; fi
exec python -m pytest -q -rs --doctest-modules "$@"
