/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_neon.c
 * @brief The NEON quantized mul declared in qrt/qarith.h (Armv8.0 aarch64 and armv7 NEON):
 *        qrt_mul_rows_u8_ref's steps four lanes per q-register, sixteen codes per step, one
 *        float32 operation per reference step in the reference's order (intrinsics;
 *        -ffp-contract=off: GCC's vmulq_f32 / vaddq_f32 are plain C operators, so contraction
 *        must stay off for this file).  vmull_s16 forms the exact int32 product of the 16-bit
 *        differences; vcvtq_s32_f32 truncates as the (int32_t) cast, vmovn keeps the low byte.
 *
 * armv7's NEON flushes subnormals to zero; every value a subnormal could reach is truncated
 * to the same integer code (|x| < 1 either way), so the codes equal the VFP reference's.
 * armv7: only this unit is compiled with -mfpu=neon (target("fpu=neon")), called after AT_HWCAP
 * reports NEON.
 */
#include <arm_neon.h>
#include "qrt/add.h"
#include "qrt/qarith.h"

#if defined(__aarch64__)
#define QRT__MUL_NEON_FN
#else
#define QRT__MUL_NEON_FN __attribute__((target("fpu=neon")))
#endif

typedef struct {
    int16x4_t bv;
    int16x8_t za, zb;
    float32x4_t m, nbig, big, magic, lo, hi, zo;
    int clamp_big, full;
} qrt__mul_consts_neon;

#if defined(__aarch64__)
#define QRT__MUL_NEON_INL __attribute__((always_inline)) static inline
#else
#define QRT__MUL_NEON_INL __attribute__((target("fpu=neon"), always_inline)) static inline
#endif

/* per_row and full are constants at every call (the loops are compiled once per value). */
QRT__MUL_NEON_INL int16x4_t qrt__mul4_neon(const qrt__mul_consts_neon *k, int32x4_t c, int full) {
    float32x4_t f = vmulq_f32(vcvtq_f32_s32(c), k->m);
    if (k->clamp_big) f = vminq_f32(vmaxq_f32(f, k->nbig), k->big);
    f = vsubq_f32(vaddq_f32(f, k->magic), k->magic);
    if (full) return vqmovn_s32(vcvtq_s32_f32(vaddq_f32(f, k->zo))); /* vqmovun clamps */
    f = vminq_f32(vmaxq_f32(f, k->lo), k->hi);
    return vmovn_s32(vcvtq_s32_f32(vaddq_f32(f, k->zo)));
}

QRT__MUL_NEON_INL void qrt__mul16_neon(const qrt__mul_consts_neon *k, const uint8_t *a,
                                       const uint8_t *b, int per_row, int full, uint8_t *y) {
    const uint8x16_t va = vld1q_u8(a);
    const int16x8_t a0 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(va))), k->za);
    const int16x8_t a1 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(va))), k->za);
    int32x4_t c0, c1, c2, c3;
    if (per_row) {
        c0 = vmull_s16(vget_low_s16(a0), k->bv);
        c1 = vmull_s16(vget_high_s16(a0), k->bv);
        c2 = vmull_s16(vget_low_s16(a1), k->bv);
        c3 = vmull_s16(vget_high_s16(a1), k->bv);
    } else {
        const uint8x16_t vb = vld1q_u8(b);
        const int16x8_t b0 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vb))), k->zb);
        const int16x8_t b1 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(vb))), k->zb);
        c0 = vmull_s16(vget_low_s16(a0), vget_low_s16(b0));
        c1 = vmull_s16(vget_high_s16(a0), vget_high_s16(b0));
        c2 = vmull_s16(vget_low_s16(a1), vget_low_s16(b1));
        c3 = vmull_s16(vget_high_s16(a1), vget_high_s16(b1));
    }
    const int16x8_t lo16 = vcombine_s16(qrt__mul4_neon(k, c0, full), qrt__mul4_neon(k, c1, full));
    const int16x8_t hi16 = vcombine_s16(qrt__mul4_neon(k, c2, full), qrt__mul4_neon(k, c3, full));
    if (full) /* signed 16-bit then unsigned 8-bit saturation: the [0, 255] clamp */
        vst1q_u8(y, vcombine_u8(vqmovun_s16(lo16), vqmovun_s16(hi16)));
    else
        vst1q_u8(y, vcombine_u8(vmovn_u16(vreinterpretq_u16_s16(lo16)),
                                vmovn_u16(vreinterpretq_u16_s16(hi16))));
}

QRT__MUL_NEON_INL void qrt__mul_row_neon_(const qrt__mul_consts_neon *k, const uint8_t *a,
                                           const uint8_t *b, size_t n, int per_row, int full,
                                           uint8_t *y) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        qrt__mul16_neon(k, a + i, per_row ? b : b + i, per_row, full, y + i);
    if (i < n && n >= 16 && y != a && y != b) { /* the last 16 again (not in place) */
        i = n - 16;
        qrt__mul16_neon(k, a + i, per_row ? b : b + i, per_row, full, y + i);
    } else if (i < n) { /* the tail through a 16-byte copy: no access past the buffers */
        uint8_t ta[16] = {0}, tb[16] = {0}, ty[16];
        __builtin_memcpy(ta, a + i, n - i);
        if (!per_row) __builtin_memcpy(tb, b + i, n - i);
        qrt__mul16_neon(k, ta, tb, per_row, full, ty);
        __builtin_memcpy(y + i, ty, n - i);
    }
}

QRT__MUL_NEON_FN static void qrt__mul_row_neon(const qrt__mul_consts_neon *k, const uint8_t *a,
                                               const uint8_t *b, size_t n, int per_row,
                                               uint8_t *y) {
    if (per_row && k->full)
        qrt__mul_row_neon_(k, a, b, n, 1, 1, y);
    else if (per_row)
        qrt__mul_row_neon_(k, a, b, n, 1, 0, y);
    else if (k->full)
        qrt__mul_row_neon_(k, a, b, n, 0, 1, y);
    else
        qrt__mul_row_neon_(k, a, b, n, 0, 0, y);
}

QRT__MUL_NEON_FN void qrt_mul_rows_u8__neon(const uint8_t *a, const uint8_t *b, size_t rows,
                                            size_t len, int b_per_row, int32_t za, int32_t zb,
                                            float m, float lo, float hi, float zo, uint8_t *y) {
    qrt__mul_consts_neon k;
    k.za = vdupq_n_s16((int16_t)za); /* za, zb in [0, 255]: the dispatcher's condition */
    k.zb = vdupq_n_s16((int16_t)zb);
    k.bv = vdup_n_s16(0);
    k.m = vdupq_n_f32(m);
    k.nbig = vdupq_n_f32(-4194304.0f);
    k.big = vdupq_n_f32(4194304.0f);
    k.magic = vdupq_n_f32(12582912.0f);
    k.lo = vdupq_n_f32(lo);
    k.hi = vdupq_n_f32(hi);
    k.zo = vdupq_n_f32(zo);
    k.clamp_big = qrt_mul_needs_big_clamp(za, zb, m);
#if defined(__aarch64__)
    k.full = qrt_mul_full_range(lo, hi, zo);
#else
    k.full = 0; /* armv7: the saturating-narrow form counted 6.0 instructions a code under
                 * qemu cortex-a7, the clamp form 4.5 */
#endif
    for (size_t r = 0; r < rows; ++r) {
        if (b_per_row) k.bv = vdup_n_s16((int16_t)((int32_t)b[r] - zb));
        qrt__mul_row_neon(&k, a + r * len, b_per_row ? b + r : b + r * len, len, b_per_row,
                          y + r * len);
    }
}

/*
 * The QNNPACK add (qrt/add.h, QRT_ADD_QNNP_BODY): 16 codes a step.  x - z as int16 (vsubl_u8
 * wraps to the signed value), widened, times the int32 multipliers (|acc| < 2^31, exact);
 * then QNNPACK's own NEON rounding, acc += (acc < 0 ? -1 : 0) and a rounding right shift
 * (vrshl), which equals the reference's SSE2 form (acc >> shift) + (rem > mask / 2) for every
 * int32 acc and shift <= 31 (checked exhaustively around 0 and on random values for each
 * shift); shifts 32..35, where the reference reproduces x86's masked shift counts, run the
 * reference.  + out_zero and the clamp through saturating narrowings (int32 -> int16, + zero in
 * int16, -> uint8, then the clamp: monotone and the identity on 0..255).
 */
/* (xa * am + xb * bm) rounded right by -rsh (acc + (acc >> 31), then vrshl) */
static inline __attribute__((always_inline)) QRT__MUL_NEON_FN int32x4_t
qrt__add4_neon(int32x4_t xa, int32x4_t xb, int32x4_t am, int32x4_t bm, int32x4_t rsh) {
    const int32x4_t acc = vmlaq_s32(vmulq_s32(xa, am), xb, bm);
    return vrshlq_s32(vsraq_n_s32(acc, acc, 31), rsh);
}

QRT__MUL_NEON_FN void qrt_add_u8__neon(const qrt_add_qnnp_params *p, const uint8_t *a,
                                       const uint8_t *b, size_t n, uint8_t *out) {
    if (p->shift > 31u || p->shift == 0u) {
        qrt_add_u8_ref(p, a, b, n, out);
        return;
    }
    const uint8x8_t za = vdup_n_u8((uint8_t)p->a_zero), zb = vdup_n_u8((uint8_t)p->b_zero);
    const int32x4_t am = vdupq_n_s32(p->a_mult), bm = vdupq_n_s32(p->b_mult);
    const int32x4_t rsh = vdupq_n_s32(-(int32_t)p->shift);
    const int16x8_t zo = vdupq_n_s16((int16_t)p->out_zero);
    const uint8x16_t lo = vdupq_n_u8((uint8_t)p->out_min), hi = vdupq_n_u8((uint8_t)p->out_max);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const uint8x16_t va = vld1q_u8(a + i), vb = vld1q_u8(b + i);
        const int16x8_t al = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(va), za));
        const int16x8_t ah = vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(va), za));
        const int16x8_t bl = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(vb), zb));
        const int16x8_t bh = vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(vb), zb));
#define QRT__A4(x, y) qrt__add4_neon(vmovl_s16(x), vmovl_s16(y), am, bm, rsh)
        const int32x4_t q0 = QRT__A4(vget_low_s16(al), vget_low_s16(bl));
        const int32x4_t q1 = QRT__A4(vget_high_s16(al), vget_high_s16(bl));
        const int32x4_t q2 = QRT__A4(vget_low_s16(ah), vget_low_s16(bh));
        const int32x4_t q3 = QRT__A4(vget_high_s16(ah), vget_high_s16(bh));
#undef QRT__A4
        const int16x8_t h0 = vqaddq_s16(vcombine_s16(vqmovn_s32(q0), vqmovn_s32(q1)), zo);
        const int16x8_t h1 = vqaddq_s16(vcombine_s16(vqmovn_s32(q2), vqmovn_s32(q3)), zo);
        const uint8x16_t r = vcombine_u8(vqmovun_s16(h0), vqmovun_s16(h1));
        vst1q_u8(out + i, vminq_u8(vmaxq_u8(r, lo), hi)); /* out may alias a or b: read before */
    }
    if (i < n) qrt_add_u8_ref(p, a + i, b + i, n - i, out + i);
}
