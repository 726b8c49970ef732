/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_gemv.c
 * @brief qrt/rnn_gemv.h: which packed GEMV variant runs, and its weight pack.
 */
#include "qrt/rnn_gemv.h"

#include <string.h>

#include "qrt/cpu.h"

static int have(int isa)
{
#if defined(QRT_HAVE_X86)
    const unsigned f = qrt_cpu_features();
    if (isa == QRT_ISA_AVX512VNNI) return (f & QRT_CPU_AVX512VNNI) && (f & QRT_CPU_AVX2);
    if (isa == QRT_ISA_AVX2) return (f & QRT_CPU_AVX2) != 0;
#elif defined(QRT_HAVE_ARM)
    if (isa == QRT_ISA_NEON) return (qrt_cpu_features() & QRT_CPU_NEON) != 0;
#endif
    (void)isa;
    return 0;
}

int qrt_rnn_gemv_pick(int variant)
{
    static const int best_first[] = {QRT_ISA_AVX512VNNI, QRT_ISA_AVX2, QRT_ISA_NEON};
    if (variant >= 0) return have(variant) ? variant : QRT_ISA_REF;
    for (size_t k = 0; k < sizeof best_first / sizeof best_first[0]; k++)
        if (have(best_first[k])) return best_first[k];
    return QRT_ISA_REF;
}

/* rows per block, columns per group and bytes per weight of each layout */
static int layout(int isa, uint32_t *rb, uint32_t *kg, uint32_t *wb)
{
    switch (isa) {
    case QRT_ISA_AVX2: *rb = 8, *kg = 2, *wb = 2; return 1;
    case QRT_ISA_AVX512VNNI: *rb = 16, *kg = 4, *wb = 1; return 1;
    case QRT_ISA_NEON: *rb = 8, *kg = 1, *wb = 2; return 1;
    default: return 0;
    }
}

size_t qrt_rnn_gemv_pack_size(uint32_t rows, uint32_t cols, int isa)
{
    uint32_t rb, kg, wb;
    if (!layout(isa, &rb, &kg, &wb) || rows == 0 || cols == 0) return 0;
    const uint64_t rp = ((uint64_t)rows + rb - 1) / rb * rb;
    const uint64_t kp = ((uint64_t)cols + kg - 1) / kg * kg;
    const uint64_t n = rp * 4 + rp * kp * wb;
    if (n > (uint64_t)SIZE_MAX / 2) return 0;
    return (size_t)n;
}

void qrt_rnn_gemv_pack(const int8_t *w, uint32_t rows, uint32_t cols, int isa, void *pack)
{
    uint32_t rb, kg, wb;
    if (!layout(isa, &rb, &kg, &wb)) return;
    const size_t rp = ((size_t)rows + rb - 1) / rb * rb;
    const size_t kp = ((size_t)cols + kg - 1) / kg * kg;
    uint8_t *out = (uint8_t *)pack;
    for (size_t o = 0; o < rp; o++) {
        int32_t s = 0;
        if (o < rows)
            for (size_t i = 0; i < cols; i++) s += w[o * cols + i];
        memcpy(out + 4 * o, &s, 4);
    }
    uint8_t *pw = out + 4 * rp;
    /* block b, group g, row j in the block, column q in the group */
    for (size_t b = 0; b < rp / rb; b++)
        for (size_t g = 0; g < kp / kg; g++)
            for (size_t j = 0; j < rb; j++)
                for (size_t q = 0; q < kg; q++) {
                    const size_t o = b * rb + j, i = g * kg + q;
                    const int8_t v = (o < rows && i < cols) ? w[o * cols + i] : 0;
                    const size_t at = ((b * (kp / kg) + g) * rb + j) * kg + q;
                    if (wb == 1) {
                        pw[at] = (uint8_t)v;
                    } else {
                        const int16_t v16 = v;
                        memcpy(pw + 2 * at, &v16, 2);
                    }
                }
}
