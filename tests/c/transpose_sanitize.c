/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file transpose_sanitize.c
 * @brief qrt_transpose2d (src/transpose.c) under AddressSanitizer + UBSan: random batch, rows,
 *        columns (tile edges, sizes past the 64-element blocks), source strides with gaps,
 *        element sizes 1 / 2 / 4, exact-size buffers, == the definition; bad arguments refused.
 *
 *   gcc -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude \
 *       tests/c/transpose_sanitize.c -o /tmp/trs && /tmp/trs [cases [seed]]   # "ok <cases>"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/transpose.c"

static uint64_t g_s = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    g_s ^= g_s << 13, g_s ^= g_s >> 7, g_s ^= g_s << 17;
    return (uint32_t)(g_s >> 11);
}
static int64_t rin(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static int one_case(int idx) {
    static const int64_t es[3] = {1, 2, 4};
    const int64_t e = es[rnd() % 3];
    const int64_t batch = rin(1, 3), rows = rin(1, rnd() % 4 ? 40 : 200),
                  cols = rin(1, rnd() % 4 ? 40 : 200);
    const int64_t src_rs = cols + (rnd() % 3 ? 0 : rin(1, 9));
    const int64_t src_bs = rows * src_rs + (rnd() % 3 ? 0 : rin(1, 9));
    const size_t sn = (size_t)(((batch - 1) * src_bs + (rows - 1) * src_rs + cols) * e);
    const size_t dn = (size_t)(batch * rows * cols * e);
    uint8_t *s = malloc(sn), *d = malloc(dn);
    for (size_t i = 0; i < sn; ++i) s[i] = (uint8_t)rnd();
    int bad = qrt_transpose2d(e, batch, rows, cols, s, src_bs, src_rs, d) != QRT_OK;
    for (int64_t b = 0; !bad && b < batch; ++b)
        for (int64_t r = 0; !bad && r < rows; ++r)
            for (int64_t c = 0; !bad && c < cols; ++c) {
                const uint8_t *want = s + (b * src_bs + r * src_rs + c) * e;
                const uint8_t *got = d + (b * rows * cols + c * rows + r) * e;
                if (memcmp(want, got, (size_t)e)) {
                    fprintf(stderr, "case %d e%lld b%lld r%lld c%lld rs%lld bs%lld: (%lld,%lld,%lld)\n",
                            idx, (long long)e, (long long)batch, (long long)rows, (long long)cols,
                            (long long)src_rs, (long long)src_bs, (long long)b, (long long)r,
                            (long long)c);
                    bad = 1;
                }
            }
    free(s), free(d);
    return bad;
}

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 400;
    g_s += argc > 2 ? (uint64_t)atoi(argv[2]) * 0x9E3779B97F4A7C15ull : 0;
    uint8_t a[4] = {0}, b[4];
    if (qrt_transpose2d(3, 1, 1, 1, a, 1, 1, b) == QRT_OK ||
        qrt_transpose2d(1, 1, -1, 1, a, 1, 1, b) == QRT_OK ||
        qrt_transpose2d(1, 1, 1, 1, a, 1, -1, b) == QRT_OK ||
        qrt_transpose2d(1, 1, 1, 1, NULL, 1, 1, b) == QRT_OK ||
        qrt_transpose2d(1, 0, 5, 5, NULL, 1, 1, NULL) != QRT_OK) {
        fprintf(stderr, "argument checks\n");
        return 1;
    }
    for (int i = 0; i < cases; ++i)
        if (one_case(i)) return 1;
    printf("ok %d\n", cases);
    return 0;
}
