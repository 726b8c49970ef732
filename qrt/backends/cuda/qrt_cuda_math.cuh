/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_cuda_math.cuh
 * @brief The per-output arithmetic of every qrt CUDA kernel, as `__host__ __device__` functions.
 *
 * The `.cu` kernels in this directory only map a thread to an output index and call one of these
 * functions, so the integers a GPU produces are decided here.  The same functions compile for the
 * host (g++ -x c++ or nvcc), where tools/cuda_host_harness.cpp runs them over the same inputs as
 * qrt's C reference kernels (include/qrt/ref/, include/qrt/quant.h) and tests compare the results
 * bit for bit (tests/test_cuda_math.py).  That is the proof, short of a GPU, that the device code
 * computes the CPU integers.
 *
 * Floating point is pinned down operation by operation.  On the device every float multiply, add
 * and fused multiply-add is an explicit round-to-nearest-even intrinsic (`__fmul_rn`, `__fadd_rn`,
 * `__fmaf_rn`): nvcc/NVRTC never contract those into an FMA, exactly as the CPU build's
 * `-ffp-contract=off` forbids contraction there.  The host build of this header must likewise be
 * compiled with `-ffp-contract=off` and without `-ffast-math`.  Rounding to an integer is `rintf`
 * (round half to even) with the out-of-range rule of x86 `cvtps2dq` made explicit, because
 * CUDA's `__float2int_rn` saturates instead.
 */
#ifndef QRT_CUDA_MATH_CUH
#define QRT_CUDA_MATH_CUH

#if defined(__CUDACC_RTC__)
/* NVRTC (cupy.RawModule) has no libc headers: the fixed-width types it needs. */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT32_MIN (-2147483647 - 1)
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

#if defined(__CUDACC__)
#define QRT_HD static __host__ __device__ __forceinline__
#else
#define QRT_HD static inline
#endif

/* ---- IEEE single operations, rounded to nearest even, never contracted ------------------- */

/** f32(a * b). */
QRT_HD float qrt_cu_fmul(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

/** f32(a + b). */
QRT_HD float qrt_cu_fadd(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

/** fmaf(a, b, c): one rounding (only where the CPU formula is itself fused). */
QRT_HD float qrt_cu_fmaf(float a, float b, float c)
{
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return fmaf(a, b, c);
#endif
}

/** (float)v for an int32, rounded to nearest even (exact below 2^24). */
QRT_HD float qrt_cu_i2f(int32_t v)
{
#if defined(__CUDA_ARCH__)
    return __int2float_rn(v);
#else
    return (float)v;
#endif
}

/** The float's bit pattern. */
QRT_HD uint32_t qrt_cu_f32_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

/** The float with bit pattern u. */
QRT_HD float qrt_cu_f32_from_bits(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/** Equals cvtps2dq (round half to even): NaN or |y| >= 2^31 -> INT32_MIN.  Mirrors
 *  qrt_cvt_f32_s32_rne() in include/qrt/requant.h. */
QRT_HD int32_t qrt_cu_cvt_f32_s32_rne(float y)
{
    if (!(y >= -2147483648.0f && y < 2147483648.0f))
        return INT32_MIN;
    return (int32_t)rintf(y);
}

/** Two's-complement wrapping int32 addition (paddd). */
QRT_HD int32_t qrt_cu_add_s32_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/** Four signed bytes of a times four signed bytes of b, plus c (wrapping): equals __dp4a. */
QRT_HD int32_t qrt_cu_dp4a(int32_t a, int32_t b, int32_t c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
    return __dp4a(a, b, c);
#else
    uint32_t s = (uint32_t)c;
    for (int i = 0; i < 4; ++i)
        s += (uint32_t)((int32_t)(int8_t)(uint8_t)((uint32_t)a >> (8 * i)) *
                        (int32_t)(int8_t)(uint8_t)((uint32_t)b >> (8 * i)));
    return (int32_t)s;
#endif
}

/* ---- requantization (include/qrt/requant.h) ------------------------------------------------ */

/** QNNPACK fp32 requantization: q = clamp(rne(f32(f32(acc) * scale)) + zero, lo, hi).
 *  Mirrors qrt_requant_fp32_u8(). */
QRT_HD uint8_t qrt_cu_requant_fp32_u8(int32_t acc, float scale, int32_t zero, int32_t lo,
                                      int32_t hi)
{
    const float y = qrt_cu_fmul(qrt_cu_i2f(acc), scale);
    int64_t r = (int64_t)qrt_cu_cvt_f32_s32_rne(y) + zero;
    r = r < lo ? lo : r;
    r = r > hi ? hi : r;
    return (uint8_t)r;
}

/** Dynamic-linear output: f32(f32(f32(acc) * scale) + bias).  Mirrors qrt_dequant_acc_f32(). */
QRT_HD float qrt_cu_dequant_acc_f32(int32_t acc, float scale, float bias)
{
    return qrt_cu_fadd(qrt_cu_fmul(qrt_cu_i2f(acc), scale), bias);
}

/* ---- conv1d / linear (include/qrt/ref/conv1d_ref.h) ----------------------------------------- */

#define QRT_CU_OUT_U8 0  /**< quint8 output, static requantization */
#define QRT_CU_OUT_F32 1 /**< float32 output (dynamic linear) */

/**
 * Geometry of one conv1d / linear call: the fields of qrt_conv1d_params widened to int64, so the
 * host passes them as one int64[21] device array.  Strides count elements.
 */
typedef struct {
    int64_t n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left, groups;
    int64_t xs_n, xs_c, xs_t; /**< input strides */
    int64_t ys_n, ys_c, ys_t; /**< output strides */
    int64_t input_zero, output_zero, output_min, output_max, out_kind;
} qrt_cu_conv1d_params;

#define QRT_CU_CONV1D_NPARAMS 21

/**
 * Exact accumulator of output (n, oc, t):
 * sum_{ic < c_in/groups, k < K} (x[n][g*cg+ic][t*s + k*d - pad] - x_zero) * (w[oc][ic][k] - w_zero),
 * padding contributing 0.  Python guarantees (as qrt_conv1d_check does) that the exact sum fits
 * int32, so the wrapping uint32 sum below equals the reference's int64 sum cast to int32.
 */
QRT_HD int32_t qrt_cu_conv1d_acc(const qrt_cu_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                 int32_t wz, int64_t n, int64_t oc, int64_t t)
{
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups, kk = p->kernel;
    const int64_t g = oc / og;
    const int32_t xz = (int32_t)p->input_zero;
    const uint8_t *xb = x + n * p->xs_n + g * cg * p->xs_c;
    const int8_t *wo = w + oc * cg * kk;
    const int64_t t0 = t * p->stride - p->pad_left;
    uint32_t acc = 0;
    for (int64_t k = 0; k < kk; ++k) {
        const int64_t tm = t0 + k * p->dilation;
        if (tm < 0 || tm >= p->len_in)
            continue;
        const uint8_t *xk = xb + tm * p->xs_t;
        for (int64_t ic = 0; ic < cg; ++ic)
            acc += (uint32_t)(((int32_t)xk[ic * p->xs_c] - xz) * ((int32_t)wo[ic * kk + k] - wz));
    }
    return (int32_t)acc;
}

/**
 * The same accumulator for kernel 1, stride 1, no padding and unit channel stride (linear layers
 * and pointwise convs over a [rows][c] input), computed four channels at a time with dp4a:
 * sum (x - xz)(w - wz) = sum xs*w + 128*sum w - wz*(sum xs + 128*cg) - xz*sum w + cg*xz*wz,
 * where xs = x - 128 is a signed byte.  Every step wraps mod 2^32, so the result equals the exact
 * sum whenever that fits int32 (the ring identity), i.e. it equals qrt_cu_conv1d_acc().
 * @param[in] xr  the row: cg bytes with unit stride
 * @param[in] wr  the weights of one output channel: cg bytes
 * @param[in] wsum sum of wr (precomputed once per layer)
 */
QRT_HD int32_t qrt_cu_dot_acc_dp4a(const uint8_t *xr, const int8_t *wr, int64_t cg, int32_t xz,
                                   int32_t wz, int32_t wsum)
{
    int32_t sxw = 0, sx = 0;
    int64_t c = 0;
    for (; c + 4 <= cg; c += 4) {
        const uint32_t xa = (uint32_t)(xr[c] ^ 0x80u) | (uint32_t)(xr[c + 1] ^ 0x80u) << 8 |
                            (uint32_t)(xr[c + 2] ^ 0x80u) << 16 |
                            (uint32_t)(xr[c + 3] ^ 0x80u) << 24;
        const uint32_t wa = (uint32_t)(uint8_t)wr[c] | (uint32_t)(uint8_t)wr[c + 1] << 8 |
                            (uint32_t)(uint8_t)wr[c + 2] << 16 | (uint32_t)(uint8_t)wr[c + 3] << 24;
        sxw = qrt_cu_dp4a((int32_t)xa, (int32_t)wa, sxw);
        sx = qrt_cu_dp4a((int32_t)xa, 0x01010101, sx);
    }
    for (; c < cg; ++c) {
        const int32_t xs = (int32_t)xr[c] - 128;
        sxw = (int32_t)((uint32_t)sxw + (uint32_t)(xs * (int32_t)wr[c]));
        sx = (int32_t)((uint32_t)sx + (uint32_t)xs);
    }
    uint32_t acc = (uint32_t)sxw + 128u * (uint32_t)wsum;
    acc -= (uint32_t)wz * ((uint32_t)sx + 128u * (uint32_t)cg);
    acc -= (uint32_t)xz * (uint32_t)wsum;
    acc += (uint32_t)cg * (uint32_t)xz * (uint32_t)wz;
    return (int32_t)acc;
}

/** Linear index of output (n, oc, t). */
QRT_HD int64_t qrt_cu_conv1d_out_index(const qrt_cu_conv1d_params *p, int64_t n, int64_t oc,
                                       int64_t t)
{
    return n * p->ys_n + oc * p->ys_c + t * p->ys_t;
}

/** Finish one quint8 output from its accumulator (bias added with int32 wrap, as paddd). */
QRT_HD uint8_t qrt_cu_conv1d_finish_u8(const qrt_cu_conv1d_params *p, int32_t acc, int32_t bias_q,
                                       float scale)
{
    return qrt_cu_requant_fp32_u8(qrt_cu_add_s32_wrap(acc, bias_q), scale, (int32_t)p->output_zero,
                                  (int32_t)p->output_min, (int32_t)p->output_max);
}

/* ---- quantize / dequantize (include/qrt/quant.h) -------------------------------------------- */

/** Per-tensor quint8/qint8 quantize (torch's fused path): t = fmaf(x, inv, zp); t = min(t,
 *  2147483520) (NaN -> that); clamp(rne(t)).  Mirrors QRT_QUANT_FMA_BODY. */
QRT_HD int32_t qrt_cu_quantize_fma(float x, float inv, float zpf, float qminf, float qmaxf)
{
    float t = qrt_cu_fmaf(x, inv, zpf);
    t = t < 2147483520.0f ? t : 2147483520.0f;
    t = rintf(t);
    t = t > qminf ? t : qminf;
    t = t < qmaxf ? t : qmaxf;
    return (int32_t)t;
}

/** Per-tensor dequantize of an 8-bit value: f32(scale * f32(q - zp)).  Mirrors QRT_DEQUANT_BODY. */
QRT_HD float qrt_cu_dequantize(int32_t q, float scale, int32_t zp)
{
    return qrt_cu_fmul(scale, qrt_cu_i2f(q - zp));
}

/** cat's requantizing copy: quantize_fma(dequantize(q, in_scale, in_zero), inv_out, zo).
 *  Mirrors QRT_REQUANT_COPY_BODY in include/qrt/ref/cat_ref.h. */
QRT_HD int32_t qrt_cu_requant_copy(int32_t q, float in_scale, int32_t in_zero, float inv_out,
                                   float out_zero_f, float qminf, float qmaxf)
{
    return qrt_cu_quantize_fma(qrt_cu_dequantize(q, in_scale, in_zero), inv_out, out_zero_f,
                               qminf, qmaxf);
}

/* ---- element-wise ops (torch 2.13 qnnpack) ------------------------------------------------- */

/** Quantized relu keeps the qparams: max(q, zero_point). */
QRT_HD int32_t qrt_cu_relu(int32_t q, int32_t zp)
{
    return q > zp ? q : zp;
}

/** QNNPACK add parameters (pytorch_qnnp_compute_add_quantization_params, x86 flavour).
 *  Mirrors qrt_add_qnnp_params / qrt_add_qnnp_params_init() in include/qrt/add_params.h. */
typedef struct {
    int32_t a_zero, b_zero, y_zero;
    int32_t a_mult, b_mult; /**< in [0, 2^22) */
    uint32_t shift;         /**< 21 - exponent of the larger ratio: [14, 35] */
    int32_t y_min, y_max;
} qrt_cu_add_params;

/**
 * @param a_os,b_os f32(f32(a_scale) / f32(out_scale)) etc.; the caller has checked that both lie
 *                  in [2^-14, 2^8), as torch does.
 */
QRT_HD qrt_cu_add_params qrt_cu_add_params_of(int32_t a_zp, int32_t b_zp, int32_t y_zp, float a_os,
                                              float b_os, int32_t y_min, int32_t y_max)
{
    const float mx = a_os > b_os ? a_os : b_os;
    const int32_t e = (int32_t)(qrt_cu_f32_bits(mx) >> 23) - 127;
    const uint32_t shift = (uint32_t)(21 - e);
    /* 2^shift is exact (shift <= 35): the product is exact, then lrintf rounds half to even. */
    const float sm = qrt_cu_f32_from_bits((uint32_t)(127 + (int32_t)shift) << 23);
    qrt_cu_add_params r;
    r.a_mult = (int32_t)rintf(qrt_cu_fmul(a_os, sm));
    r.b_mult = (int32_t)rintf(qrt_cu_fmul(b_os, sm));
    r.shift = shift;
    r.a_zero = a_zp;
    r.b_zero = b_zp;
    r.y_zero = y_zp;
    r.y_min = y_min;
    r.y_max = y_max;
    return r;
}

/**
 * QNNPACK's fixed-point add (SSE2 kernel): acc = (a - za)*ma + (b - zb)*mb (exact in int32),
 * shift right rounding half away from zero; the mask uses shift mod 32 and the shift saturates
 * at 31, as psrad/pand do.  Mirrors QRT_ADD_QNNP_BODY in include/qrt/ref/add_ref.h.
 */
QRT_HD uint8_t qrt_cu_add_q8(int32_t a, int32_t b, const qrt_cu_add_params *p)
{
    const uint32_t umask = (1u << (p->shift & 31u)) - 1u;
    const int32_t mask = (int32_t)umask, threshold = (int32_t)(umask >> 1);
    const int32_t shift = p->shift > 31u ? 31 : (int32_t)p->shift;
    const int32_t acc = (a - p->a_zero) * p->a_mult + (b - p->b_zero) * p->b_mult;
    const int32_t rem = (acc & mask) - (int32_t)(acc < 0);
    int32_t q = (acc >> shift) + (int32_t)(rem > threshold); /* arithmetic shift */
    q += p->y_zero;
    q = q < p->y_min ? p->y_min : q;
    q = q > p->y_max ? p->y_max : q;
    return (uint8_t)q;
}

/* ---- pooling (include/qrt/ref/pool1d_ref.h) ------------------------------------------------ */

#define QRT_CU_AVG_POOL_QNNP 0    /**< QNNPACK: divide by K, scale f32(s / f32(s * K)) */
#define QRT_CU_AVG_POOL_GENERIC 1 /**< ATen's generic kernel: count_include_pad honoured */

/** 1-d pooling geometry; one row is one (n, c) pair of a contiguous [rows][len_in] input. */
typedef struct {
    int64_t rows, len_in, len_out, kernel, stride, dilation, pad;
    int64_t mode;              /**< QRT_CU_AVG_POOL_* (average pooling only) */
    int64_t count_include_pad; /**< GENERIC mode only */
} qrt_cu_pool1d_params;

#define QRT_CU_POOL1D_NPARAMS 9

/** max_pool1d: taps in the padding never win (qrt's rule, fbgemm's; see _ops.max_pool1d).
 *  Mirrors QRT_MAX_POOL1D_BODY. */
QRT_HD uint8_t qrt_cu_max_pool1d(const qrt_cu_pool1d_params *p, const uint8_t *row, int64_t t)
{
    int32_t m = 0;
    for (int64_t k = 0; k < p->kernel; ++k) {
        const int64_t i = t * p->stride - p->pad + k * p->dilation;
        if (i >= 0 && i < p->len_in && (int32_t)row[i] > m)
            m = row[i];
    }
    return (uint8_t)m;
}

/** (float)(1.0 / (double)d), both steps correctly rounded. */
QRT_HD float qrt_cu_rcp_via_f64(int64_t d)
{
#if defined(__CUDA_ARCH__)
    return __double2float_rn(__ddiv_rn(1.0, __ll2double_rn((long long)d)));
#else
    return (float)(1.0 / (double)d);
#endif
}

/**
 * avg_pool1d of quint8 codes sharing (scale, zp) with the output.  Mirrors QRT_AVG_POOL1D_BODY:
 * acc = sum over the real taps of (q - zp);
 *  QNNP:    v = rintf(f32(f32(acc) * scale)) + zp
 *  GENERIC: v = rintf(f32(f32(f32(acc) * f32(1/div)) + zp)), div by count_include_pad;
 * then clamp to [0, 255].
 */
QRT_HD uint8_t qrt_cu_avg_pool1d(const qrt_cu_pool1d_params *p, const uint8_t *row, int64_t t,
                                 int32_t zp, float scale)
{
    const int64_t h = t * p->stride - p->pad;
    int64_t end = h + p->kernel;
    if (p->mode == QRT_CU_AVG_POOL_GENERIC && end > p->len_in + p->pad)
        end = p->len_in + p->pad;
    const int64_t lo = h > 0 ? h : 0, hi = end < p->len_in ? end : p->len_in;
    int32_t acc = 0;
    for (int64_t i = lo; i < hi; ++i)
        acc += (int32_t)row[i] - zp;
    float v;
    if (p->mode == QRT_CU_AVG_POOL_QNNP) {
        v = qrt_cu_fadd(rintf(qrt_cu_fmul(qrt_cu_i2f(acc), scale)), qrt_cu_i2f(zp));
    } else {
        const int64_t div = p->count_include_pad ? end - h : hi - lo;
        v = rintf(qrt_cu_fadd(qrt_cu_fmul(qrt_cu_i2f(acc), qrt_cu_rcp_via_f64(div)),
                              qrt_cu_i2f(zp)));
    }
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    return (uint8_t)(int32_t)v;
}

/**
 * adaptive_avg_pool1d, ATen's generic kernel (qrt_adaptive_avg_pool1d_u8_ref): window
 * [floor(t*L/O), ceil((t+1)*L/O)), raw codes summed, v = rintf(f32(f32(acc) * f32(1/n))),
 * clamped to [0, 255].  (The CPU runs QNNPACK's avg pool instead when L % O == 0 and L != O;
 * the host then launches the avg-pool kernel, as it does.)
 */
QRT_HD uint8_t qrt_cu_adaptive_avg_pool1d(const uint8_t *row, int64_t L, int64_t O, int64_t t)
{
    const int64_t lo = (t * L) / O, hi = ((t + 1) * L + O - 1) / O;
    int32_t acc = 0;
    for (int64_t i = lo; i < hi; ++i)
        acc += (int32_t)row[i];
#if defined(__CUDA_ARCH__)
    const float rcp = __fdiv_rn(1.0f, qrt_cu_i2f((int32_t)(hi - lo)));
#else
    const float rcp = 1.0f / (float)(hi - lo);
#endif
    float v = rintf(qrt_cu_fmul(qrt_cu_i2f(acc), rcp));
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    return (uint8_t)(int32_t)v;
}

/* ---- table lookups (hardswish, sigmoid): tables are built on the host by qrt's CPU code ---- */

/** out[i] = (i < nvec ? lut_vec : lut_tail)[x[i]]: one table (nvec = n), or ATen's two
 *  (whole 64-code chunks, then the tail).  Mirrors qrt_lut_u8_ref / qrt_lut2_u8_ref. */
QRT_HD uint8_t qrt_cu_lut2(const uint8_t *lut_vec, const uint8_t *lut_tail, uint8_t x, int64_t i,
                           int64_t nvec)
{
    return i < nvec ? lut_vec[x] : lut_tail[x];
}

#endif /* QRT_CUDA_MATH_CUH */
