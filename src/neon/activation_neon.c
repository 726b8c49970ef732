/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation_neon.c
 * @brief The NEON table lookup declared in qrt/activation.h (aarch64 only; armv7 keeps the
 *        reference, see below).
 *
 * aarch64: the 256-byte table is four 64-byte register quadruples; vqtbl4q_u8 looks an index
 * up in quarter 0 (0 when the index is >= 64), and vqtbx4q_u8 over quarters 1-3 with the index
 * minus 64, 128, 192 (wrapping: out of range, so the lane keeps its byte, unless it belongs to
 * that quarter) fills in the rest: 16 codes per 4 lookups and 3 subtractions.  A byte
 * permutation selects table bytes; there is nothing to differ from the reference.
 *
 * armv7 has vtbl4_u8 / vtbx4_u8 over 32 bytes and 8-byte indices: eight lookups per 8 codes,
 * and the eight 32-byte tables take all sixteen q-registers, so the table reloads every step;
 * under qemu that counted more instructions than the scalar loop (docs/kernels.md), so armv7
 * runs the reference.
 */
#include <arm_neon.h>
#include "qrt/activation.h"

#if defined(__aarch64__)
static inline uint8x16_t qrt__lut16_neon(const uint8x16x4_t *t, uint8x16_t x) {
    const uint8x16_t c64 = vdupq_n_u8(64);
    uint8x16_t r = vqtbl4q_u8(t[0], x);
    x = vsubq_u8(x, c64);
    r = vqtbx4q_u8(r, t[1], x);
    x = vsubq_u8(x, c64);
    r = vqtbx4q_u8(r, t[2], x);
    x = vsubq_u8(x, c64);
    return vqtbx4q_u8(r, t[3], x);
}

void qrt_lut_u8__neon(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out) {
    uint8x16x4_t t[4];
    for (int q = 0; q < 4; ++q) t[q] = vld1q_u8_x4(lut + 64 * q);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const uint8x16_t x0 = vld1q_u8(x + i), x1 = vld1q_u8(x + i + 16);
        vst1q_u8(out + i, qrt__lut16_neon(t, x0));
        vst1q_u8(out + i + 16, qrt__lut16_neon(t, x1));
    }
    for (; i + 16 <= n; i += 16) vst1q_u8(out + i, qrt__lut16_neon(t, vld1q_u8(x + i)));
    for (; i < n; ++i) out[i] = lut[x[i]];
}
#endif
