#!/usr/bin/env bash
# Every SPIR-V module the build compiled (and embedded) passes spirv-val for the Vulkan 1.1
# environment it was compiled for. Skipped (exit 77) where spirv-val is not installed,
# unless GD_REQUIRE_VULKAN=1 (CI), where a missing validator is a failure.
# Usage: test_spirv_valid.sh BUILD_DIR/generated/spirv
set -uo pipefail
dir=${1:?usage: test_spirv_valid.sh SPIRV_DIR}
validator=$(command -v spirv-val || true)
if [[ -z $validator ]]; then
  if [[ ${GD_REQUIRE_VULKAN:-0} == 1 ]]; then
    echo "FAIL: no spirv-val and GD_REQUIRE_VULKAN=1 (scripts/install-deps.sh installs spirv-tools)"
    exit 1
  fi
  echo "SKIP: spirv-val not installed (Debian: spirv-tools)"
  exit 77
fi
shopt -s nullglob
modules=("$dir"/*.spv)
if ((${#modules[@]} == 0)); then
  echo "FAIL: no .spv files in $dir"
  exit 1
fi
failed=0
for m in "${modules[@]}"; do
  # A std430 uniform block is valid where the device has uniformBufferStandardLayout, the
  # only devices the backend loads such a module on.
  flags=()
  [[ $(basename "$m") == *std430* ]] && flags=(--uniform-buffer-standard-layout)
  if "$validator" --target-env vulkan1.1 "${flags[@]}" "$m"; then
    echo "ok - $(basename "$m")"
  else
    echo "not ok - $(basename "$m")"
    failed=$((failed + 1))
  fi
done
echo "${#modules[@]} modules, $failed invalid"
((failed == 0))
