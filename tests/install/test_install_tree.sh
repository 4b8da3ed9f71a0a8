#!/usr/bin/env bash
# cmake --install into a scratch prefix (no root), then the installed binary's checks
# (check_installed.sh). Usage: test_install_tree.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
BUILD=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/prefix" >"$T/install.log" 2>&1 || {
  cat "$T/install.log"
  echo "FAIL: cmake --install"
  exit 1
}
bash "$SRC/tests/install/check_installed.sh" "$T/prefix" "$SRC"
