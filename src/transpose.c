/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file transpose.c
 * @brief Batched 2-d transpose (include/qrt/transpose.h).
 *
 * Bytes: 16x16 tiles with SSE2 unpacks where the compiler targets SSE2 (every x86-64), then
 * 8x8 tiles: an 8x8 tile is eight 64-bit words, row i holding element (i, j) in byte j (little
 * endian: bits 8j).  Three stages swap the off-diagonal 4x4, 2x2 and 1x1 blocks between row
 * pairs (i, i + 4), (i, i + 2), (i, i + 1) with one mask, two shifts and three xors a pair;
 * after them row i holds element (j, i) in byte j, stored as output row i.  Edge tiles (rows or
 * columns not a multiple of 8) and big-endian hosts take the element loop.
 */
#include "qrt/transpose.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define QRT__TR_LE 1
#else
#define QRT__TR_LE 0
#endif

#define QRT__TR_SWAP(a, b, sh, m)                      \
    do {                                               \
        const uint64_t t_ = (((a) >> (sh)) ^ (b)) & (m); \
        (a) ^= t_ << (sh);                             \
        (b) ^= t_;                                     \
    } while (0)

/* dst (row stride dst_rs) <- transpose of the 8x8 byte tile at src (row stride src_rs) */
static inline void qrt__tr_tile8(const uint8_t *src, int64_t src_rs, uint8_t *dst,
                                 int64_t dst_rs) {
    uint64_t r[8];
    for (int i = 0; i < 8; ++i) memcpy(&r[i], src + i * src_rs, 8);
    for (int i = 0; i < 4; ++i) QRT__TR_SWAP(r[i], r[i + 4], 32, 0x00000000FFFFFFFFull);
    for (int i = 0; i < 8; i += (i & 1) ? 3 : 1)
        QRT__TR_SWAP(r[i], r[i + 2], 16, 0x0000FFFF0000FFFFull); /* i = 0, 1, 4, 5 */
    for (int i = 0; i < 8; i += 2) QRT__TR_SWAP(r[i], r[i + 1], 8, 0x00FF00FF00FF00FFull);
    for (int i = 0; i < 8; ++i) memcpy(dst + i * dst_rs, &r[i], 8);
}

#define QRT__TR_PLAIN(T)                                                                          \
    static void qrt__tr_plain_##T(const T *src, int64_t src_rs, T *dst, int64_t dst_rs,           \
                                  int64_t r0, int64_t r1, int64_t c0, int64_t c1) {               \
        for (int64_t c = c0; c < c1; ++c)                                                         \
            for (int64_t r = r0; r < r1; ++r) dst[c * dst_rs + r] = src[r * src_rs + c];          \
    }
QRT__TR_PLAIN(uint8_t)
QRT__TR_PLAIN(uint16_t)
QRT__TR_PLAIN(uint32_t)
#undef QRT__TR_PLAIN

/* 8x8 tiles in blocks of 64 x 64 elements (a block's source and destination lines stay in L1) */
#define QRT__TR_BLOCK 64

#define QRT__TR_RUN(T, TILE8)                                                                     \
    static void qrt__tr_run_##T(int64_t batch, int64_t rows, int64_t cols, const T *src,          \
                                int64_t src_bs, int64_t src_rs, T *dst) {                         \
        for (int64_t b = 0; b < batch; ++b) {                                                     \
            const T *s = src + b * src_bs;                                                        \
            T *d = dst + b * rows * cols;                                                         \
            for (int64_t r0 = 0; r0 < rows; r0 += QRT__TR_BLOCK)                                  \
                for (int64_t c0 = 0; c0 < cols; c0 += QRT__TR_BLOCK) {                            \
                    const int64_t r1 = r0 + QRT__TR_BLOCK < rows ? r0 + QRT__TR_BLOCK : rows;     \
                    const int64_t c1 = c0 + QRT__TR_BLOCK < cols ? c0 + QRT__TR_BLOCK : cols;     \
                    const int64_t r8 = r0 + ((r1 - r0) & ~(int64_t)7);                            \
                    const int64_t c8 = c0 + ((c1 - c0) & ~(int64_t)7);                            \
                    for (int64_t r = r0; r < r8; r += 8)                                          \
                        for (int64_t c = c0; c < c8; c += 8) TILE8;                               \
                    qrt__tr_plain_##T(s, src_rs, d, rows, r8, r1, c0, c1);                        \
                    qrt__tr_plain_##T(s, src_rs, d, rows, r0, r8, c8, c1);                        \
                }                                                                                 \
        }                                                                                         \
    }
#if defined(__SSE2__)
/* 16x16 bytes: four rounds of t[2i] = unpacklo(r[i], r[i + 8]), t[2i + 1] = unpackhi(...)
 * (each round is the perfect shuffle of the 8-bit (row, column) index; four give the
 * transpose): 64 unpacks, 16 loads and 16 stores a tile */
static inline void qrt__tr_tile16(const uint8_t *src, int64_t src_rs, uint8_t *dst,
                                  int64_t dst_rs) {
    __m128i r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128((const __m128i *)(src + i * src_rs));
    for (int k = 0; k < 4; ++k) {
        for (int i = 0; i < 8; ++i) {
            t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        for (int i = 0; i < 16; ++i) r[i] = t[i];
    }
    for (int i = 0; i < 16; ++i) _mm_storeu_si128((__m128i *)(dst + i * dst_rs), r[i]);
}
#define QRT__TR_T16 16
#else
#define QRT__TR_T16 0
#endif

/* bytes: 16x16 tiles (SSE2), then 8x8 tiles (little endian), then the element loop */
static void qrt__tr_run_uint8_t(int64_t batch, int64_t rows, int64_t cols, const uint8_t *src,
                                int64_t src_bs, int64_t src_rs, uint8_t *dst) {
    const int64_t m16 = QRT__TR_T16 ? ~(int64_t)15 : 0, m8 = QRT__TR_LE ? ~(int64_t)7 : 0;
    for (int64_t b = 0; b < batch; ++b) {
        const uint8_t *s = src + b * src_bs;
        uint8_t *d = dst + b * rows * cols;
        for (int64_t r0 = 0; r0 < rows; r0 += QRT__TR_BLOCK)
            for (int64_t c0 = 0; c0 < cols; c0 += QRT__TR_BLOCK) {
                const int64_t r1 = r0 + QRT__TR_BLOCK < rows ? r0 + QRT__TR_BLOCK : rows;
                const int64_t c1 = c0 + QRT__TR_BLOCK < cols ? c0 + QRT__TR_BLOCK : cols;
                const int64_t r16 = r0 + ((r1 - r0) & m16), c16 = c0 + ((c1 - c0) & m16);
                const int64_t r8 = r16 + ((r1 - r16) & m8), c8 = c16 + ((c1 - c16) & m8);
#if defined(__SSE2__)
                for (int64_t r = r0; r < r16; r += 16)
                    for (int64_t c = c0; c < c16; c += 16)
                        qrt__tr_tile16(s + r * src_rs + c, src_rs, d + c * rows + r, rows);
#endif
                for (int64_t r = r0; r < r8; r += 8) /* the band the 16x16 tiles leave */
                    for (int64_t c = r < r16 ? c16 : c0; c < c8; c += 8)
                        qrt__tr_tile8(s + r * src_rs + c, src_rs, d + c * rows + r, rows);
                qrt__tr_plain_uint8_t(s, src_rs, d, rows, r8, r1, c0, c1);
                qrt__tr_plain_uint8_t(s, src_rs, d, rows, r0, r8, c8, c1);
            }
    }
}
QRT__TR_RUN(uint16_t, qrt__tr_plain_uint16_t(s, src_rs, d, rows, r, r + 8, c, c + 8))
QRT__TR_RUN(uint32_t, qrt__tr_plain_uint32_t(s, src_rs, d, rows, r, r + 8, c, c + 8))
#undef QRT__TR_RUN

qrt_status qrt_transpose2d(int64_t esize, int64_t batch, int64_t rows, int64_t cols,
                           const void *src, int64_t src_bs, int64_t src_rs, void *dst) {
    if (batch < 0 || rows < 0 || cols < 0 || src_bs < 0 || src_rs < 0) return QRT_ERR_ARG;
    if (batch == 0 || rows == 0 || cols == 0) return QRT_OK;
    if (!src || !dst) return QRT_ERR_ARG;
    if (esize == 1)
        qrt__tr_run_uint8_t(batch, rows, cols, (const uint8_t *)src, src_bs, src_rs,
                            (uint8_t *)dst);
    else if (esize == 2)
        qrt__tr_run_uint16_t(batch, rows, cols, (const uint16_t *)src, src_bs, src_rs,
                             (uint16_t *)dst);
    else if (esize == 4)
        qrt__tr_run_uint32_t(batch, rows, cols, (const uint32_t *)src, src_bs, src_rs,
                             (uint32_t *)dst);
    else
        return QRT_ERR_ARG;
    return QRT_OK;
}
