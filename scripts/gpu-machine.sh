#!/usr/bin/env bash
# The runs on a GPU machine, from a clone of this repository and nothing else.
#
# Usage: scripts/gpu-machine.sh [--out DIR] [--deps DIR] [--baseline JSON] [--tar FILE]
#                               [--dry-run] STEP...
#        scripts/gpu-machine.sh --list | --help
#
# The steps run in the order given; everything they write goes under the output folder
# (default: out/ in the repository, git-ignored): results/<step>/ (the JSON and CSVs of
# each gpudissect run), <step>.txt (its summary), logs/ (progress, build and NCCL logs),
# sass/ (the kernels' machine code) and log.txt (all of the above as it was printed).
#
#   --deps DIR      a folder of Debian packages (.deb) to unpack before building, for a bare
#                   machine without a package registry: libcli11-dev nlohmann-json3-dev
#                   opencl-headers opencl-c-headers opencl-clhpp-headers ocl-icd-opencl-dev,
#                   and for Vulkan glslang-tools libvulkan-dev plus the loaders
#                   libvulkan1 libglvnd0 libegl1 libopengl0 libgl1 libglx0 libgles2
#                   (`apt-get download <names>` on Debian 12 or Ubuntu 24.04 fetches them)
#   --baseline JSON the full run the quick and busy steps are gated against (default: the
#                   full step's JSON in the output folder)
#   --tar FILE      also pack the output folder into FILE after every step, so that a call
#                   that runs out of time still hands back what was done
#   --dry-run       print what each step would run; needs no GPU and no build
#
# Environment: BUILD_DIR (default build), GD_DEPS_ROOT (where the packages are unpacked,
# default /opt/devdeps), GD_CUDA_ARCH (default 90), GD_GIT_REVISION (the revision the
# results name, where the copy's .git is not the tree's own; default: git rev-parse).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2

steps_help() {
  cat <<'EOF'
build        unpack the packages (--deps), register NVIDIA's OpenCL driver, build
             (CUDA, OpenCL, and Vulkan when its packages are there) and dump the SASS
full         gpudissect run, every probe on cuda:0
repeat       latency, memory, atomics and frontend again, each in a new process, each
             compared with the full run (repeatability, 3 %)
sweep        the compute probe with a cold compile cache, then with the ILP x occupancy
             sweep (compute.sweep=1)
quick        run --quick with a cold compile cache, then warm, each gated against the
             full run (compare --baseline, 3 %)
opencl       every probe on the same GPU through NVIDIA's OpenCL driver
vulkan       every probe on the same GPU through Vulkan (needs the Vulkan packages)
cpu          the machine's own CPU through PoCL (when installed): full run and --quick
busy         run --quick while a second gpudissect process loads the GPU, gated against
             the full run: what a user on a shared GPU gets
links        2-GPU machine: the links probe over both GPUs (NCCL from the Python
             packages, NVLink multicast off), then a 2-rank fleet (mpirun, else processes)
links-check  2-GPU machine: links again with NCCL's own log, the peer chase at four
             footprints, and torch.distributed's all-reduce as a reference (when torch is
             installed)
EOF
}
usage() {
  sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
  echo "Steps:"
  steps_help | sed 's/^/  /'
}

out=$root/out deps="" baseline="" tarball="" dry=0 steps=() failed=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --list) steps_help | awk '/^[a-z]/ {print $1}'; exit 0 ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --deps) deps=${2:?--deps needs a folder}; shift ;;
    --baseline) baseline=${2:?--baseline needs a JSON file}; shift ;;
    --tar) tarball=${2:?--tar needs a file name}; shift ;;
    -n | --dry-run) dry=1 ;;
    -*) echo "gpu-machine.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if ! steps_help | awk '/^[a-z]/ {print $1}' | grep -qx -- "$1"; then
        echo "gpu-machine.sh: unknown step '$1'; steps: $(steps_help | awk '/^[a-z]/ {printf "%s ", $1}')" >&2
        exit 2
      fi
      steps+=("$1") ;;
  esac
  shift
done
if ((${#steps[@]} == 0)); then
  echo "gpu-machine.sh: no step given (see --help)" >&2
  exit 2
fi
if [[ -n $deps && ! -d $deps ]]; then
  echo "gpu-machine.sh: --deps $deps is not a folder" >&2
  exit 2
fi
# The paths given are the caller's; the steps run in the repository root.
abs() { [[ -z $1 || $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
out=$(abs "$out") deps=$(abs "$deps") baseline=$(abs "$baseline") tarball=$(abs "$tarball")
cd "$root" || exit 2

BUILD_DIR=${BUILD_DIR:-build}
GD=./$BUILD_DIR/gpudissect
DEPS_ROOT=${GD_DEPS_ROOT:-/opt/devdeps}
R=$out/results
mkdir -p "$out" "$R" "$out/logs" "$out/sass"
out=$(cd "$out" && pwd) R=$out/results
if ((!dry)); then exec > >(tee -a "$out/log.txt") 2>&1; fi

# x CMD...: run a command, or print it in a dry run; xo FILE CMD...: the same, its output
# (stdout and stderr) into FILE.
x() {
  if ((dry)); then echo "+ $*"; else "$@"; fi
}
xo() {
  local file=$1
  shift
  if ((dry)); then echo "+ $* > $file"; else "$@" >"$file" 2>&1; fi
}
smi() {
  ((dry)) || nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv 2>&1
}
quiet() { grep -v "point [0-9]* of" >&2; }
# gd NAME LIMIT ARGS...: one gpudissect command writing into results/NAME, its summary in
# NAME.txt, its progress in logs/NAME.log; prints its exit status and time.
gd() {
  local name=$1 limit=$2 t1 rc
  shift 2
  if ((dry)); then
    echo "+ timeout $limit $GD $* --out-dir $R/$name --no-html > $out/$name.txt"
    return 0
  fi
  t1=$(date +%s)
  timeout "$limit" "$GD" "$@" --out-dir "$R/$name" --no-html >"$out/$name.txt" \
    2> >(tee "$out/logs/$name.log" | quiet)
  rc=$?
  echo "exit ($name): $rc ($(($(date +%s) - t1)) s)"
  ((rc == 0)) || failed=1
  return $rc
}
# gate NAME: results/NAME's JSON against the baseline at 3 % (a partial run: figures it
# does not measure are listed, not failed), the verdicts in
# results/NAME/baseline.txt.
gate() {
  local name=$1 base=$baseline json
  [[ -z $base ]] && base=$(ls "$R"/full/*.json 2>/dev/null | head -1)
  if ((dry)); then
    echo "+ $GD compare --baseline ${base:-$R/full/<device>.json} $R/$name/<device>.json --tolerance 3% --allow-missing -v > $R/$name/baseline.txt"
    return 0
  fi
  json=$(ls "$R/$name"/*.json 2>/dev/null | head -1)
  if [[ -z $base ]]; then
    echo "gate ($name): no baseline (run the full step first or pass --baseline)"
    return 0
  fi
  if [[ -z $json ]]; then
    echo "gate ($name): the run wrote no JSON"
    return 0
  fi
  "$GD" compare --baseline "$base" "$json" --tolerance 3% --allow-missing -v >"$R/$name/baseline.txt" 2>&1
  local rc=$?  # before the line below: its $(basename) would reset $?
  echo "exit ($name against $(basename "$base")): $rc"
  sed -n '/^REGRESSIONS/,/^Improvements/p' "$R/$name/baseline.txt"
}
# device PATTERN: the first device of `gpudissect list` whose line matches PATTERN.
device() {
  if ((dry)); then echo "<${1#^}>" | sed 's/:.*/ device>/'; return; fi
  timeout 60 "$GD" list 2>/dev/null | awk -v p="$1" '$0 ~ p {print $1; exit}'
}
pack() {
  [[ -z $tarball ]] && return 0
  x tar czf "$tarball" -C "$(dirname "$out")" "$(basename "$out")"
}

# ---- what every call needs, built or not: the packages and the drivers' registrations
vulkan_loaders=(libvulkan1 libglvnd0 libegl1 libopengl0 libgl1 libglx0 libgles2)
prepare() {
  local ocl=/tmp/gd-ocl-vendors icd p f
  if [[ -n $deps ]]; then
    # Most packages go to GD_DEPS_ROOT; the Vulkan loader set goes to / (only these:
    # unpacking others there can break the image), where NVIDIA's ICD finds its libraries.
    x mkdir -p "$DEPS_ROOT"
    for f in "$deps"/*.deb; do [[ -e $f ]] && x dpkg -x "$f" "$DEPS_ROOT"; done
    if compgen -G "$deps/libvulkan1_*.deb" >/dev/null; then
      for p in "${vulkan_loaders[@]}"; do
        for f in "$deps"/"${p}"_*.deb; do [[ -e $f ]] && x dpkg -x "$f" /; done
      done
      x ldconfig
    fi
  fi
  # NVIDIA's ICD manifest lives where the Vulkan loader does not look.
  if [[ -z ${VK_DRIVER_FILES:-} ]]; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
      /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
      [[ -f $icd ]] && { export VK_DRIVER_FILES=$icd; break; }
    done
  fi
  # NVIDIA's OpenCL driver is present but not registered; the registered ones (PoCL) stay.
  x mkdir -p "$ocl"
  ((dry)) || { echo libnvidia-opencl.so.1 >"$ocl/nvidia.icd"; cp /etc/OpenCL/vendors/*.icd "$ocl"/ 2>/dev/null; }
  export OCL_ICD_VENDORS=$ocl
  [[ -d /usr/local/cuda/bin ]] && export PATH=/usr/local/cuda/bin:$PATH
  return 0
}

# ---- the steps
step_build() {
  local t0 args=""
  t0=$(date +%s)
  [[ -n $deps ]] && args="-DCMAKE_PREFIX_PATH=$DEPS_ROOT/usr"
  if ((dry)); then
    echo "+ GD_CMAKE_ARGS=\"$args\" BUILD_DIR=$BUILD_DIR GD_BUILD_TESTS=OFF bash scripts/build.sh > $out/logs/build.log"
  else
    GD_CMAKE_ARGS=$args BUILD_DIR=$BUILD_DIR GD_BUILD_TESTS=OFF JOBS=$(nproc) bash scripts/build.sh \
      >"$out/logs/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$out/logs/build.log" | head -60; return 1; }
    echo "build: $(($(date +%s) - t0)) s"
  fi
  x "$GD" --version
  # The timed loops' machine code: the chase, bandwidth and memory kernels, and all of it.
  if ((dry)); then echo "+ cuobjdump --dump-sass $GD > $out/sass/"; return 0; fi
  command -v cuobjdump >/dev/null || return 0
  cuobjdump --dump-sass "$GD" >/tmp/gd-sass.txt 2>&1
  awk '/Function : /{p = ($0 ~ /(chase|clock_kernel)/)} p' /tmp/gd-sass.txt >"$out/sass/chase.txt"
  awk '/Function : /{p = ($0 ~ /bw_/)} p' /tmp/gd-sass.txt >"$out/sass/bandwidth.txt"
  awk '/Function : /{p = ($0 ~ /mem_chase/)} p' /tmp/gd-sass.txt >"$out/sass/memory.txt"
  gzip -c /tmp/gd-sass.txt >"$out/sass/gpudissect.txt.gz"
}
step_full() {
  smi
  gd full 400 run --device cuda:0
  x grep -v "^wrote:" "$out/full.txt"
  smi
}
step_repeat() {
  local p
  for p in latency memory atomics frontend; do
    gd "${p}2" 240 run "$p" --device cuda:0
    gate "${p}2"
  done
  ((dry)) || cp -r ~/.cache/gpudissect/frontend "$out/sass/frontend" 2>/dev/null
  return 0
}
step_sweep() {
  x rm -rf ~/.cache/gpudissect
  gd compute 150 run compute --device cuda:0
  gd compute-sweep 200 run compute --device cuda:0 --option compute.sweep=1
  ((dry)) || cp -r ~/.cache/gpudissect/compute "$out/sass/compute" 2>/dev/null
  return 0
}
step_quick() {
  # Cold: the compile cache of a fresh machine; warm: what a fleet health check sees.
  x rm -rf ~/.cache/gpudissect
  gd quick-cold 120 run --quick --device cuda:0
  gate quick-cold
  gd quick 120 run --quick --device cuda:0
  gate quick
  ((dry)) || grep -h "wall time" "$out/quick-cold.txt" "$out/quick.txt"
  return 0
}
step_opencl() {
  local dev
  dev=$(device "^opencl:.*NVIDIA")
  [[ -z $dev ]] && { echo "opencl: no NVIDIA OpenCL device"; x "$GD" list; return 1; }
  gd opencl 300 run --device "$dev"
}
step_vulkan() {
  local dev
  dev=$(device "^vulkan:.*(NVIDIA|H100|H200)")
  if [[ -z $dev ]]; then
    echo "vulkan: no NVIDIA device through Vulkan (built without Vulkan? pass --deps with" \
      "its packages; VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset})"
    x "$GD" list
    return 1
  fi
  gd vulkan 400 run --device "$dev"
  x grep -v "^wrote:" "$out/vulkan.txt"
}
step_cpu() {
  local dev
  ((dry)) || lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3|Hypervisor"
  dev=$(device "^opencl:.*([Cc][Pp][Uu]|pthread)")
  [[ -z $dev ]] && { echo "cpu: no OpenCL CPU device (PoCL not installed)"; return 0; }
  gd cpu 240 run --device "$dev"
  gd cpu-quick 240 run --quick --device "$dev"
}
step_busy() {
  # The load: this tool's own compute probe in a loop, in another process, on the same GPU,
  # until the flag file goes.
  local load flag=/tmp/gd-busy-load.on
  if ((dry)); then
    echo "+ while [[ -e $flag ]]; do $GD run compute --device cuda:0 ...; done &"
  else
    touch "$flag"
    (while [[ -e $flag ]]; do "$GD" run compute --device cuda:0 --out-dir /tmp/gd-busy-load \
      --no-html -q >/dev/null 2>&1; done) &
    load=$!
    sleep 5
    smi
  fi
  gd busy 120 run --quick --device cuda:0
  ((dry)) || { rm -f "$flag"; pkill -P "$load" 2>/dev/null; wait "$load" 2>/dev/null; }
  gate busy
  x grep -iE "warn|busy|throttl|other process" "$out/busy.txt" "$out/logs/busy.log"
  return 0
}
# The Python with torch (GD_PYTHON, the image's torch environment, or python3), if any.
torch_python() {
  local p
  for p in ${GD_PYTHON:-} /opt/torch/.venv/bin/python3 python3; do
    command -v "$p" >/dev/null && "$p" -c "import torch" 2>/dev/null && { echo "$p"; return; }
  done
}
nccl() {  # the libnccl.so.2 of the Python packages (the nvidia-nccl wheel), else anywhere
  local d lib="" py
  py=$(torch_python)
  for d in $("${py:-python3}" -c 'import site, sys; print("\n".join(site.getsitepackages() + sys.path))' 2>/dev/null | sort -u); do
    [[ -d $d ]] && lib=$(find "$d" -maxdepth 5 -name 'libnccl.so.2' 2>/dev/null | head -1)
    [[ -n $lib ]] && break
  done
  [[ -z $lib ]] && lib=$(find / -xdev -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)
  echo "$lib"
}
links_env() {
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  ((dry)) && return 0
  GD_NCCL_LIBRARY=${GD_NCCL_LIBRARY:-$(nccl)}
  export GD_NCCL_LIBRARY
  echo "NCCL: ${GD_NCCL_LIBRARY:-none found: the collectives will be unsupported}"
  nvidia-smi topo -m 2>&1
}
step_links() {
  local mpi=() fleet=(--profile quick -o "$R/fleet/fleet.html" --json "$R/fleet/fleet.json")
  links_env
  smi
  gd links 180 run links --device cuda:0
  x mkdir -p "$R/fleet"
  # Exit 3 from the fleet means a GPU was judged unhealthy (the page says why).
  if ((!dry)) && ! ldd "$GD" | grep -q libmpi; then
    echo "fleet: built without MPI; the 2 ranks as local processes"
    xo "$out/fleet.txt" timeout 240 "$GD" fleet --ranks 2 "${fleet[@]}"
  else
    [[ $(id -u) == 0 ]] && mpi=(--allow-run-as-root)
    xo "$out/fleet.txt" timeout 240 mpirun "${mpi[@]}" -n 2 "$GD" fleet "${fleet[@]}"
  fi
  ((dry)) || echo "exit (fleet): $?"
  x tail -40 "$out/fleet.txt"
  x grep -v "^wrote:" "$out/links.txt"
}
step_links-check() {
  local fp py
  links_env
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING gd links2 180 run links --device cuda:0
  # NCCL's own choices, most frequent first.
  ((dry)) || grep -E "NCCL INFO (Channel|Connected|comm |.*nChannels|.*Algo|.*P2P|.*CUMEM|.*NVLS)" \
    "$out/logs/links2.log" | sort | uniq -c | sort -rn | head -25
  for fp in 64K 2M 64M 1G; do
    gd "chase-$fp" 60 run links --device cuda:0 --option links.parts=latency --option links.chase_footprint=$fp
  done
  py=$( ((dry)) && echo python3 || torch_python)
  if [[ -n $py ]]; then
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING xo "$out/torch_ref.txt" timeout 150 "$py" scripts/nccl_reference.py
    x grep "^torch" "$out/torch_ref.txt"
  else
    echo "links-check: no torch; no reference all-reduce"
  fi
}

((dry)) && echo "# dry run: nothing is executed"
prepare
rc=0
for s in "${steps[@]}"; do
  echo "== $s ($(date -u +%H:%M:%S) UTC)"
  if [[ $s != build && ! -x $GD ]] && ((!dry)); then
    echo "$s: $GD is not built (run the build step first)"
    rc=1
    break
  fi
  "step_$s" || rc=1
  pack
done
# Any gpudissect run that failed fails the call (a regression found by a gate does not).
((failed)) && rc=1
exit $rc
