# Sourced by the test scripts. find_python MODULE...: prints the first Python 3 that imports
# every named module, Debian's /usr/bin/python3 first: scripts/install-deps.sh installs
# Debian's packages (python3-jsonschema, python3-prometheus-client), which a pyenv or venv
# python3 earlier on PATH does not see. Prints nothing and returns 1 when none does.
find_python() {
  local p mods
  mods=$(
    IFS=,
    echo "$*"
  )
  for p in /usr/bin/python3 python3; do
    command -v "$p" >/dev/null 2>&1 || continue
    "$p" -c "import $mods" 2>/dev/null && {
      echo "$p"
      return 0
    }
  done
  return 1
}
