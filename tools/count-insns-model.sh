#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Executed-instruction counts of one MobileNetV2 inference (224x224, int8, batch 1, one thread)
# under qemu-user: qrt's cross-built aarch64 / armv7l wheel vs LiteRT + XNNPACK (ai-edge-litert's
# aarch64 wheel from PyPI), both in the target's Debian CPython 3.11 (bookworm sysroot, as
# tools/test-wheels-arm.sh runs it) with numpy, counted by tools/qemu_insn_count.c. The ARM speed
# proxy of docs/raspberry-pi.md: instructions, not cycles (no caches, memory or pipelines).
#
#   tools/count-insns-model.sh [--no-build] [--no-armv7] [--keep-models]
#
#   --no-build     reuse the wheels in $W/wheelhouse (default: cross-build this tree's
#                  aarch64 + armv7l wheels with tools/build-wheels-arm.sh, ~5-8 min each here)
#   --no-armv7     aarch64 only (LiteRT publishes no armv7l wheel: armv7 is qrt alone)
#   --keep-models  reuse $W/models/mobilenet_v2.bin (default: export it again, so exporter
#                  changes count); the .tflite is built once and kept
# Env: PY    x86-64 python with torch, torchvision and this tree's qrt + qrt_export installed
#            (default <repo>/.venv/bin/python; reinstall qrt there after merging)
#      TFPY  python of a separate venv with tensorflow-cpu (default /work/tfvenv/bin/python)
#      HIST  1: also write $W/hist-ARCH-CPU-RUNTIME.txt (per translation block, inference 1)
#            and the guest's maps beside it, for tools/insn_hist.py
#      W     work dir (default <repo>/build/insns); QRT_ARM_CACHE as for .ci/arm.sh (the
#            sysroots and target numpy are taken from there, read-only apart from what
#            tools/cross/common.sh itself maintains)
# Each run is one guest process that marks its phases (import, load, inference 1, 2, 3); the
# count at "model loaded" is the setup-only count that is subtracted. Per inference at N=1:
# inference 1; at N=3: (inferences 1..3) / 3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=1 ARMV7=1 KEEP=0
for a in "$@"; do
  case $a in
    --no-build) BUILD=0 ;;
    --no-armv7) ARMV7=0 ;;
    --keep-models) KEEP=1 ;;
    -h|--help) sed -n '3,25p' "$0"; exit 0 ;;
    *) echo "unknown argument $a" >&2; exit 2 ;;
  esac
done
W=${W:-$ROOT/build/insns}
PY=${PY:-$ROOT/.venv/bin/python}
TFPY=${TFPY:-/work/tfvenv/bin/python}
if [ -z "${QRT_ARM_CACHE:-}" ]; then
  if [ -w /var/cache/qrt-ci/arm ]; then QRT_ARM_CACHE=/var/cache/qrt-ci/arm
  else QRT_ARM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/qrt-arm; fi
fi
export QRT_ARM_CACHE PYVER=3.11 WORK=$W/build OUT=$W/wheelhouse
mkdir -p "$W"
# shellcheck source=tools/cross/common.sh
. "$ROOT/tools/cross/common.sh"
host_python
t_all=$SECONDS
ARCHES=(aarch64)
[ $ARMV7 = 1 ] && ARCHES+=(armv7l)

gcc -shared -fPIC -O2 -o "$W/libinsn.so" "$ROOT/tools/qemu_insn_count.c"

if [ $BUILD = 1 ]; then
  log "cross-build qrt wheels: ${ARCHES[*]}"
  "$ROOT/tools/build-wheels-arm.sh" --no-apt "${ARCHES[@]}" > "$W/build-wheels.log" 2>&1 \
    || { tail -30 "$W/build-wheels.log" >&2; die "wheel build failed (log: $W/build-wheels.log)"; }
fi

M=$W/models
mkdir -p "$M"
if [ $KEEP = 0 ] || [ ! -e "$M/mobilenet_v2.bin" ]; then
  log "export qrt MobileNetV2 ($PY)"
  ( cd /tmp && "$PY" "$ROOT/tools/count_insns_model.py" export "$M" )
fi
if [ ! -e "$M/mobilenet_v2_int8.tflite" ]; then
  log "build the int8 .tflite ($TFPY)"
  TF_CPP_MIN_LOG_LEVEL=3 "$TFPY" "$ROOT/benchmarks/vision_peers/make_tflite.py" "$M" mobilenet_v2 \
    > "$W/make_tflite.log" 2>&1 || { tail -20 "$W/make_tflite.log" >&2; die "make_tflite failed"; }
fi

# Target site dirs: qrt's wheel (numpy from the CI's target site), ai-edge-litert + its deps.
pipt() { # DIR ARCH ARGS...: pip install --target for the target CPython
  local d=$1 arch=$2 plat n
  shift 2
  plat=(--platform "manylinux2014_$arch")
  for n in $(seq 17 36); do plat+=(--platform "manylinux_2_${n}_$arch"); done
  rm -rf "$d"
  "$HOST_PY" -m pip install -q --target "$d" --only-binary=:all: "${plat[@]}" \
    --python-version "$PYVER" --implementation cp --abi "$PYTAG" "$@"
  precompile "$d"
}
for arch in "${ARCHES[@]}"; do
  sysroot "$arch"
  target_site "$arch"
  whl=$(ls "$OUT"/qrt-*-"$PYTAG"-"$PYTAG"-*manylinux*_"$arch".whl | head -n1)
  pipt "$W/site-qrt-$arch" "$arch" --no-deps "$whl"
done
if [ ! -e "$W/site-litert/.complete" ]; then
  log "ai-edge-litert aarch64 wheel + deps from PyPI"
  pipt "$W/site-litert" aarch64 ai-edge-litert
  touch "$W/site-litert/.complete"
fi

# qemu -L prefix per CPU model: the sysroot (symlinked) plus a /proc/cpuinfo of that core.
# qemu-user 7.2 passes the x86-64 host's /proc/cpuinfo through, and pytorch/cpuinfo (used by
# XNNPACK) segfaults on it; the prefix wins over the host for every absolute path it has.
prefix() { # CPU -> sets PFX
  local cpu=$1 i feat impl var part rev arch sr
  case $cpu in
    cortex-a72) sr=arm64 arch=8 var=0x0 part=0xd08 rev=3   # Pi 4 (BCM2711)
                feat="fp asimd evtstrm crc32 cpuid" ;;
    cortex-a76) sr=arm64 arch=8 var=0x4 part=0xd0b rev=1   # Pi 5 (BCM2712)
                feat="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp" ;;
    cortex-a7)  sr=armhf arch=7 var=0x0 part=0xc07 rev=5   # Pi 2 (BCM2836)
                feat="half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm" ;;
  esac
  impl=0x41
  PFX=$W/prefix-$cpu
  rm -rf "$PFX"; mkdir -p "$PFX/proc"
  for i in "$QRT_ARM_CACHE/sysroot-bookworm-$sr"/*; do ln -s "$i" "$PFX/$(basename "$i")"; done
  for i in $(seq 0 $(($(getconf _NPROCESSORS_CONF) - 1))); do
    printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: %s\nCPU implementer\t: %s\n' \
      "$i" "$feat" "$impl"
    printf 'CPU architecture: %s\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %s\n\n' \
      "$arch" "$var" "$part" "$rev"
  done > "$PFX/proc/cpuinfo"
}

RAW=()
run() { # ARCH CPU RUNTIME MODEL SITE...
  local arch=$1 cpu=$2 rt=$3 model=$4 nr=64 extra=,dot=1 t0 raw
  shift 4
  arch_vars "$arch"
  [ "$arch" = armv7l ] && nr=4 extra=
  prefix "$cpu"
  log "$arch -cpu $cpu: $rt"
  t0=$SECONDS
  raw=$W/raw-$arch-$cpu-$rt.txt
  if [ "${HIST:-0}" = 1 ]; then # per-block counts of inference 1 (tools/insn_hist.py)
    extra=$extra,hist=$W/hist-$arch-$cpu-$rt.txt
    export QRT_INSN_MAPS=$W/maps-$arch-$cpu-$rt.txt
  fi
  (cd "$W" && env -u PYTHONHOME PYTHONPATH="$(IFS=:; echo "$*")" PYTHONDONTWRITEBYTECODE=1 \
    PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=3 \
    "$QEMU_BIN" -cpu "$cpu" -plugin "$W/libinsn.so,mark=$nr$extra" -L "$PFX" \
    "$SR/usr/bin/python$PYVER" -s "$ROOT/tools/count_insns_model.py" run "$rt" "$model" "$M" 3) \
    > "$raw" 2>&1 || { cat "$raw" >&2; die "$arch $cpu $rt failed"; }
  echo "run $arch $cpu $rt $((SECONDS - t0))" >> "$raw"
  grep -v '^mark\|^insns\|^dot\|^INFO: Created\|^ops:\|^run ' "$raw" | sed 's/^/   /'
  RAW+=("$raw")
}
LIT=$W/site-litert
for cpu in cortex-a72 cortex-a76; do
  run aarch64 "$cpu" qrt "$M/mobilenet_v2.bin" "$W/site-qrt-aarch64" "$QRT_ARM_CACHE/tsite-bookworm-aarch64"
  run aarch64 "$cpu" litert "$M/mobilenet_v2_int8.tflite" "$LIT"
done
[ $ARMV7 = 1 ] && run armv7l cortex-a7 qrt "$M/mobilenet_v2.bin" "$W/site-qrt-armv7l"

"$HOST_PY" "$ROOT/tools/count_insns_model.py" report "${RAW[@]}" | tee "$W/results.md"
log "done in $((SECONDS - t_all)) s (table: $W/results.md)"
