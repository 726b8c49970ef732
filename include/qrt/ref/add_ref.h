/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add_ref.h
 * @brief Reference quantized add / add_relu: QNNPACK's fixed-point kernel and ATen's generic
 *        float kernel (what fbgemm/x86 and qnnpack-refused cases run). Plain loops; the
 *        specification. Parameters come from the gates in qrt/add_params.h.
 */
#ifndef QRT_REF_ADD_REF_H
#define QRT_REF_ADD_REF_H

#include <math.h>
#include "qrt/add_params.h"
#include "qrt/ref/aten_quant_ref.h"

/*
 * QNNPACK q8 add as torch's x86-64 build runs it (src/q8vadd/sse2.c; same integers as NEON
 * for shift <= 31):
 *   acc = (a - za) * ma + (b - zb) * mb            exact in int32 (|acc| < 2^31)
 *   q   = acc >> shift, rounded half away from zero:
 *         rem = (acc & mask) - (acc < 0); q = (acc >> shift) + (rem > mask / 2)
 *   out = clamp(q + zo, out_min, out_max)
 * The SSE2 kernel saturates q to int16 before adding zo; |q| >= 2^15 is clamped to 0 or 255
 * either way, so a plain clamp is the same function.
 * Ratios below 2^-10 give shift 32..35, which QNNPACK does not guard: its C code builds
 * mask = (1u << shift) - 1 and x86 masks the shift count to 5 bits, while psrad with a count
 * above 31 fills with the sign bit.  We reproduce that (docs/ops.md, "add").
 */
#define QRT_ADD_QNNP_BODY                                                                          \
    const uint32_t umask = ((uint32_t)1 << (p->shift & 31u)) - 1u;                                 \
    const int32_t mask = (int32_t)umask;                                                           \
    const int32_t threshold = (int32_t)(umask >> 1);                                               \
    const int shift = p->shift > 31u ? 31 : (int)p->shift;                                         \
    for (size_t i = 0; i < n; ++i) {                                                               \
        const int32_t acc =                                                                        \
            ((int32_t)a[i] - p->a_zero) * p->a_mult + ((int32_t)b[i] - p->b_zero) * p->b_mult;     \
        const int32_t rem = (acc & mask) - (int32_t)(acc < 0);                                     \
        int32_t q = (acc >> shift) + (int32_t)(rem > threshold);                                   \
        q += p->out_zero;                                                                          \
        q = q < p->out_min ? p->out_min : q;                                                       \
        q = q > p->out_max ? p->out_max : q;                                                       \
        out[i] = (uint8_t)q;                                                                       \
    }

/**
 * @brief QNNPACK quantized add of two quint8 tensors of the same shape.
 * @param[in]  p   from qrt_add_qnnp_params_init()
 * @param[in]  a   [n] quint8 codes
 * @param[in]  b   [n] quint8 codes
 * @param[in]  n   element count
 * @param[out] out [n]; may alias a or b
 */
void qrt_add_u8_ref(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                    uint8_t *out);

/*
 * ATen qadd_kernel (QuantizedOpKernels.cpp), per row of `inner` elements: the first `nvec`
 * run the Vectorized lambda, the rest the scalar lambda.
 *   vector: d = fmaf((float)q, s, f32(s * -zp)); c = f32(da + db); relu: max(c, 0);
 *           t = min(f32(c * inv), 2147483520); r = cvtps2dq(t) (INT32_MIN when t < -2^31);
 *           v = r + zo (int32, wrapping); clamp to [qmin, qmax]
 *   scalar: d = f32(s * f32(q - zp)); c = f32(da + db); relu: max(c, 0);
 *           v = rne(f32(f32(c * inv) + zo)); clamp to [qmin, qmax]
 */
static inline int32_t qrt_add_float_vec_(const qrt_add_float_params *p, int32_t a, int32_t b) {
    const float da = fmaf((float)a, p->a_scale, p->a_negzp);
    const float db = fmaf((float)b, p->b_scale, p->b_negzp);
    float c = da + db;
    if (p->relu) c = c > 0.0f ? c : 0.0f;
    return qrt_aten_quantize_vec(c, p->inv, p->out_zero, p->qmin, p->qmax);
}

static inline int32_t qrt_add_float_scalar_(const qrt_add_float_params *p, int32_t a, int32_t b) {
    const float da = p->a_scale * (float)(a - p->a_zero);
    const float db = p->b_scale * (float)(b - p->b_zero);
    float c = da + db;
    if (p->relu) c = c > 0.0f ? c : 0.0f;
    return qrt_aten_quantize_scalar(c, p->inv, p->out_zero, p->qmin, p->qmax);
}

#define QRT_ADD_FLOAT_BODY(T)                                                                      \
    for (size_t r = 0; r < rows; ++r) {                                                            \
        const T *ar = a + r * inner, *br = b + r * inner;                                          \
        T *orow = out + r * inner;                                                                 \
        for (size_t i = 0; i < nvec; ++i) orow[i] = (T)qrt_add_float_vec_(p, ar[i], br[i]);        \
        for (size_t i = nvec; i < inner; ++i) orow[i] = (T)qrt_add_float_scalar_(p, ar[i], br[i]); \
    }

/**
 * @brief ATen's generic quantized add of quint8 tensors laid out as [rows][inner].
 * @param[in]  p     from qrt_add_float_params_init()
 * @param[in]  a, b  [rows][inner] codes (broadcasting already materialised)
 * @param[in]  rows, inner  layout of the innermost loop torch's TensorIterator runs
 * @param[in]  nvec  leading elements of each row that take the vector formula (<= inner)
 * @param[out] out   [rows][inner]
 */
void qrt_add_float_u8_ref(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                          size_t rows, size_t inner, size_t nvec, uint8_t *out);

/** As qrt_add_float_u8_ref(), for qint8 codes. */
void qrt_add_float_s8_ref(const qrt_add_float_params *p, const int8_t *a, const int8_t *b,
                          size_t rows, size_t inner, size_t nvec, int8_t *out);

#endif /* QRT_REF_ADD_REF_H */
