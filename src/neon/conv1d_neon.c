/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neon.c
 * @brief qrt_conv1d_u8__neon() and its depthwise path (design: qrt/neon/conv1d_neon.h).
 *        armv7: this translation unit alone is compiled with -mfpu=neon (meson.build).
 */
#include "conv1d_neon_common.h"
#include "conv1d_neon_gemm.h"

/* ---------------------------------------------------------------------------------------- */
/* Depthwise path: lanes over time                                                           */
/* ---------------------------------------------------------------------------------------- */



/** a0..a3 += (xv - xz) * wk over 16 lanes (int16 products widened into int32, exact). */
#if defined(__aarch64__)
#define QRT__DW_MAC(xv, wk)                                                                        \
    do {                                                                                           \
        const int16_t w_ = (wk);                                                                   \
        const int16x8_t xl_ = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(xv), vxz));               \
        const int16x8_t xh_ = vreinterpretq_s16_u16(vsubl_high_u8(xv, vxzq));                      \
        a0 = vmlal_n_s16(a0, vget_low_s16(xl_), w_);                                               \
        a1 = vmlal_high_n_s16(a1, xl_, w_);                                                        \
        a2 = vmlal_n_s16(a2, vget_low_s16(xh_), w_);                                               \
        a3 = vmlal_high_n_s16(a3, xh_, w_);                                                        \
    } while (0)
#else /* armv7: the tap is a dup'ed vector (a scalar operand costs a lane move per use) */
#define QRT__DW_MAC(xv, wk)                                                                        \
    do {                                                                                           \
        const int16x4_t w_ = (wk);                                                                 \
        const int16x8_t xl_ = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(xv), vxz));               \
        const int16x8_t xh_ = vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(xv), vxz));              \
        a0 = vmlal_s16(a0, vget_low_s16(xl_), w_);                                                 \
        a1 = vmlal_s16(a1, vget_high_s16(xl_), w_);                                                \
        a2 = vmlal_s16(a2, vget_low_s16(xh_), w_);                                                 \
        a3 = vmlal_s16(a3, vget_high_s16(xh_), w_);                                                \
    } while (0)
#endif
#if defined(__aarch64__)
typedef int16_t qrt__dw_tap; /**< one tap's w - w_zero as the MAC takes it */
#define QRT__DW_TAP(v) ((int16_t)(v))
#else
typedef int16x4_t qrt__dw_tap;
#define QRT__DW_TAP(v) vdup_n_s16((int16_t)(v))
#endif

/** Everything one output row of the depthwise path needs (besides the taps). */
typedef struct {
    const uint8_t *xr; /**< input row, len_in bytes */
    uint8_t *yr;       /**< output row, len_out bytes */
    const int8_t *wr;  /**< the row's K taps */
    int64_t len_in, len_out, kernel, dilation, pad, stride;
    int32_t wz, xz; /**< weight and input zero points */
    int small_y;    /**< qrt__neon_small_y() holds for this output channel */
    qrt__neon_rq c;
} qrt__dw_row;

/**
 * Output positions [t0, t0 + 16) (stored: those below len_out) with every tap checked (the
 * fallback of qrt__conv1d_dw_run__neon for runs too long for its buffer): a
 * tap inside the row loads in place, one wholly in the padding is skipped (it adds 0), one that
 * straddles an end goes through a 16-byte copy holding input_zero in the padding.  Reads only
 * [xr, xr + len_in) and writes only [yr, yr + len_out).
 */
QRT_NEON_FN static void qrt__conv1d_dw_edge__neon(const qrt__dw_row *r, int64_t t0) {
    const uint8x8_t vxz = vdup_n_u8((uint8_t)r->xz);
#if defined(__aarch64__)
    const uint8x16_t vxzq = vdupq_n_u8((uint8_t)r->xz);
#endif
    const int64_t s = r->stride, L = r->len_in, width = 16 * s;
    const int64_t b = t0 * s - r->pad;
    int32x4_t a0 = r->c.bias, a1 = a0, a2 = a0, a3 = a0;
    for (int64_t k = 0; k < r->kernel; ++k) {
        const int64_t sk = b + k * r->dilation;
        uint8x16_t xv;
        if (sk >= 0 && sk + width <= L) {
            xv = s == 1 ? vld1q_u8(r->xr + sk) : vld2q_u8(r->xr + sk).val[0];
        } else if (sk >= L || sk + 15 * s < 0) {
            continue; /* all 16 positions are padding */
        } else {
            uint8_t tmp[16];
            for (int i = 0; i < 16; ++i) {
                const int64_t pos = sk + i * s;
                tmp[i] = (pos >= 0 && pos < L) ? r->xr[pos] : (uint8_t)r->xz;
            }
            xv = vld1q_u8(tmp);
        }
        QRT__DW_MAC(xv, QRT__DW_TAP((int32_t)r->wr[k] - r->wz));
    }
    const uint8x16_t yv = qrt__neon_requant16(a0, a1, a2, a3, &r->c, 0);
    if (t0 + 16 <= r->len_out) {
        vst1q_u8(r->yr + t0, yv);
    } else {
        uint8_t tmp[16];
        vst1q_u8(tmp, yv);
        for (int64_t i = 0; t0 + i < r->len_out; ++i) r->yr[t0 + i] = tmp[i];
    }
}

/**
 * nb whole blocks: yb[16 i + j] (i < nb, j < 16) from the input at xb, where tap k of block i
 * reads the 16 positions from xb + 16 i s + k d on (every stride-s'th byte); all must be
 * readable.  `kc` is the kernel size (a compile-time constant for the common kernels:
 * always_inline lets the tap loop unroll and the taps stay in registers), wk[k] its taps for
 * kc <= 16 (longer kernels take wr - wz as they go).
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__conv1d_dw_blocks__neon(const uint8_t *xb, uint8_t *yb, ptrdiff_t nb, const int64_t kc,
                            int64_t d, int64_t s, const qrt__dw_tap *wk, const int8_t *wr,
                            int32_t wz, int32_t xz, const qrt__neon_rq *c, const int small) {
    const uint8x8_t vxz = vdup_n_u8((uint8_t)xz);
#if defined(__aarch64__)
    const uint8x16_t vxzq = vdupq_n_u8((uint8_t)xz);
#endif
    const ptrdiff_t step = (ptrdiff_t)(16 * s);
    for (ptrdiff_t i = 0; i < nb; ++i, xb += step, yb += 16) {
        int32x4_t a0 = c->bias, a1 = a0, a2 = a0, a3 = a0;
        if (s == 1) {
            for (int64_t k = 0; k < kc; ++k) {
                const uint8x16_t xv = vld1q_u8(xb + k * d);
                QRT__DW_MAC(xv, kc <= 16 ? wk[k] : QRT__DW_TAP((int32_t)wr[k] - wz));
            }
        } else {
            for (int64_t k = 0; k < kc; ++k) {
                const uint8x16_t xv = vld2q_u8(xb + k * d).val[0];
                QRT__DW_MAC(xv, kc <= 16 ? wk[k] : QRT__DW_TAP((int32_t)wr[k] - wz));
            }
        }
        vst1q_u8(yb, qrt__neon_requant16(a0, a1, a2, a3, c, small));
    }
}

/** Bytes of the zero-point-padded copy an edge run may use (stack). */
#define QRT__DW_PADBUF 1024

/**
 * m consecutive edge blocks from output position t (outputs past len_out are dropped): the
 * input bytes they touch are copied once, with input_zero in the padding, into a small buffer
 * and run through the block loop; a run too long for it (huge padding or dilation) goes block
 * by block through qrt__conv1d_dw_edge__neon.
 */
QRT_NEON_FN static void qrt__conv1d_dw_run__neon(const qrt__dw_row *r, int64_t t, int64_t m) {
    const int64_t s = r->stride, d = r->dilation, kc = r->kernel, L = r->len_in;
    const int64_t lo = t * s - r->pad, need = 16 * m * s + (kc - 1) * d;
    if (need > QRT__DW_PADBUF) {
        for (int64_t j = 0; j < m; ++j) qrt__conv1d_dw_edge__neon(r, t + 16 * j);
        return;
    }
    uint8_t buf[QRT__DW_PADBUF], ybuf[QRT__DW_PADBUF];
    /* buf[i] = input position lo + i: padding below a, the row in [a, b), padding from b */
    const int64_t a = lo >= 0 ? 0 : (-lo < need ? -lo : need);
    const int64_t b = L - lo < a ? a : (L - lo < need ? L - lo : need);
    for (int64_t i = 0; i < a; ++i) buf[i] = (uint8_t)r->xz;
    for (int64_t i = a; i < b; ++i) buf[i] = r->xr[lo + i];
    for (int64_t i = b; i < need; ++i) buf[i] = (uint8_t)r->xz;
    qrt__dw_tap wk[16];
    for (int64_t k = 0; k < kc && k < 16; ++k) wk[k] = QRT__DW_TAP((int32_t)r->wr[k] - r->wz);
    qrt__conv1d_dw_blocks__neon(buf, ybuf, (ptrdiff_t)m, kc, d, s, wk, r->wr, r->wz, r->xz, &r->c,
                                0);
    for (int64_t i = 0; i < 16 * m && t + i < r->len_out; ++i) r->yr[t + i] = ybuf[i];
}

/**
 * One output row: an edge run (qrt__conv1d_dw_run__neon) at each end and in between the
 * interior blocks, whose every tap lies inside the row, read in place with no check.
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__conv1d_dw_row__neon(const qrt__dw_row *r, const int64_t kc) {
    const int64_t s = r->stride, d = r->dilation, pad = r->pad, len_out = r->len_out;
    /* interior block starts t: t*s >= pad and t*s - pad + (kc-1)*d + 16*s <= len_in (the last
     * tap's vector load ends inside the row), and t + 16 <= len_out (a whole store) */
    const int64_t t_lo = (pad + s - 1) / s;
    const int64_t room = r->len_in + pad - (kc - 1) * d - 16 * s;
    int64_t t_hi = room < 0 ? -1 : room / s; /* last interior start */
    if (t_hi > len_out - 16) t_hi = len_out - 16;
    int64_t t = 0;
    const int64_t lim = t_lo < len_out ? t_lo : len_out;
    if (lim > 0) { /* left edge: blocks starting below t_lo */
        const int64_t m = (lim + 15) / 16;
        qrt__conv1d_dw_run__neon(r, 0, m);
        t = 16 * m;
    }
    if (t <= t_hi) {
        qrt__dw_tap wk[16]; /* w - w_zero, for kernels up to 16 taps */
        for (int64_t k = 0; k < kc && k < 16; ++k) wk[k] = QRT__DW_TAP((int32_t)r->wr[k] - r->wz);
        const qrt__neon_rq c = r->c;
        const ptrdiff_t nb = (ptrdiff_t)((t_hi - t) / 16 + 1);
        if (r->small_y)
            qrt__conv1d_dw_blocks__neon(r->xr + (t * s - pad), r->yr + t, nb, kc, d, s, wk, r->wr,
                                        r->wz, r->xz, &c, 1);
        else
            qrt__conv1d_dw_blocks__neon(r->xr + (t * s - pad), r->yr + t, nb, kc, d, s, wk, r->wr,
                                        r->wz, r->xz, &c, 0);
        t += (int64_t)nb * 16;
    }
    if (t < len_out) /* right edge */
        qrt__conv1d_dw_run__neon(r, t, (len_out - t + 15) / 16);
}
#undef QRT__DW_MAC
#undef QRT__DW_TAP

/**
 * @brief The depthwise path of qrt_conv1d_u8__neon() (p already checked, qrt__conv1d_dw_ok(p)).
 *        Bit-exact with qrt_conv1d_u8_ref(); see the file comment.
 */
QRT_NEON_FN void qrt__conv1d_dw__neon(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                      const qrt_conv1d_quant *q, uint8_t *out) {
    const int64_t og = p->c_out / p->groups, kk = p->kernel;
    qrt__dw_row r;
    r.len_in = p->len_in, r.len_out = p->len_out, r.kernel = kk, r.dilation = p->dilation;
    r.pad = p->pad_left, r.stride = p->stride, r.xz = p->input_zero;
    r.c.zero = vdupq_n_s16((int16_t)p->output_zero);
    r.c.lo = vdupq_n_u8((uint8_t)p->output_min);
    r.c.hi = vdupq_n_u8((uint8_t)p->output_max);
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t oc = 0; oc < p->c_out; ++oc) {
            r.xr = x + n * p->x_stride_n + (oc / og) * p->x_stride_c;
            r.yr = out + n * p->y_stride_n + oc * p->y_stride_c;
            r.wr = w + oc * kk;
            r.wz = q->weight_zero[oc];
            r.c.bias = vdupq_n_s32(q->bias_q[oc]);
            r.c.scale = vdupq_n_f32(q->scale[oc]);
            r.small_y = qrt__neon_small_y(kk, q->bias_q[oc], q->scale[oc]);
            switch (kk) { /* common kernels get an unrolled tap loop */
            case 3:
                qrt__conv1d_dw_row__neon(&r, 3);
                break;
            case 5:
                qrt__conv1d_dw_row__neon(&r, 5);
                break;
            case 9:
                qrt__conv1d_dw_row__neon(&r, 9);
                break;
            default:
                qrt__conv1d_dw_row__neon(&r, kk);
                break;
            }
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Receptive-field rows (every other layer: linear, squeeze-excitation 1x1 on 1x1 images,     */
/* kernels > 1): x' packed once per output position, a block of output channels per pass      */
/* ---------------------------------------------------------------------------------------- */

/** Output channels per pass of qrt__conv1d_rows__neon: 8 on aarch64 (32 q registers), 4 on
 *  armv7 (16). */
#if defined(__aarch64__)
#define QRT__ROWS_OC 8
#else
#define QRT__ROWS_OC 4
#endif

/**
 * One output position's taps (xs, `taps` contiguous bytes, taps <= QRT__NEON_CHUNK) times the
 * rows of output channels [oc0, oc1) (w: row oc at w + oc * taps), stored through
 * qrt__conv1d_store.  The taps are packed once as x' = x ^ 0x80 = x - 128 (int8, with sum x');
 * per 16 taps and output channel: smull / smull2 (int8 x int8 -> int16, one product a lane:
 * no overflow), two sadalp into an int32x4 and one into the row's int16 weight sum (<= 2
 * weights a lane per 16 taps: |sum| <= 256 * 128 for taps <= 2048), 6 instructions per 16
 * MACs where qrt__conv1d_dot__neon takes 11.  Then, mod 2^32,
 *   sum (x - xz)(w - wz) = sum x' w + (128 - xz) sum w - wz (sum x' + (128 - xz) taps);
 * a tail under 16 taps goes scalar (nothing is read past a row).
 */
QRT_NEON_FN static void qrt__conv1d_rows__neon(const qrt_conv1d_params *p,
                                               const qrt_conv1d_quant *q, const uint8_t *xs,
                                               const int8_t *w, int64_t taps, int64_t oc0,
                                               int64_t oc1, int64_t n, int64_t t, void *out) {
    int8_t xp[QRT__NEON_CHUNK] __attribute__((aligned(16)));
    const int64_t t16 = taps & ~(int64_t)15;
    const int32_t xz = p->input_zero;
    const uint8x16_t flip = vdupq_n_u8(0x80);
    int32x4_t sxa = vdupq_n_s32(0);
    for (int64_t i = 0; i < t16; i += 16) {
        const int8x16_t v = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + i), flip));
        vst1q_s8(xp + i, v);
        sxa = vpadalq_s16(sxa, vpaddlq_s8(v));
    }
    uint32_t sx = (uint32_t)qrt__neon_hsum_s32(sxa);
    for (int64_t i = t16; i < taps; ++i) {
        xp[i] = (int8_t)(xs[i] ^ 0x80u);
        sx += (uint32_t)(int32_t)xp[i];
    }
    sx += (uint32_t)(128 - xz) * (uint32_t)taps; /* sum (x - xz) */
    for (int64_t ob = oc0; ob < oc1; ob += QRT__ROWS_OC) {
        const int64_t nb = oc1 - ob < QRT__ROWS_OC ? oc1 - ob : QRT__ROWS_OC;
        const int8_t *wr[QRT__ROWS_OC];
        for (int k = 0; k < QRT__ROWS_OC; ++k) wr[k] = w + (ob + (k < nb ? k : nb - 1)) * taps;
        int32x4_t acc[QRT__ROWS_OC];
        int16x8_t ws[QRT__ROWS_OC];
        for (int k = 0; k < QRT__ROWS_OC; ++k) acc[k] = vdupq_n_s32(0), ws[k] = vdupq_n_s16(0);
        for (int64_t i = 0; i < t16; i += 16) {
            const int8x16_t xv = vld1q_s8(xp + i);
            for (int k = 0; k < QRT__ROWS_OC; ++k) {
                const int8x16_t wv = vld1q_s8(wr[k] + i);
                acc[k] = vpadalq_s16(acc[k], vmull_s8(vget_low_s8(xv), vget_low_s8(wv)));
#if defined(__aarch64__)
                acc[k] = vpadalq_s16(acc[k], vmull_high_s8(xv, wv));
#else
                acc[k] = vpadalq_s16(acc[k], vmull_s8(vget_high_s8(xv), vget_high_s8(wv)));
#endif
                ws[k] = vpadalq_s8(ws[k], wv);
            }
        }
        for (int k = 0; k < nb; ++k) {
            uint32_t a = (uint32_t)qrt__neon_hsum_s32(acc[k]);
            uint32_t sw = (uint32_t)qrt__neon_hsum_s32(vpaddlq_s16(ws[k]));
            for (int64_t i = t16; i < taps; ++i) {
                a += (uint32_t)((int32_t)xp[i] * (int32_t)wr[k][i]);
                sw += (uint32_t)(int32_t)wr[k][i];
            }
            const int64_t oc = ob + k;
            a += (uint32_t)(128 - xz) * sw - (uint32_t)q->weight_zero[oc] * sx;
            qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)a);
        }
    }
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); NEON inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
int qrt_conv1d_u8__neon_gemm_ok(const qrt_conv1d_params *p) { return qrt__conv1d_gemm_ok(p); }

QRT_NEON_FN qrt_status qrt_conv1d_u8__neon(const qrt_conv1d_params *p, const uint8_t *x,
                                           const int8_t *w, const qrt_conv1d_quant *q, void *out) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    if (qrt__conv1d_dw_ok(p)) { /* depthwise / c_in = 1: lanes over time */
        qrt__conv1d_dw__neon(p, x, w, q, (uint8_t *)out);
        return QRT_OK;
    }
    if (qrt__conv1d_gemm_ok(p)) { /* kernel-1 GEMM (1x1 conv2d): conv1d_neon_gemm.h */
        qrt__conv1d_gemm__neon(p, x, w, q, out);
        return QRT_OK;
    }
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups;
    const int64_t taps = cg * (int64_t)p->kernel;
    if (taps < 16) /* no full vector per output: the plain loop is faster */
        return qrt_conv1d_u8_ref(p, x, w, q, out);
    uint8_t buf[QRT__NEON_CHUNK];
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t g = 0; g < p->groups; ++g)
            for (int64_t t = 0; t < p->len_out; ++t) {
                if (taps <= QRT__NEON_CHUNK) {
                    const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, 0, taps, buf);
                    qrt__conv1d_rows__neon(p, q, xs, w, taps, g * og, (g + 1) * og, n, t, out);
                    continue;
                }
                for (int64_t oc = g * og; oc < (g + 1) * og; ++oc) {
                    uint32_t acc = 0; /* exact total fits int32; partial chunks sum mod 2^32 */
                    for (int64_t j0 = 0; j0 < taps; j0 += QRT__NEON_CHUNK) {
                        const int64_t j1 =
                            j0 + QRT__NEON_CHUNK < taps ? j0 + QRT__NEON_CHUNK : taps;
                        const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, j0, j1, buf);
                        acc += (uint32_t)qrt__conv1d_dot__neon(xs, w + oc * taps + j0, j1 - j0,
                                                               p->input_zero, q->weight_zero[oc]);
                    }
                    qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)acc);
                }
            }
    return QRT_OK;
}
