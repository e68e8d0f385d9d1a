#!/usr/bin/env bash
# gda4j on a real ConnectX: runs the hardware checks with GDA4J_NIC=mlx5 and prints a report to paste into an issue.
#
#   samples/scripts/connectx-report.sh [--out FILE] [--no-build] [--help]
#
# Needs an mlx5 RDMA device, an NVIDIA GPU with a GPUDirect RDMA path (nvidia_peermem loaded, or dma-buf), the
# rdma-core libraries, java (17+) and mvn. Where a piece is missing it names each one and exits 2 without running
# anything. Otherwise it builds gda4j (unless --no-build and the jar exists), runs
#   1. gda4j info                          what gda4j finds (GPUs, NICs, GPU x NIC matrix, settings)
#   2. Mlx5LoopbackRdmaTest                host-posted WRITE, inline WRITE, flush atomic and an error CQE, loopback
#   3. Mlx5IbgdaGpuTest                    GPU-posted puts and signals, inline slot, fence bit, flush, atomics
#   4. gda4j latency / bandwidth           GPU-posted sweeps over ibgda on the mlx5 NIC
# and prints, for each check, PASS / FAIL / SKIPPED with what a failure most likely means. Exit status: 0 when every
# check passed, 1 when one failed or was skipped, 2 when the machine lacks a piece.
# Environment: GDA4J_REPORT_STEP_TIMEOUT_S (default 1200) bounds each step; GDA4J_* settings pass through to gda4j.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=""
build=1
step_timeout=${GDA4J_REPORT_STEP_TIMEOUT_S:-1200}

while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a file name}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "connectx-report: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# ---- 1. What the machine has. Each missing piece is one line in $missing; nothing runs if there is any.
missing=()
sysfs_ib=/sys/class/infiniband

mlx5_devices=()
other_devices=()
if [ -d "$sysfs_ib" ]; then
  for d in "$sysfs_ib"/*; do
    [ -e "$d" ] || continue
    case ${d##*/} in
      mlx5_*) mlx5_devices+=("${d##*/}") ;;
      *) other_devices+=("${d##*/}") ;;
    esac
  done
fi
if [ ${#mlx5_devices[@]} -eq 0 ]; then
  if [ ${#other_devices[@]} -gt 0 ]; then
    missing+=("no mlx5 device in $sysfs_ib (found only: ${other_devices[*]}): gda4j's IBGDA needs a ConnectX (mlx5)")
  else
    missing+=("no mlx5 device in $sysfs_ib: no RDMA NIC here, or its driver is not loaded (modprobe mlx5_ib)")
  fi
fi

gpu_count=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if [ "$gpu_count" -eq 0 ] && [ -e /dev/nvidia0 ]; then
  gpu_count=1
fi
if [ "$gpu_count" -eq 0 ]; then
  missing+=("no GPU: nvidia-smi lists no NVIDIA GPU and /dev/nvidia0 does not exist (install the NVIDIA driver)")
fi

# GPUDirect RDMA: the NIC must be able to register GPU memory, through nvidia_peermem or through dma-buf.
peermem=""
if [ -e /sys/module/nvidia_peermem ] || [ -e /sys/kernel/mm/memory_peers/nvidia-peermem ]; then
  peermem="nvidia_peermem loaded"
fi
dmabuf=""
dmabuf_why=""
kernel=$(uname -r)
kernel_major=${kernel%%.*}
kernel_minor=${kernel#*.}
kernel_minor=${kernel_minor%%[!0-9]*}
if [ "${kernel_major:-0}" -gt 5 ] 2>/dev/null || { [ "${kernel_major:-0}" -eq 5 ] && [ "${kernel_minor:-0}" -ge 12 ]; } 2>/dev/null; then
  if [ -r /proc/driver/nvidia/version ] && grep -q "Open Kernel Module" /proc/driver/nvidia/version; then
    dmabuf="dma-buf possible (Linux $kernel, NVIDIA open kernel modules)"
  else
    dmabuf_why="/proc/driver/nvidia/version names no NVIDIA open kernel module"
  fi
else
  dmabuf_why="Linux $kernel is older than 5.12"
fi
if [ -z "$peermem" ] && [ -z "$dmabuf" ]; then
  missing+=("no nvidia_peermem/dma-buf: nvidia_peermem is not loaded (modprobe nvidia_peermem) and dma-buf is not available ($dmabuf_why); GPUDirect RDMA needs one of them")
fi

have_lib() {
  if command -v ldconfig >/dev/null 2>&1; then
    ldconfig -p 2>/dev/null | grep -q "$1" && return 0
  elif [ -x /sbin/ldconfig ]; then
    /sbin/ldconfig -p 2>/dev/null | grep -q "$1" && return 0
  fi
  local d
  for d in /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/local/lib; do
    [ -e "$d/$1" ] && return 0
  done
  return 1
}
for lib in libibverbs.so.1 libmlx5.so.1; do
  have_lib "$lib" || missing+=("no $lib: install rdma-core's libraries (Debian/Ubuntu: apt install libibverbs1 ibverbs-providers)")
done

java_cmd=${JAVA:-java}
if ! command -v "$java_cmd" >/dev/null 2>&1; then
  missing+=("no java: none on PATH (and JAVA unset); install a JDK 17 or newer")
else
  java_version=$("$java_cmd" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\)[."].*/\1/p' | head -1)
  if [ -n "$java_version" ] && [ "$java_version" -lt 17 ] 2>/dev/null; then
    missing+=("java $java_version is too old: gda4j needs 17 or newer")
  fi
fi
if ! command -v mvn >/dev/null 2>&1; then
  missing+=("no mvn: the hardware tests run through Maven 3.8+; install it (apt install maven)")
fi

if [ ${#missing[@]} -gt 0 ]; then
  {
    echo "connectx-report: this machine cannot run the ConnectX checks; missing:"
    for m in "${missing[@]}"; do echo "  - $m"; done
    echo "Nothing was run. docs/CONNECTX.md says what each piece is and how to install it."
  } >&2
  exit 2
fi

# ---- 2. The checks. Each step's log goes to $logs; the report quotes its tail.
logs=$(mktemp -d "${TMPDIR:-/tmp}/connectx-report.XXXXXX")
[ -n "$out" ] || out="$PWD/connectx-report-$(hostname -s 2>/dev/null || echo host)-$(date -u +%Y%m%dT%H%M%SZ).txt"
export GDA4J_NIC=mlx5
gpus=0,1
[ "$gpu_count" -ge 2 ] || gpus=0,0

# run_step NAME COMMAND...: runs with the step timeout; records PASS/FAIL/TIMEOUT in $logs/NAME.status.
run_step() {
  local name=$1; shift
  echo "connectx-report: running $name: $*" >&2
  (cd "$root" && timeout --foreground "$step_timeout" "$@") >"$logs/$name.log" 2>&1
  local rc=$?
  case $rc in
    0) echo PASS >"$logs/$name.status" ;;
    124|137) echo "TIMEOUT after ${step_timeout}s" >"$logs/$name.status" ;;
    *) echo "FAIL (exit $rc)" >"$logs/$name.status" ;;
  esac
}

if [ $build -eq 1 ] || [ ! -f "$root/samples/target/gda4j.jar" ]; then
  run_step build mvn -B -ntp -DskipTests install
  if [ "$(cat "$logs/build.status")" != PASS ]; then
    echo "connectx-report: the build failed; its log: $logs/build.log" >&2
    tail -40 "$logs/build.log" >&2
    exit 1
  fi
fi

run_step info ./gda4j info
rm -f "$root"/host/target/surefire-reports/TEST-io.gda4j.nic.mlx5.Mlx5LoopbackRdmaTest.xml \
  "$root"/host/target/surefire-reports/TEST-io.gda4j.ibgda.Mlx5IbgdaGpuTest.xml
run_step tests mvn -B -ntp -pl host test -Dtest='Mlx5LoopbackRdmaTest,Mlx5IbgdaGpuTest' \
  -Dsurefire.failIfNoSpecifiedTests=false
run_step latency ./gda4j latency --transport ibgda --nic mlx5 --gpus "$gpus" --quiet
run_step bandwidth ./gda4j bandwidth --transport ibgda --nic mlx5 --gpus "$gpus" --quiet

# likely_cause TEXT: what a failure with this text most likely means (first match wins).
likely_cause() {
  local t=$1
  case $t in
    *PeerMappingOverride*|*IOMEMORY*|*"UAR page"*)
      echo "UAR mapping: the NIC's doorbell page (UAR) could not be mapped into the GPU (cuMemHostRegister with" \
           "IOMEMORY). Run as root, or set the NVIDIA driver option PeerMappingOverride=1 (docs/CONNECTX.md)." ;;
    *ibv_reg_dmabuf_mr*|*dma-buf*)
      echo "dma-buf: registering GPU memory through dma-buf failed. It needs Linux 5.12+, rdma-core 34+ and the" \
           "NVIDIA open kernel modules; or load nvidia_peermem and set GDA4J_MLX5_DMABUF=off." ;;
    *nvidia-peermem*|*"cannot register"*)
      echo "GPUDirect registration: the NIC could not register GPU memory (neither dma-buf nor nvidia_peermem" \
           "worked): modprobe nvidia_peermem, or see the dma-buf requirements in docs/CONNECTX.md." ;;
    *mlx5dv*|*DEVX*|*devx*)
      echo "DEVX / mlx5 direct verbs: libmlx5 refused to expose the QP's rings (mlx5dv_init_obj). Check that" \
           "libmlx5 (rdma-core) is installed and recent, that the device is an mlx5 one, and the firmware." ;;
    *SET_SIGNAL_RELAXED*|*"relaxed ordering"*)
      echo "relaxed ordering: memory is registered with relaxed ordering, so SET signals are refused (they" \
           "could pass their data). Use ADD signals, or GDA4J_MLX5_RELAXED_ORDERING=false." ;;
    *stale*|*"fetched bytes"*|*flush*)
      echo "flush: data a get fetched was not yet visible in GPU memory when quiet returned, although quiet" \
           "ends with the PCIe flush (a null-MR atomic) on mlx5: the platform reorders GPUDirect writes further" \
           "than gda4j assumes. Paste the whole log." ;;
    *TRANSPORT_RETRY_EXC*|*RNR_RETRY_EXC*|*"stopped answering"*|*"timed out"*|*TimeoutException*|*doorbell*)
      echo "doorbell register: the doorbell store did not make the NIC run the WQEs (nothing completed), or the" \
           "QP cannot reach its peer (port down, wrong GID index: GDA4J_MLX5_GID_INDEX). Check 'gda4j info'" \
           "and the port state below." ;;
    *REMOTE_ACCESS*|*LOCAL_PROT*|*REMOTE_INVAL*|*LOCAL_ACCESS*)
      echo "memory keys: the NIC refused an address or key (a registration on the wrong NIC or without the" \
           "right access). Paste the whole log." ;;
    *"no mlx5 RDMA device"*|*"no CUDA device"*)
      echo "the JVM did not find the device the shell found (libibverbs or the CUDA driver not loadable from" \
           "Java). See 'gda4j info' above." ;;
    *)
      echo "not recognised: paste the whole log." ;;
  esac
}

# Test cases from the surefire XML reports: "STATUS class#method|message" lines.
test_cases() {
  local f
  for f in "$root"/host/target/surefire-reports/TEST-io.gda4j.nic.mlx5.Mlx5LoopbackRdmaTest.xml \
           "$root"/host/target/surefire-reports/TEST-io.gda4j.ibgda.Mlx5IbgdaGpuTest.xml; do
    [ -f "$f" ] || continue
    awk '
      function attr(line, key,   m) {
        if (match(line, " " key "=\"[^\"]*\"")) return substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
        return ""
      }
      function text(m) {
        gsub(/&#10;|&#13;/, " ", m); gsub(/&quot;/, "\"", m); gsub(/&apos;/, "'"'"'", m)
        gsub(/&lt;/, "<", m); gsub(/&gt;/, ">", m); gsub(/&amp;/, "\\&", m); gsub(/\|/, "/", m)
        return substr(m, 1, 400)
      }
      function flush() { if (name != "") print status " " cls "#" name "|" msg; name = "" }
      /<testcase / {
        flush()
        name = attr($0, "name"); cls = attr($0, "classname"); sub(/.*\./, "", cls)
        status = "PASS"; msg = ""
      }
      /<failure|<error/ { status = "FAIL"; msg = text(attr($0, "message")) }
      /<skipped/ { status = "SKIPPED"; msg = text(attr($0, "message")) }
      END { flush() }
    ' "$f"
  done
}

area_of() {
  case $1 in
    *Mlx5LoopbackRdmaTest*) echo "loopback RDMA (host-posted)" ;;
    *aGetIsVisibleAfterQuiet*) echo "flush" ;;
    *everyRankAdding*) echo "atomics" ;;
    *) echo "ordering / GPU posting" ;;
  esac
}

report() {
  echo "## gda4j ConnectX report"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- gda4j: $(cd "$root" && git describe --always --dirty 2>/dev/null || echo 'not a git checkout')"
  echo "- host: $(uname -srm)"
  echo "- CPU: $(uname -m)$(case $(uname -m) in aarch64|arm64) echo ' (host-posted doorbells use the JVM full fence, weaker than rdma-core dmb oshst / dsb st; GPU-posted ones are unaffected)';; esac)"
  echo "- java: $("$java_cmd" -version 2>&1 | head -1)"
  echo "- GPUs ($gpu_count): $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>/dev/null | paste -sd ';' -)"
  echo "- GPUDirect: ${peermem:-nvidia_peermem not loaded}; ${dmabuf:-dma-buf unavailable: $dmabuf_why}"
  echo "- PeerMappingOverride: $(grep -o 'PeerMappingOverride=[^;"]*' /proc/driver/nvidia/params 2>/dev/null || echo 'not set (or /proc/driver/nvidia/params unreadable)')"
  local d
  for d in "${mlx5_devices[@]}"; do
    local ports=""
    local p
    for p in "$sysfs_ib/$d"/ports/*; do
      [ -e "$p" ] || continue
      ports="$ports port ${p##*/}: $(cat "$p/state" 2>/dev/null | sed 's/^[0-9]*: //'), $(cat "$p/link_layer" 2>/dev/null), $(cat "$p/rate" 2>/dev/null);"
    done
    echo "- NIC $d: $(cat "$sysfs_ib/$d/hca_type" 2>/dev/null), firmware $(cat "$sysfs_ib/$d/fw_ver" 2>/dev/null);$ports"
  done
  echo
  echo "| check | result | most likely meaning |"
  echo "|---|---|---|"
  local line status rest name msg
  while IFS= read -r line; do
    status=${line%% *}; rest=${line#* }; name=${rest%%|*}; msg=${rest#*|}
    if [ "$status" = PASS ]; then
      echo "| $(area_of "$name"): $name | PASS | |"
    else
      echo "| $(area_of "$name"): $name | $status | $(likely_cause "$msg$(grep -A30 "$name" "$logs/tests.log" 2>/dev/null | head -30 | tr '\n' ' ')") |"
    fi
  done < <(test_cases)
  if [ -z "$(test_cases)" ]; then
    echo "| hardware tests | $(cat "$logs/tests.status") | no test report was written: $(likely_cause "$(tail -60 "$logs/tests.log")") |"
  fi
  local step
  for step in latency bandwidth; do
    local s
    s=$(cat "$logs/$step.status")
    if [ "$s" = PASS ]; then
      echo "| GPU-posted $step sweep | PASS | |"
    else
      echo "| GPU-posted $step sweep | $s | $(likely_cause "$(tail -60 "$logs/$step.log")") |"
    fi
  done
  echo
  for step in latency bandwidth; do
    echo "### gda4j $step --transport ibgda --nic mlx5 --gpus $gpus"
    echo '```'
    tail -40 "$logs/$step.log"
    echo '```'
  done
  echo "### gda4j info"
  echo '```'
  tail -80 "$logs/info.log"
  echo '```'
  if grep -q "FAIL\|SKIPPED\|TIMEOUT" < <(cat "$logs"/*.status; test_cases); then
    echo "### failures (last lines of the test log; whole logs in $logs)"
    echo '```'
    grep -E "FAIL|ERROR|Exception|Caused by|SKIPPED|skipped" "$logs/tests.log" | head -60
    echo '```'
  fi
}

report | tee "$out"
echo "connectx-report: report written to $out; logs in $logs" >&2
if grep -q "FAIL\|SKIPPED\|TIMEOUT" < <(cat "$logs"/*.status; test_cases); then
  exit 1
fi
exit 0
