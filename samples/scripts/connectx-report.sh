#!/usr/bin/env bash
# gda4j on a real ConnectX: runs the hardware checks with GDA4J_NIC=mlx5 and prints a report to paste into an issue.
#
#   samples/scripts/connectx-report.sh [--out FILE] [--no-build]   run the checks, print and save the report
#   samples/scripts/connectx-report.sh --facts                      only the machine section (runs nothing)
#   samples/scripts/connectx-report.sh --explain 'TEXT'             what a failure with this text most likely means
#
# Needs an mlx5 RDMA device, an NVIDIA GPU with a GPUDirect RDMA path (nvidia_peermem loaded, or dma-buf), the
# rdma-core libraries, java (17+) and mvn. Where a piece is missing it names each one and exits 2 without running
# anything. Otherwise it builds gda4j (unless --no-build and the jar exists), runs
#   1. gda4j info                          what gda4j finds (GPUs, NICs, GPU x NIC matrix, settings)
#   2. Mlx5LoopbackRdmaTest                host-posted (libibverbs) WRITE, inline WRITE, flush atomic, an error CQE
#   3. Mlx5IbgdaGpuTest                    GPU-posted puts and signals, inline slot, fence bit, flush, atomics
#   4. gda4j latency / bandwidth           GPU-posted sweeps over ibgda on the mlx5 NIC
# and prints the machine (IOMMU mode, ACS on the GPU-NIC path, the path itself, NIC firmware, ports, GIDs, MTU,
# ECN) and, for each check, PASS / FAIL / SKIPPED with what a failure most likely means. Exit status: 0 when every
# check passed, 1 when one failed or was skipped, 2 when the machine lacks a piece.
# Environment: GDA4J_REPORT_STEP_TIMEOUT_S (default 1200) bounds each step; GDA4J_* settings pass through to gda4j;
# GDA4J_REPORT_SYSFS / GDA4J_REPORT_PROC (default /sys, /proc) and LSPCI (default lspci) are read for the facts.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=""
build=1
step_timeout=${GDA4J_REPORT_STEP_TIMEOUT_S:-1200}

mode=run
explain_text=""
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a file name}; shift 2 ;;
    --no-build) build=0; shift ;;
    --facts) mode=facts; shift ;;
    --explain) mode=explain; explain_text=${2?--explain needs the failure text}; shift 2 ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "connectx-report: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

sys=${GDA4J_REPORT_SYSFS:-/sys}
proc=${GDA4J_REPORT_PROC:-/proc}
lspci_cmd=${LSPCI:-lspci}
sysfs_ib=$sys/class/infiniband

# likely_cause TEXT: what a failure with this text most likely means, and how to check it (first match wins).
likely_cause() {
  local t=$1
  case $t in
    *"8-byte RDMA atomics"*|*atomic_cap*)
      echo "atomics: the NIC offers no 8-byte RDMA atomics, which ADD signals, atomic_add and the PCIe flush" \
           "are. Check 'ibv_devinfo -v | grep atomic_cap' (a VF or a firmware setting can hide them)." ;;
    *"loopback RC connection"*)
      echo "loopback: the NIC would not connect an RC QP to itself, which the PCIe flush and a rank's own ADDs" \
           "ride. Check the port (ACTIVE, a LID on InfiniBand: an SM runs), the RoCE GID (GDA4J_MLX5_GID_INDEX)" \
           "and any local-loopback policy of the NIC or its DPU/eswitch." ;;
    *PeerMappingOverride*|*IOMEMORY*|*"UAR page"*)
      echo "UAR mapping: the NIC's doorbell page (UAR) could not be mapped into the GPU (cuMemHostRegister with" \
           "IOMEMORY). Run as root, or set the NVIDIA driver option PeerMappingOverride=1 (docs/CONNECTX.md); an" \
           "IOMMU in DMA (translated) mode can refuse it too (see IOMMU above)." ;;
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
    *TRANSPORT_RETRY_EXC*|*RNR_RETRY_EXC*)
      echo "path: the QP got no answer from its peer. On RoCE a wrong GID (GDA4J_MLX5_GID_INDEX: pick a RoCE v2" \
           "GID of the right subnet from the GIDs above) or MTU; on InfiniBand no subnet manager (port LID 0," \
           "sm_lid 0 above: start opensm); or the port is down." ;;
    *"stayed full"*|*"stalled for"*|*"stopped answering"*|*"timed out"*|*TimeoutException*|*doorbell*)
      echo "doorbell register: nothing completed. If the host-posted loopback test passed, the GPU's doorbell" \
           "store did not reach the NIC: ACS redirect on a bridge between GPU and NIC, or GPU and NIC under" \
           "different root ports (see ACS and the GPU-NIC path above); else the port or GID (see the ports)." ;;
    *REMOTE_ACCESS*|*LOCAL_PROT*|*REMOTE_INVAL*|*LOCAL_ACCESS*)
      echo "memory keys: the NIC refused an address or key (a registration on the wrong NIC or without the" \
           "right access; REMOTE_INVAL_REQ on an atomic also means atomics are off). Paste the whole log." ;;
    *"no mlx5 RDMA device"*|*"no CUDA device"*)
      echo "the JVM did not find the device the shell found (libibverbs or the CUDA driver not loadable from" \
           "Java). See 'gda4j info' above." ;;
    *)
      echo "not recognised: paste the whole log." ;;
  esac
}

# ---- Machine facts: bullet lines for the report (and --facts). Read-only; every missing source says so.

# The PCI functions of NVIDIA GPUs (vendor 0x10de, display or 3D class), as bus ids.
gpu_functions() {
  local d
  for d in "$sys"/bus/pci/devices/*; do
    [ -e "$d/vendor" ] || continue
    [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
    case $(cat "$d/class" 2>/dev/null) in 0x03*) echo "${d##*/}" ;; esac
  done
}

# The PCI bus id of an RDMA device (mlx5_0 -> 0000:3b:00.0).
nic_function() {
  local link
  link=$(readlink -f "$sysfs_ib/$1/device" 2>/dev/null) || return 0
  echo "${link##*/}"
}

# The chain of PCI nodes above a function, root complex first: pci0000:00 0000:00:01.0 ... <bdf>.
pci_chain() {
  local real rest
  real=$(readlink -f "$sys/bus/pci/devices/$1" 2>/dev/null) || return 0
  rest=${real#*/devices/}
  echo "${rest//\// }"
}

# How a GPU and a NIC meet: "switch <bdf>: PIX/PXB", "root complex <rc>: PHB", NODE or SYS; then the bridges between.
pcie_path() {
  local g=($(pci_chain "$1")) n=($(pci_chain "$2"))
  if [ ${#g[@]} -eq 0 ] || [ ${#n[@]} -eq 0 ]; then
    echo "unknown (no sysfs path for $1 or $2)"
    return
  fi
  local c=0
  while [ $c -lt ${#g[@]} ] && [ $c -lt ${#n[@]} ] && [ "${g[$c]}" = "${n[$c]}" ]; do c=$((c + 1)); done
  local between=() i
  for ((i = ${#g[@]} - 2; i >= c; i--)); do between+=("${g[$i]}"); done
  [ $c -gt 1 ] && between+=("${g[$((c - 1))]}")
  for ((i = c; i < ${#n[@]} - 1; i++)); do between+=("${n[$i]}"); done
  if [ $c -eq 0 ]; then
    local gn nn
    gn=$(cat "$sys/bus/pci/devices/$1/numa_node" 2>/dev/null || echo '?')
    nn=$(cat "$sys/bus/pci/devices/$2/numa_node" 2>/dev/null || echo '?')
    if [ "$gn" = "$nn" ]; then
      echo "NODE: different root complexes (${g[0]}, ${n[0]}) on NUMA node $gn: GPUDirect crosses the CPU"
    else
      echo "SYS: different root complexes on NUMA nodes $gn and $nn: GPUDirect crosses the CPU interconnect"
    fi
  elif [ $c -eq 1 ]; then
    echo "PHB: different root ports of root complex ${g[0]}: GPUDirect goes through the CPU's host bridge"
  else
    echo "PIX/PXB: below PCIe switch port ${g[$((c - 1))]} (bridges between: ${between[*]})"
  fi
  echo "${between[*]}" >"$facts_tmp/between"
}

# ACS on the bridges between a GPU and a NIC: a redirect (ReqRedir+/CmpltRedir+) sends their peer traffic up to the
# root complex.
acs_of() {
  local bdf line out=""
  if ! command -v "$lspci_cmd" >/dev/null 2>&1; then
    echo "unknown: lspci is not installed (apt install pciutils)"
    return
  fi
  for bdf in "$@"; do
    case $bdf in pci*) continue ;; esac
    line=$("$lspci_cmd" -vvv -s "$bdf" 2>/dev/null | grep -m1 'ACSCtl:' | sed 's/^[[:space:]]*//')
    if [ -z "$line" ]; then
      out="$out $bdf: no ACS control read (no ACS capability, or not root: lspci reads it only as root);"
    elif [[ $line == *ReqRedir+* ]] || [[ $line == *CmpltRedir+* ]]; then
      out="$out $bdf: REDIRECT ON ($line): peer traffic between GPU and NIC goes up to the root complex;"
    else
      out="$out $bdf: no redirect;"
    fi
  done
  echo "${out:- no bridge between them}"
}

iommu_facts() {
  local groups cmdline words
  groups=$(ls "$sys/kernel/iommu_groups" 2>/dev/null | wc -l)
  cmdline=$(cat "$proc/cmdline" 2>/dev/null)
  words=$(tr ' ' '\n' <<<"$cmdline" | grep -E '^(intel_iommu|amd_iommu|iommu|iommu\.passthrough|iommu\.strict)=' | paste -sd ' ' -)
  if [ "$groups" -eq 0 ]; then
    echo "- IOMMU: off (no IOMMU groups); kernel command line: ${words:-no iommu options}"
    return
  fi
  local types="" f dev
  for dev in $(gpu_functions) ${nic_bdfs[@]+"${nic_bdfs[@]}"}; do
    f="$sys/bus/pci/devices/$dev/iommu_group/type"
    types="$types $dev: $(cat "$f" 2>/dev/null || echo '?');"
  done
  local verdict="passthrough (identity): fine for GPUDirect"
  case $types in
    *DMA*) verdict="TRANSLATED (DMA): GPUDirect peer traffic and the doorbell mapping go through IOMMU"
           verdict="$verdict translation; NVIDIA recommends iommu=pt or the IOMMU off for GPUDirect RDMA" ;;
  esac
  echo "- IOMMU: on ($groups groups), $verdict; per device:$types kernel command line: ${words:-no iommu options}"
}

nic_facts() {
  local d p
  for d in ${mlx5_devices[@]+"${mlx5_devices[@]}"}; do
    echo "- NIC $d ($(nic_function "$d")): $(cat "$sysfs_ib/$d/hca_type" 2>/dev/null), firmware" \
         "$(cat "$sysfs_ib/$d/fw_ver" 2>/dev/null || echo '?'), PSID $(cat "$sysfs_ib/$d/board_id" 2>/dev/null || echo '?')"
    for p in "$sysfs_ib/$d"/ports/*; do
      [ -e "$p" ] || continue
      local layer state line
      layer=$(cat "$p/link_layer" 2>/dev/null)
      state=$(sed 's/^[0-9]*: //' "$p/state" 2>/dev/null)
      line="  - port ${p##*/}: $state, $layer, $(cat "$p/rate" 2>/dev/null)"
      if [ "$layer" = InfiniBand ]; then
        line="$line, LID $(cat "$p/lid" 2>/dev/null), SM LID $(cat "$p/sm_lid" 2>/dev/null)"
        case $(cat "$p/lid" 2>/dev/null) in 0|0x0) line="$line (LID 0: no subnet manager has configured the port)" ;; esac
      else
        local i gid type ndev gids="" n=0
        for ((i = 0; i < 16 && n < 4; i++)); do
          gid=$(cat "$p/gids/$i" 2>/dev/null) || break
          case $gid in 0000:0000:0000:0000:0000:0000:0000:0000|"") continue ;; esac
          type=$(cat "$p/gid_attrs/types/$i" 2>/dev/null)
          ndev=$(cat "$p/gid_attrs/ndevs/$i" 2>/dev/null)
          gids="$gids [$i] $gid ${type:-?} ${ndev:-?};"
          n=$((n + 1))
        done
        line="$line; GIDs:${gids:- none}"
        ndev=$(cat "$p/gid_attrs/ndevs/0" 2>/dev/null)
        if [ -n "$ndev" ]; then
          local ecn
          ecn=$(cat "$sys/class/net/$ndev/ecn/roce_np/enable/"* 2>/dev/null | paste -sd '' -)
          line="$line netdev $ndev MTU $(cat "$sys/class/net/$ndev/mtu" 2>/dev/null || echo '?'), ECN (roce_np, priorities 0-7) ${ecn:-unknown}"
          if command -v mlnx_qos >/dev/null 2>&1; then
            line="$line, PFC $(mlnx_qos -i "$ndev" 2>/dev/null | grep -m1 -i 'enabled' | tr -s ' ')"
          fi
        fi
      fi
      echo "$line"
    done
  done
}

machine_facts() {
  facts_tmp=$(mktemp -d "${TMPDIR:-/tmp}/connectx-facts.XXXXXX")
  nic_bdfs=()
  local d g
  for d in ${mlx5_devices[@]+"${mlx5_devices[@]}"}; do nic_bdfs+=("$(nic_function "$d")"); done
  echo "- kernel: $(uname -sr); CPU: $(uname -m)"
  iommu_facts
  nic_facts
  for g in $(gpu_functions); do
    for d in ${mlx5_devices[@]+"${mlx5_devices[@]}"}; do
      local n path
      n=$(nic_function "$d")
      : >"$facts_tmp/between"
      path=$(pcie_path "$g" "$n")
      echo "- GPU $g -> NIC $d ($n): $path"
      case $path in
        PIX*) echo "  - ACS on the bridges between:$(acs_of $(cat "$facts_tmp/between"))" ;;
        *) echo "  - ACS: moot, the path runs through the root complex anyway" ;;
      esac
    done
  done
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- nvidia-smi topo -m:"
    nvidia-smi topo -m 2>/dev/null | sed 's/^/    /'
  fi
  rm -rf "$facts_tmp"
}

find_devices() {
  mlx5_devices=()
  other_devices=()
  local d
  if [ -d "$sysfs_ib" ]; then
    for d in "$sysfs_ib"/*; do
      [ -e "$d" ] || continue
      case ${d##*/} in
        mlx5_*) mlx5_devices+=("${d##*/}") ;;
        *) other_devices+=("${d##*/}") ;;
      esac
    done
  fi
}

find_devices
case $mode in
  explain) likely_cause "$explain_text"; exit 0 ;;
  facts) machine_facts; exit 0 ;;
esac

# ---- 1. What the machine has. Each missing piece is one line in $missing; nothing runs if there is any.
missing=()

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
if [ -e "$sys/module/nvidia_peermem" ] || [ -e "$sys/kernel/mm/memory_peers/nvidia-peermem" ]; then
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
  echo "- java: $("$java_cmd" -version 2>&1 | head -1)"
  echo "- GPUs ($gpu_count): $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>/dev/null | paste -sd ';' -)"
  echo "- GPUDirect: ${peermem:-nvidia_peermem not loaded}; ${dmabuf:-dma-buf unavailable: $dmabuf_why}"
  echo "- PeerMappingOverride: $(grep -o 'PeerMappingOverride=[^;"]*' "$proc/driver/nvidia/params" 2>/dev/null || echo 'not set (or /proc/driver/nvidia/params unreadable)')"
  machine_facts
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
