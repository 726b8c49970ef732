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
# One pipeline per architecture (for each CPython: build the wheel, then run the suite under
# each CPU model), both at once: qemu-user runs one guest thread per process, so on a 2-core
# host the two pipelines (aarch64: three runs, armv7l: two slower ones) take ~60 % of the time
# one after the other did. Everything a pipeline writes is its own (build dirs and wheels per
# CPython and architecture, sysroots and target site-packages per Debian suite and
# architecture, a summary per call, a pytest basetemp per run); its log goes to
# build/arm/pipeline-<arch>.log, printed when it is done.
# CPU models: the first CPython runs cortex-a72 and cortex-a76 (aarch64: without and with the
# dot product) and cortex-a7 (armv7: one NEON variant; cortex-a15 runs the same code, add it
# with QRT_ARM_CPUS_armv7l="cortex-a7 cortex-a15"); later CPythons one model per architecture:
# cortex-a76 runs both aarch64 variants (neondot, and neon forced by the tests).
pipeline() {  # pipeline ARCH seconds-left
  local a=$1 end=$((SECONDS + $2)) first=1 v left
  for v in $PYVERS; do
    if [ $first = 1 ]; then
      export QEMU_CPUS_aarch64=${QRT_ARM_CPUS_aarch64:-cortex-a72 cortex-a76}
      export QEMU_CPUS_armv7l=${QRT_ARM_CPUS_armv7l:-cortex-a7}
    else
      export QEMU_CPUS_aarch64=${QRT_ARM_LATER_CPUS_aarch64:-cortex-a76}
      export QEMU_CPUS_armv7l=${QRT_ARM_LATER_CPUS_armv7l:-cortex-a7}
    fi
    first=0
    left=$((end - SECONDS)); [ $left -gt 60 ] || { echo "arm: out of time before $v $a" >&2; return 1; }
    PYVER=$v timeout "$left" tools/build-wheels-arm.sh --no-apt "$a" || return 1
    left=$((end - SECONDS)); [ $left -gt 60 ] || { echo "arm: out of time before $v $a tests" >&2; return 1; }
    PYVER=$v timeout "$left" tools/test-wheels-arm.sh --no-apt "$a" || return 1
  done
}
mkdir -p build/arm
pids=() logs=()
for a in $ARCHES; do
  lf=build/arm/pipeline-$a.log
  pipeline "$a" $((DEADLINE - SECONDS)) > "$lf" 2>&1 &
  pids+=($!) logs+=("$lf")
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
