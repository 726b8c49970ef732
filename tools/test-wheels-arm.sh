#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install qrt's ARM wheels into the target's own Debian CPython under qemu-user (no binfmt) and
# run the test suite once per emulated CPU model.
#
#   tools/test-wheels-arm.sh [--no-apt] ARCH...          ARCH: aarch64 | armv7l
#
# Env: QEMU_CPUS_aarch64 (default "cortex-a72 cortex-a76": Pi 4, no dot product; Pi 5, dot
# product), QEMU_CPUS_armv7l (default "cortex-a7 cortex-a15"), PYTEST_ARGS (default: none; the
# project's addopts already deselect `slow`), TESTS (default <repo>/tests), PYVER, OUT, WORK,
# QRT_ARM_CACHE as for tools/build-wheels-arm.sh. The tests see QRT_UNDER_QEMU=1 and
# QRT_QEMU_CPU=<model>; tests/_qemu.py (loaded with -p) turns sys.executable into a launcher
# that starts the guest interpreter again, so subprocess-based tests run too.
# A summary (import time, `python -m qrt demo`, selected kernels, pass/skip counts) goes to
# $WORK/summary-<pytag>-<arches>.txt.
set -euo pipefail
. "$(dirname "$0")/cross/common.sh"

APT=1 ARCHES=()
for a in "$@"; do
  case $a in
    --no-apt) APT=0 ;;
    -h|--help) sed -n '3,16p' "$0"; exit 0 ;;
    *) arch_vars "$a"; ARCHES+=("$a") ;;
  esac
done
[ ${#ARCHES[@]} -gt 0 ] || die "usage: $0 [--no-apt] aarch64|armv7l ..."
QEMU_CPUS_aarch64=${QEMU_CPUS_aarch64:-cortex-a72 cortex-a76}
QEMU_CPUS_armv7l=${QEMU_CPUS_armv7l:-cortex-a7 cortex-a15}
TESTS=${TESTS:-$ROOT/tests}
read -r -a PYTEST_EXTRA <<<"${PYTEST_ARGS:-}"
SUMMARY=$WORK/summary-$PYTAG-$(IFS=-; echo "${ARCHES[*]}").txt   # one per call: .ci/arm.sh runs calls at once
IMPORT_TIMER='import time
t = time.perf_counter()
import qrt
t = time.perf_counter() - t
import numpy, platform
print(f"import qrt: {1e3 * t:.0f} ms in-process; numpy {numpy.__version__}; "
      f"machine {platform.machine()}")'
: > "$SUMMARY"

[ $APT = 1 ] && host_packages "${ARCHES[@]}"
host_python
fail=0

for ARCH in "${ARCHES[@]}"; do
  sysroot "$ARCH"
  target_site "$ARCH"
  whl=$(ls "$OUT"/qrt-*-"$PYTAG"-"$PYTAG"-*manylinux*_"$ARCH".whl 2>/dev/null | head -n1) \
    || true
  [ -n "$whl" ] || die "no $PYTAG $ARCH wheel in $OUT (run tools/build-wheels-arm.sh $ARCH first)"
  W=$WORK/$PYTAG-$ARCH
  INST=$W/inst
  rm -rf "$INST"
  # The host pip checks the wheel's tags against what the target (Debian glibc 2.36) accepts.
  # pip matches each --platform exactly, so name every glibc from 2.17 to 2.36.
  plat=(--platform "manylinux2014_$ARCH")
  for n in $(seq 17 36); do plat+=(--platform "manylinux_2_${n}_$ARCH"); done
  "$HOST_PY" -m pip install -q --target "$INST" --no-deps --only-binary=:all: "${plat[@]}" \
    --python-version "$PYVER" --implementation cp --abi "$PYTAG" "$whl"
  precompile "$INST"

  # Launcher for the guest interpreter: tests/_qemu.py makes it sys.executable (P11).
  cat > "$W/guest-python" <<WRAP
#!/bin/sh
exec "$QEMU_BIN" -L "$SR" "$SR/usr/bin/python$PYVER" -s "\$@"
WRAP
  chmod +x "$W/guest-python"
  export PYTHONPATH=$INST:$TSITE:$ROOT/tests QRT_UNDER_QEMU=1 QRT_QEMU_PYTHON=$W/guest-python
  export PYTHONDONTWRITEBYTECODE=1
  cpus_var=QEMU_CPUS_$ARCH
  for cpu in ${!cpus_var}; do
    export QRT_QEMU_CPU=$cpu
    log "$PYTAG $ARCH -cpu $cpu: $(basename "$whl")"
    cd "$W"   # never the source tree: an unbuilt qrt/ must not shadow the installed one
    {
      echo "### $PYTAG $ARCH  qemu -cpu $cpu  ($(basename "$whl"), $(stat -c %s "$whl") bytes)"
      t0=$EPOCHREALTIME
      guest_python "$ARCH" "$cpu" -c "$IMPORT_TIMER"
      awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "process start + import qrt, wall: %.2f s\n", b - a }'
      guest_python "$ARCH" "$cpu" -c 'import qrt._cpu as c; print("features:", c.features()); print("selected:", c.selected())' || true
      echo '$ python -m qrt demo'
      guest_python "$ARCH" "$cpu" -m qrt demo
    } 2>&1 | tee -a "$SUMMARY"
    t0=$SECONDS
    set +e
    # a basetemp of its own: .ci/arm.sh runs the CPythons' pipelines at once
    guest_python "$ARCH" "$cpu" -m pytest -q -p _qemu -p no:cacheprovider -rs \
      --basetemp "$W/pytest-tmp-$cpu" \
      "$TESTS" ${PYTEST_EXTRA[@]+"${PYTEST_EXTRA[@]}"} > "$W/pytest-$cpu.log" 2>&1
    rc=$?
    set -e
    tail -n 25 "$W/pytest-$cpu.log"
    res=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error|skipped)' "$W/pytest-$cpu.log" | tail -n1 | tr -d '=')
    echo "pytest $PYTAG $ARCH $cpu: rc=$rc ${res:-no summary} ($((SECONDS - t0)) s wall)" | tee -a "$SUMMARY"
    [ $rc = 0 ] || fail=1
  done
  cd "$ROOT"
done
log "summary: $SUMMARY"
exit $fail
