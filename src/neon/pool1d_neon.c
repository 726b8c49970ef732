/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_neon.c
 * @brief Arm NEON variants of the 1-d pooling kernels (ref/pool1d_ref.h), bit-exact with
 *        them (Armv8.0 aarch64 and armv7 NEON).  Chosen at run time by qrt/pool1d.h.
 *
 * Same split as x86/pool1d_avx2.h: border outputs run the reference's one-output functions;
 * interior outputs (qrt_pool1d_interior) run here, all rows as one when qrt_pool1d_flat().
 * - max_pool1d: stride 1, 16 outputs per q-register, one vld1q_u8 per tap; stride 2 with
 *   kernel 2 and dilation 1: vld2q_u8 de-interleaves 32 bytes into even/odd, vmaxq_u8;
 *   other stride-2 kernels: the even half of a vld2q_u8 per tap (its 32nd byte is not
 *   needed, so a block runs only when it lies inside the row); scalar for the rest.  The
 *   reference runs when qmin is above the type's minimum.
 * - avg_pool1d / adaptive_avg_pool1d: exact integer window sums (vpaddl/vpadal for wide
 *   windows; 16-bit lanes over time for kernel <= 16 at stride 1, and at stride 2 on
 *   vld2's even half), then the reference's own
 *   scalar rounding (qrt_avg_pool1d_round_, or the adaptive expression verbatim).
 *
 * armv7: Debian armhf's baseline has no NEON, so this translation unit alone is compiled with
 * -mfpu=neon (its functions keep target("fpu=neon")) and src/pool1d.c only calls them when
 * AT_HWCAP reports NEON.  aarch64: NEON is the baseline.
 */

#include <arm_neon.h>
#include "qrt/neon/pool1d_neon.h"

#if defined(__aarch64__)
#define QRT__POOL_NEON_FN
#else
#define QRT__POOL_NEON_FN __attribute__((target("fpu=neon")))
#endif

#define QRT__MAXPOOL_NEON(T, sfx, SGN, V, LD1, LD2, ST1, MAXQ)                                     \
    /** Interior outputs [a, b) of one row x of length L into y. */                                \
    QRT__POOL_NEON_FN static void qrt__max_pool1d_rows_##sfx##__neon(                              \
        const T *x, int64_t L, int64_t a, int64_t b, int64_t k, int64_t s, int64_t pad, int64_t d, \
        T *y) {                                                                                    \
        int64_t t = a;                                                                             \
        if (s == 1) {                                                                              \
            for (; t + 16 <= b; t += 16) {                                                         \
                const T *xp = x + t - pad;                                                         \
                V##_t m = LD1(xp);                                                                 \
                for (int64_t j = 1; j < k; ++j) m = MAXQ(m, LD1(xp + j * d));                      \
                ST1(y + t, m);                                                                     \
            }                                                                                      \
        } else if (s == 2 && k == 2 && d == 1) {                                                   \
            for (; t + 16 <= b; t += 16) {                                                         \
                const T *xp = x + 2 * t - pad;                                                     \
                const V##x2_t v = LD2(xp);                                                         \
                ST1(y + t, MAXQ(v.val[0], v.val[1]));                                              \
            }                                                                                      \
        } else if (s == 2) {                                                                       \
            const int64_t reach = (k - 1) * d - pad;                                               \
            for (; t + 16 <= b && 2 * t + reach + 32 <= L; t += 16) {                              \
                const T *xp = x + 2 * t - pad;                                                     \
                V##_t m = LD2(xp).val[0];                                                          \
                for (int64_t j = 1; j < k; ++j) m = MAXQ(m, LD2(xp + j * d).val[0]);               \
                ST1(y + t, m);                                                                     \
            }                                                                                      \
        }                                                                                          \
        for (; t < b; ++t) {                                                                       \
            const T *xp = x + t * s - pad;                                                         \
            T m = xp[0];                                                                           \
            for (int64_t j = 1; j < k; ++j) m = xp[j * d] > m ? xp[j * d] : m;                     \
            y[t] = m;                                                                              \
        }                                                                                          \
    }                                                                                              \
    /** @brief Same contract as qrt_max_pool1d_##sfx##_ref(); bit-exact with it. */                \
    QRT__POOL_NEON_FN void qrt_max_pool1d_##sfx##__neon(const qrt_pool1d_params *p, const T *in,   \
                                                        T *out) {                                  \
        const int64_t k = p->kernel, s = p->stride;                                                \
        const int64_t pad = p->pad, d = p->dilation;                                               \
        if (p->qmin > (SGN ? -128 : 0)) {                                                          \
            qrt_max_pool1d_##sfx##_ref(p, in, out);                                                \
            return;                                                                                \
        }                                                                                          \
        /* flat rows have pad == 0 */                                                              \
        QRT_POOL1D_DRIVE(p, T, in, out, d, qrt_max_pool1d_out_##sfx,                               \
                         qrt__max_pool1d_rows_##sfx##__neon(qx, qn, qa, qb, k, s, pad, d, qy));    \
    }

QRT__MAXPOOL_NEON(uint8_t, u8, 0, uint8x16, vld1q_u8, vld2q_u8, vst1q_u8, vmaxq_u8)
QRT__MAXPOOL_NEON(int8_t, s8, 1, int8x16, vld1q_s8, vld2q_s8, vst1q_s8, vmaxq_s8)

/** Sum of n codes (exact int32: |sum| <= 255 * 2^23); sgn: qint8 codes. */
QRT__POOL_NEON_FN static inline int32_t qrt__sum_codes__neon(const uint8_t *x, int64_t n, int sgn) {
    int32x4_t acc = vdupq_n_s32(0);
    int64_t i = 0;
    if (sgn) {
        for (; i + 16 <= n; i += 16)
            acc = vpadalq_s16(acc, vpaddlq_s8(vld1q_s8((const int8_t *)(x + i))));
    } else {
        uint32x4_t u = vdupq_n_u32(0);
        for (; i + 16 <= n; i += 16) u = vpadalq_u16(u, vpaddlq_u8(vld1q_u8(x + i)));
        acc = vreinterpretq_s32_u32(u);
    }
    const int64x2_t w = vpaddlq_s32(acc);
    int32_t tot = (int32_t)(vgetq_lane_s64(w, 0) + vgetq_lane_s64(w, 1));
    if (sgn)
        for (; i < n; ++i) tot += (int8_t)x[i];
    else
        for (; i < n; ++i) tot += x[i];
    return tot;
}

/** Interior outputs [a, b) of one row x of average pooling (dilation 1): acc = sum - k*zp. */
QRT__POOL_NEON_FN static void qrt__avg_pool1d_rows__neon(const qrt_pool1d_params *p,
                                                         const uint8_t *x, int64_t L, int64_t a,
                                                         int64_t b, int64_t s, int sgn,
                                                         uint8_t *y) {
    const int64_t k = p->kernel, pad = p->pad;
    const int32_t kz = (int32_t)k * p->zero;
    int64_t t = a;
    int32_t acc[8];
    if (s == 1 && k <= 16) {
        /* lanes over time: 16-bit sums (|sum| <= 255 * 16 fits), 8 outputs per block */
        for (; t + 8 <= b; t += 8) {
            const uint8_t *xp = x + t - pad;
            int16x8_t v = vdupq_n_s16(0);
            for (int64_t j = 0; j < k; ++j)
                v = vaddq_s16(v, sgn ? vmovl_s8(vld1_s8((const int8_t *)(xp + j)))
                                     : vreinterpretq_s16_u16(vmovl_u8(vld1_u8(xp + j))));
            const int32x4_t z = vdupq_n_s32(kz);
            vst1q_s32(acc, vsubq_s32(vmovl_s16(vget_low_s16(v)), z));
            vst1q_s32(acc + 4, vsubq_s32(vmovl_s16(vget_high_s16(v)), z));
            for (int i = 0; i < 8; ++i) {
                const int32_t q = (int32_t)qrt_avg_pool1d_round_(p, acc[i], k);
                y[t + i] = sgn ? (uint8_t)(int8_t)q : (uint8_t)q;
            }
        }
    }
    if (s == 2 && k <= 16) {
        /* vld2_u8's even half: x[2*(t+i) - pad + j], i < 8 (its 16th byte is not needed, so a
         * block runs only when it lies inside the row) */
        for (; t + 8 <= b && 2 * t - pad + (k - 1) + 16 <= L; t += 8) {
            const uint8_t *xp = x + 2 * t - pad;
            int16x8_t v = vdupq_n_s16(0);
            for (int64_t j = 0; j < k; ++j)
                v = vaddq_s16(v, sgn ? vmovl_s8(vld2_s8((const int8_t *)(xp + j)).val[0])
                                     : vreinterpretq_s16_u16(vmovl_u8(vld2_u8(xp + j).val[0])));
            const int32x4_t z = vdupq_n_s32(kz);
            vst1q_s32(acc, vsubq_s32(vmovl_s16(vget_low_s16(v)), z));
            vst1q_s32(acc + 4, vsubq_s32(vmovl_s16(vget_high_s16(v)), z));
            for (int i = 0; i < 8; ++i) {
                const int32_t q = (int32_t)qrt_avg_pool1d_round_(p, acc[i], k);
                y[t + i] = sgn ? (uint8_t)(int8_t)q : (uint8_t)q;
            }
        }
    }
    for (; t < b; ++t) {
        const int32_t acc1 = qrt__sum_codes__neon(x + t * s - pad, k, sgn) - kz;
        const int32_t q = (int32_t)qrt_avg_pool1d_round_(p, acc1, k);
        y[t] = sgn ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
}

#define QRT__AVGPOOL_NEON(T, sfx, SGN)                                                             \
    /** @brief Same contract as qrt_avg_pool1d_##sfx##_ref(); bit-exact with it. */                \
    QRT__POOL_NEON_FN void qrt_avg_pool1d_##sfx##__neon(const qrt_pool1d_params *p, const T *in,   \
                                                        T *out) {                                  \
        const int64_t s = p->stride;                                                               \
        QRT_POOL1D_DRIVE(p, T, in, out, 1, qrt_avg_pool1d_out_##sfx,                               \
                         qrt__avg_pool1d_rows__neon(p, (const uint8_t *)qx, qn, qa, qb, s, SGN,    \
                                                    (uint8_t *)qy));                               \
    }                                                                                              \
    /** @brief Same contract as qrt_adaptive_avg_pool1d_##sfx##_ref(); bit-exact with it. */       \
    QRT__POOL_NEON_FN void qrt_adaptive_avg_pool1d_##sfx##__neon(const qrt_pool1d_params *p,       \
                                                                 const T *in, T *out) {            \
        const int64_t L = p->len_in, O = p->len_out;                                               \
        for (uint32_t r = 0; r < p->rows; ++r) {                                                   \
            const T *x = in + (size_t)r * p->len_in;                                               \
            T *y = out + (size_t)r * p->len_out;                                                   \
            for (int64_t t = 0; t < O; ++t) {                                                      \
                const int64_t lo = (t * L) / O, hi = ((t + 1) * L + O - 1) / O;                    \
                const int32_t acc = qrt__sum_codes__neon((const uint8_t *)(x + lo), hi - lo, SGN); \
                const float rcp = 1.0f / (float)(hi - lo);                                         \
                float v = rintf((float)acc * rcp);                                                 \
                v = v < (float)p->qmin ? (float)p->qmin : v;                                       \
                v = v > (float)p->qmax ? (float)p->qmax : v;                                       \
                y[t] = (T)(int32_t)v;                                                              \
            }                                                                                      \
        }                                                                                          \
    }

QRT__AVGPOOL_NEON(uint8_t, u8, 0)
QRT__AVGPOOL_NEON(int8_t, s8, 1)
