/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_softmax_avx2.c
 * @brief qrt_softmax_rows_f32__avx2: the reference loop of src/float_softmax.c compiled with
 *        AVX2 (src/meson.build), the same bits.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the selects; no value changes */
#endif
#include "../float_softmax_body.h"
#include "qrt/float_softmax.h"

QRT_SOFTMAX_ROWS(qrt_softmax_rows_f32__avx2)
