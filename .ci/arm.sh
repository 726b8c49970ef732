#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI step: cross-build qrt's Raspberry Pi wheels (aarch64, armv7l) on this x86-64 Debian host and
# run the test suite on them under qemu-user, on two CPU models per architecture for the first
# CPython (one per architecture, cortex-a76 / cortex-a7, for the later ones, to keep CI short):
#   aarch64: cortex-a72 (Pi 4, no dot product) and cortex-a76 (Pi 5, dot product)
#   armv7l:  cortex-a7 (Pi 2) and cortex-a15
# Called from .ci/run (needs root for apt-get the first time on a machine). Everything that is
# downloaded (Debian cross toolchains via apt, target sysroots unpacked from Debian arm64/armhf
# debs, target numpy/pytest wheels from PyPI, the build venv) is cached in $QRT_ARM_CACHE and
# reused by later runs on the same machine; only Debian and PyPI are contacted.
#
# Env: QRT_ARM_PYVERS  target CPython versions (default "3.11 3.13": bookworm and trixie)
#      QRT_ARM_ARCHES  (default "aarch64 armv7l")
#      QRT_ARM_CACHE   (default /var/cache/qrt-ci/arm when writable, else ~/.cache/qrt-arm)
#      QRT_ARM_TIMEOUT seconds for the whole step (default 1500)
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
DEADLINE=$((SECONDS + ${QRT_ARM_TIMEOUT:-1500}))

t0=$SECONDS
echo "== arm: cache $QRT_ARM_CACHE, CPython $PYVERS, $ARCHES"
first=1
for v in $PYVERS; do
  if [ $first = 0 ]; then
    # Later CPythons: one CPU model per architecture (the first CPython ran all four).  cortex-a76
    # runs both aarch64 variants (neondot, and neon forced by the tests); armv7 has one variant.
    export QEMU_CPUS_aarch64=${QRT_ARM_LATER_CPUS_aarch64:-cortex-a76}
    export QEMU_CPUS_armv7l=${QRT_ARM_LATER_CPUS_armv7l:-cortex-a7}
  fi
  first=0
  left=$((DEADLINE - SECONDS)); [ $left -gt 60 ] || { echo "arm: out of time before $v" >&2; exit 1; }
  # shellcheck disable=SC2086
  PYVER=$v timeout "$left" tools/build-wheels-arm.sh $ARCHES
  left=$((DEADLINE - SECONDS)); [ $left -gt 60 ] || { echo "arm: out of time before $v tests" >&2; exit 1; }
  # shellcheck disable=SC2086
  PYVER=$v timeout "$left" tools/test-wheels-arm.sh --no-apt $ARCHES
done
echo "== arm: wheels in wheelhouse/:"
ls -l wheelhouse/*.whl
cat build/arm/summary-cp*.txt | grep -E '^(###|pytest|import|selected)' || true
echo "== arm: done in $((SECONDS - t0)) s"
