#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Executed-instruction counts of the conv1d kernels under qemu-user (the ARM speed proxy in
# docs/raspberry-pi.md): tests/c/conv1d_dw_harness.c built freestanding for aarch64 and armv7,
# run once per (shape, variant) with tools/qemu_insn_count.c loaded as a TCG plugin; the
# harness's setup-only run of the same shape is subtracted.  Needs gcc, aarch64-linux-gnu-gcc,
# arm-linux-gnueabihf-gcc, qemu-aarch64 and qemu-arm (Debian: gcc-aarch64-linux-gnu,
# gcc-arm-linux-gnueabihf, qemu-user).
#
#   tools/count-insns-arm.sh        # depthwise and audio-frontend: ref / neon (/ neondot)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#define fmaf __builtin_fmaf\n#define rintf __builtin_rintf\n' > "$work/math.h"
gcc -shared -fPIC -O2 -o "$work/libinsn.so" "$root/tools/qemu_insn_count.c"
F=(-std=c11 -O3 -ffp-contract=off -ffreestanding -nostdlib -static -fno-stack-protector
   -I "$root/include" -I "$work")
aarch64-linux-gnu-gcc "${F[@]}" "$root/tests/c/conv1d_dw_harness.c" -o "$work/h64" -lgcc
arm-linux-gnueabihf-gcc "${F[@]}" "$root/tests/c/conv1d_dw_harness.c" -o "$work/h32" -lgcc
count() { # qemu-command mode exe -> executed instructions
    python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<IIII',$2,0,1,0))" |
        $1 -plugin "$work/libinsn.so" "$3" 2>&1 >/dev/null | awk '/^insns/ {print $2}'
}
report() { # label qemu-command exe variants...
    local label=$1 q=$2 exe=$3
    shift 3
    for shape in 0 1; do
        local setup
        setup=$(count "$q" $((shape * 10 + 9)) "$exe") # the shape's setup alone
        local name=depthwise
        [ "$shape" = 1 ] && name=audio-frontend
        local line="$label $name:"
        for v in "$@"; do
            local n
            n=$(count "$q" $((shape * 10 + v)) "$exe")
            line+=" $(case $v in 1) echo ref;; 2) echo neon;; 3) echo neondot;; esac)=$((n - setup))"
        done
        echo "$line"
    done
}
report "aarch64 cortex-a76" "qemu-aarch64 -cpu cortex-a76" "$work/h64" 1 2 3
report "armv7 cortex-a7" "qemu-arm -cpu cortex-a7" "$work/h32" 1 2
