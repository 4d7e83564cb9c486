# Sourced by the scripts with positional arguments: `--help` (or -h) as the first argument prints the script's
# header comment and then the full --help of the command it wraps, without needing the other arguments.
#   show_help_if_asked "$0" "${1:-}" python -m gcc_sgcl.engine.pretrain
show_help_if_asked() {
  local script=$1 first=$2; shift 2
  case $first in -h|--help) ;; *) return 0 ;; esac
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$script"
  if [ $# -gt 0 ]; then echo; "$@" --help; fi
  exit 0
}

# The datasets come first, the flags after: a dataset file whose name starts with '-' (e.g. -g.edgelist) would read
# as a flag, so an existing file there is passed as ./-g.edgelist. Sets DASH_SAFE; use it as
#   dash_safe "$@"; set -- ${DASH_SAFE[@]+"${DASH_SAFE[@]}"}
dash_safe() {
  DASH_SAFE=()
  local datasets=1 arg
  for arg in "$@"; do
    if [ $datasets = 1 ] && [[ $arg == -* ]]; then
      if [[ $arg != --* ]] && [ -e "$arg" ]; then arg="./$arg"; else datasets=0; fi
    fi
    DASH_SAFE+=("$arg")
  done
}
