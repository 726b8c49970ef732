# SPDX-License-Identifier: Apache-2.0
# Shared by tools/build-wheels-arm.sh and tools/test-wheels-arm.sh (sourced, not run).
# Recipe and pitfalls (P1..P19): docs/raspberry-pi.md and the shared arm-cross notes.
#
# Environment:
#   PYVER          target CPython X.Y (default 3.11; 3.13 selects Debian trixie)
#   DEBIAN_SUITE   Debian release the target sysroot comes from (bookworm for 3.11, trixie for 3.13)
#   QRT_ARM_CACHE  downloads, sysroots, venvs, reused across runs (default ~/.cache/qrt-arm)
#   WORK           scratch for build dirs and installs (default <repo>/build/arm)
#   OUT            where repaired wheels go (default <repo>/wheelhouse)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PYVER=${PYVER:-3.11}
case $PYVER in
  3.11) DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm} ;;
  3.13) DEBIAN_SUITE=${DEBIAN_SUITE:-trixie} ;;
  *) echo "PYVER=$PYVER: only 3.11 (bookworm) and 3.13 (trixie) have a Debian target interpreter" >&2
     exit 2 ;;
esac
PYTAG=cp${PYVER/./}
QRT_ARM_CACHE=${QRT_ARM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qrt-arm}
WORK=${WORK:-$ROOT/build/arm}
OUT=${OUT:-$ROOT/wheelhouse}
mkdir -p "$QRT_ARM_CACHE" "$WORK" "$OUT"
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$QRT_ARM_CACHE/pip}

log() { printf '== [%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# arch_vars ARCH: Debian arch, GNU triplet, qemu binary, meson cpu family, ELF machine.
arch_vars() {
  case $1 in
    aarch64) DEB_ARCH=arm64 TRIPLET=aarch64-linux-gnu QEMU=qemu-aarch64 ELF_MACHINE=AArch64
             ELF_CLASS=ELF64 ;;
    armv7l)  DEB_ARCH=armhf TRIPLET=arm-linux-gnueabihf QEMU=qemu-arm ELF_MACHINE=ARM
             ELF_CLASS=ELF32 ;;
    *) die "unknown ARCH '$1' (use aarch64 or armv7l)" ;;
  esac
  SR=$QRT_ARM_CACHE/sysroot-$DEBIAN_SUITE-$DEB_ARCH
  TSITE=$QRT_ARM_CACHE/tsite-$DEBIAN_SUITE-$1
  QEMU_BIN=$(command -v "$QEMU" || command -v "$QEMU-static" || true)
}

# host_packages ARCH...: Debian's cross GCC + binutils and qemu-user (apt, root), if missing.
host_packages() {
  local pkgs=() a
  for a in "$@"; do
    arch_vars "$a"
    command -v "$TRIPLET-gcc" >/dev/null || pkgs+=("gcc-$TRIPLET" "binutils-$TRIPLET")
  done
  command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null || pkgs+=(qemu-user)
  command -v pkg-config >/dev/null || pkgs+=(pkg-config)
  [ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || pkgs+=(debian-archive-keyring)
  [ ${#pkgs[@]} -eq 0 ] && return 0
  log "apt-get install ${pkgs[*]}"
  [ "$(id -u)" = 0 ] || die "need root to apt-get install ${pkgs[*]} (or install them first)"
  apt-get update -q >/dev/null || apt-get update -q >/dev/null || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
}

# sysroot ARCH: the target's Debian python (runnable under qemu -L) + headers + .pc files,
# unpacked from debs fetched with an isolated apt root (the host's dpkg is never touched).
sysroot() {
  arch_vars "$1"
  [ -e "$SR/.complete" ] && return 0
  log "sysroot $DEBIAN_SUITE/$DEB_ARCH -> $SR"
  local D=$QRT_ARM_CACHE/apt-$DEBIAN_SUITE-$DEB_ARCH KR=/usr/share/keyrings/debian-archive-keyring.gpg
  mkdir -p "$D/state/lists/partial" "$D/cache/archives/partial" "$D/etc/sources.list.d" \
           "$D/etc/preferences.d"
  : > "$D/state/status"   # empty dpkg status: apt resolves the full dependency closure
  cat > "$D/sources.list" <<SRC
deb [arch=$DEB_ARCH signed-by=$KR] http://deb.debian.org/debian $DEBIAN_SUITE main
deb [arch=$DEB_ARCH signed-by=$KR] http://deb.debian.org/debian $DEBIAN_SUITE-updates main
deb [arch=$DEB_ARCH signed-by=$KR] http://deb.debian.org/debian-security $DEBIAN_SUITE-security main
SRC
  cat > "$D/apt.conf" <<CONF
APT::Architecture "$DEB_ARCH";
APT::Architectures { "$DEB_ARCH"; };
APT::Install-Recommends "false";
APT::Sandbox::User "root";
Dir::State "$D/state";
Dir::State::status "$D/state/status";
Dir::Cache "$D/cache";
Dir::Etc::SourceList "$D/sources.list";
Dir::Etc::SourceParts "$D/etc/sources.list.d";
Dir::Etc::Preferences "$D/etc/preferences";
Dir::Etc::PreferencesParts "$D/etc/preferences.d";
CONF
  local i pkgs=("python$PYVER" "libpython$PYVER-dev" libpython3-dev libstdc++6)
  # armhf: PyPI has no armv7l numpy, so the target numpy is Debian's (1.24 on bookworm).
  [ "$DEB_ARCH" = armhf ] && pkgs+=(python3-numpy)
  for i in 1 2; do   # P15: a mirror mid-sync serves a stale index now and then
    APT_CONFIG=$D/apt.conf apt-get update -q >"$D/update.log" 2>&1 && break
    log "apt-get update ($DEB_ARCH) failed, try $i: $(grep -m1 -E '^E:' "$D/update.log" || true)"
    sleep 2
  done
  APT_CONFIG=$D/apt.conf apt-get install -y -q --download-only "${pkgs[@]}" >"$D/install.log" 2>&1 \
    || { cat "$D/install.log" >&2; die "apt download for $DEB_ARCH failed"; }
  rm -rf "$SR"; mkdir -p "$SR"
  local f
  for f in "$D"/cache/archives/*.deb; do dpkg-deb -x "$f" "$SR"; done
  # P9: merged /usr (trixie) comes from base-files' maintainer scripts, which dpkg -x skips.
  for f in bin sbin lib; do [ -e "$SR/$f" ] || ln -s "usr/$f" "$SR/$f"; done
  # P19: with -L, a path missing in the sysroot falls back to the host's (x86_64) one.
  mkdir -p "$SR/usr/lib/python3/dist-packages" "$SR/usr/local/lib/python$PYVER/dist-packages"
  # P10: update-alternatives links (libblas.so.3 for Debian's numpy) are not made by dpkg -x.
  for f in "$SR/usr/lib/$TRIPLET"/{blas,lapack}/lib*.so.3; do
    [ -e "$f" ] && ln -sf "$(basename "$(dirname "$f")")/$(basename "$f")" "$SR/usr/lib/$TRIPLET/"
  done
  precompile "$SR/usr/lib/python$PYVER" "$SR/usr/lib/python3/dist-packages"
  "$QEMU_BIN" -L "$SR" "$SR/usr/bin/python$PYVER" -s -c 'import sys; print(sys.version)' >/dev/null \
    || die "the $DEB_ARCH python$PYVER does not start under $QEMU_BIN"
  touch "$SR/.complete"
}

# target_site ARCH: numpy + pytest (+ hypothesis) wheels for the target, outside the sysroot (P19).
target_site() {
  arch_vars "$1"
  [ -e "$TSITE/.complete" ] && return 0
  log "target site-packages for $1 -> $TSITE"
  local plat=(--platform "linux_$1") v pkgs=(pytest hypothesis)
  if [ "$1" = aarch64 ]; then
    # P7: pip does not expand manylinux_2_X downwards; numpy >= 2.3 is manylinux_2_28 only.
    plat+=(--platform manylinux2014_aarch64)
    for v in $(seq 36 -1 17); do plat+=(--platform "manylinux_2_${v}_aarch64"); done
    pkgs+=(numpy)
  fi
  rm -rf "$TSITE"
  "$HOST_PY" -m pip install -q --target "$TSITE" --only-binary=:all: "${plat[@]}" \
    --python-version "$PYVER" --implementation cp --abi "$PYTAG" "${pkgs[@]}"
  precompile "$TSITE"
  touch "$TSITE/.complete"
}

# host_python: any x86_64 CPython $PYVER (only used to run pip for the target dirs).
host_python() {
  HOST_PY=${PYTHON:-}
  if [ -z "$HOST_PY" ]; then   # PATH first (a pyenv shim may exist without that version active)
    local c
    for c in "$(command -v "python$PYVER" || true)" /usr/bin/"python$PYVER" \
             $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$PYVER".*/bin/"python$PYVER" 2>/dev/null | sort -V -r); do
      [ -n "$c" ] && "$c" -c '' >/dev/null 2>&1 && { HOST_PY=$c; break; }
    done
  fi
  [ -n "$HOST_PY" ] || die "need a host x86_64 python$PYVER (set PYTHON=...)"
  "$HOST_PY" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$PYVER'.split('.')))" \
    || die "$HOST_PY is not CPython $PYVER (P6: the cpXY tag comes from the build python)"
}

# precompile DIR...: byte-compile with the host CPython X.Y (same magic number as the target's).
# Debian's debs ship no .pyc (postinst makes them) and compiling the stdlib, numpy and pytest
# under emulation on every start costs seconds per process: about 3x faster startup.
precompile() {
  "$HOST_PY" -m compileall -q -j2 "$@" >/dev/null 2>&1 || true
}

# guest_python ARCH CPU ARGS...: run the target's CPython under qemu-user as CPU model CPU.
guest_python() {
  arch_vars "$1"; local cpu=$2; shift 2
  QEMU_CPU=$cpu "$QEMU_BIN" -L "$SR" "$SR/usr/bin/python$PYVER" -s "$@"
}
