#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI step: cross-build qrt's Raspberry Pi wheels (aarch64, armv7l) on this x86-64 Debian host and
# run the test suite on them under qemu-user (CPU models below: five runs in all, to keep CI
# short):
#   aarch64: cortex-a72 (Pi 4, no dot product) and cortex-a76 (Pi 5, dot product)
#   armv7l:  cortex-a7 (Pi 2)
# Called from .ci/run (needs root for apt-get the first time on a machine). Everything that is
# downloaded (Debian cross toolchains via apt, target sysroots unpacked from Debian arm64/armhf
# debs, target numpy/pytest wheels from PyPI, the build venv) is cached in $QRT_ARM_CACHE and
# reused by later runs on the same machine; only Debian and PyPI are contacted.
#
# Env: QRT_ARM_PYVERS  target CPython versions (default "3.11 3.13": bookworm and trixie)
#      QRT_ARM_ARCHES  (default "aarch64 armv7l")
#      QRT_ARM_CACHE   (default /var/cache/qrt-ci/arm when writable, else ~/.cache/qrt-arm)
#      QRT_ARM_TIMEOUT seconds for the whole step (default 2100: on the 2026-12-04 Zen 3 host
#                      the step took 1491-1716 s with the pipelines one after the other)
#      QRT_ARM_CPUS_aarch64 / _armv7l  qemu CPU models for the first CPython
#      QRT_ARM_LATER_CPUS_aarch64 / _armv7l  qemu CPU models for the later CPythons
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${QRT_ARM_CACHE:-}" ]; then
  if mkdir -p /var/cache/qrt-ci/arm 2>/dev/null && [ -w /var/cache/qrt-ci/arm ]; then
    QRT_ARM_CACHE=/var/cache/qrt-ci/arm
  else
    QRT_ARM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/qrt-arm
  fi
fi
export QRT_ARM_CACHE
PYVERS=${QRT_ARM_PYVERS:-3.11 3.13}
ARCHES=${QRT_ARM_ARCHES:-aarch64 armv7l}
DEADLINE=$((SECONDS + ${QRT_ARM_TIMEOUT:-2100}))

t0=$SECONDS
echo "== arm: cache $QRT_ARM_CACHE, CPython $PYVERS, $ARCHES"
# Debian's cross GCC and qemu-user once, before the pipelines (they run with --no-apt).
# shellcheck disable=SC2086
( . tools/cross/common.sh; host_packages $ARCHES )
# One pipeline per CPython (build both wheels, then run the suite under each CPU model), all at
# once: qemu-user runs one guest thread per process, so on a 2-core host two pipelines take
# ~60 % of the time one after the other did. Everything a pipeline writes is its own (build
# dirs, sysroot and target site-packages per Debian suite, wheels and summary per CPython tag,
# a pytest basetemp per run); its log goes to build/arm/pipeline-<X.Y>.log, printed when done.
# CPU models: the first CPython runs cortex-a72 and cortex-a76 (aarch64: without and with the
# dot product) and cortex-a7 (armv7: one NEON variant; cortex-a15 runs the same code, add it
# with QRT_ARM_CPUS_armv7l="cortex-a7 cortex-a15"); later CPythons one model per architecture:
# cortex-a76 runs both aarch64 variants (neondot, and neon forced by the tests).
pipeline() {  # pipeline X.Y first(1|0) seconds-left
  local v=$1
  if [ "$2" = 1 ]; then
    export QEMU_CPUS_aarch64=${QRT_ARM_CPUS_aarch64:-cortex-a72 cortex-a76}
    export QEMU_CPUS_armv7l=${QRT_ARM_CPUS_armv7l:-cortex-a7}
  else
    export QEMU_CPUS_aarch64=${QRT_ARM_LATER_CPUS_aarch64:-cortex-a76}
    export QEMU_CPUS_armv7l=${QRT_ARM_LATER_CPUS_armv7l:-cortex-a7}
  fi
  local end=$((SECONDS + $3))
  # shellcheck disable=SC2086
  PYVER=$v timeout "$3" tools/build-wheels-arm.sh --no-apt $ARCHES || return 1
  local left=$((end - SECONDS)); [ $left -gt 60 ] || { echo "arm: out of time before $v tests" >&2; return 1; }
  # shellcheck disable=SC2086
  PYVER=$v timeout "$left" tools/test-wheels-arm.sh --no-apt $ARCHES
}
mkdir -p build/arm
first=1 pids=() logs=()
for v in $PYVERS; do
  lf=build/arm/pipeline-$v.log
  pipeline "$v" $first $((DEADLINE - SECONDS)) > "$lf" 2>&1 &
  pids+=($!) logs+=("$lf")
  first=0
done
fail=0
for i in "${!pids[@]}"; do
  rc=0; wait "${pids[$i]}" || rc=$?
  echo "== arm: ${logs[$i]} (rc=$rc)"
  cat "${logs[$i]}"
  [ $rc = 0 ] || fail=1
done
echo "== arm: wheels in wheelhouse/:"
ls -l wheelhouse/*.whl || true
cat build/arm/summary-cp*.txt | grep -E '^(###|pytest|import|selected)' || true
echo "== arm: done in $((SECONDS - t0)) s"
exit $fail
