/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_ref.c
 * @brief The reference (specification) kernels declared in qrt/ref/conv1d_ref.h: plain loops,
 *        compiled with the baseline flags only.
 */
#include "qrt/ref/conv1d_ref.h"

qrt_status qrt_conv1d_u8_ref(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                             const qrt_conv1d_quant *q, void *out) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups, kk = p->kernel;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t oc = 0; oc < p->c_out; ++oc) {
            const int64_t g = oc / og;
            const int32_t wz = q->weight_zero[oc];
            for (int64_t t = 0; t < p->len_out; ++t) {
                int64_t acc = 0;
                for (int64_t ic = 0; ic < cg; ++ic)
                    for (int64_t k = 0; k < kk; ++k) {
                        const int64_t tm = t * p->stride + k * p->dilation - p->pad_left;
                        if (tm < 0 || tm >= p->len_in) continue;
                        const int32_t xv = x[n * p->x_stride_n + (g * cg + ic) * p->x_stride_c +
                                             tm * p->x_stride_t];
                        acc += (int64_t)(xv - p->input_zero) * (w[(oc * cg + ic) * kk + k] - wz);
                    }
                const int64_t o = n * p->y_stride_n + oc * p->y_stride_c + t * p->y_stride_t;
                if (p->out_kind == QRT_CONV1D_OUT_F32)
                    ((float *)out)[o] =
                        qrt_dequant_acc_f32((int32_t)acc, q->scale[oc], q->bias_f[oc]);
                else
                    ((uint8_t *)out)[o] = qrt_requant_fp32_u8(
                        qrt_add_s32_wrap((int32_t)acc, q->bias_q[oc]), q->scale[oc], p->output_zero,
                        p->output_min, p->output_max);
            }
        }
    return QRT_OK;
}
