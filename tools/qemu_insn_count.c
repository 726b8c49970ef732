/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qemu_insn_count.c
 * @brief A minimal qemu-user TCG plugin (plugin API v1, qemu 7.2 as in Debian bookworm, whose
 *        package ships no plugins): counts executed guest instructions (all threads) and prints
 *        "insns N" at exit.  The ARM speed proxy of docs/raspberry-pi.md; used by
 *        tools/count-insns-arm.sh and tools/count-insns-model.sh.  The few declarations it
 *        needs are restated here so no qemu headers are required.
 *
 *        Optional marks: `-plugin libinsn.so,mark=NR` (NR: the guest's write(2) syscall
 *        number, 64 on aarch64, 4 on arm) also prints "mark K insns N dot D" whenever the
 *        guest calls write(-1, buf, K) (from Python: `os.write(-1, b"x" * K)`, which fails
 *        with EBADF and has no other effect), so one process reports the count after each
 *        phase.
 *        `dot=1` (aarch64 guests) also counts executed SDOT/UDOT instructions (vector and
 *        by-element forms) and prints "dot N" at exit: shows whether a runtime's dot-product
 *        kernels ran.
 *        `hist=PATH` also keeps an execution count per translation block: mark 3 (the
 *        model loaded, tools/count_insns_model.py) zeroes them and mark 4 (inference 1
 *        done) writes one line per block executed since, "vaddr n_insns execs hexbytes",
 *        to PATH (tools/insn_hist.py disassembles and groups them: where a runtime's
 *        instructions go, by kernel, without symbols).
 *        The counter is a plain (non-atomic) add per executed translation block: exact for a
 *        single-threaded guest, approximate when several guest threads run at once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
typedef void (*syscall_cb)(qemu_plugin_id_t, unsigned int, int64_t, uint64_t, uint64_t, uint64_t,
                           uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr, uint64_t imm);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, syscall_cb cb);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
static uint64_t count;
static uint64_t dots;
static int64_t mark_nr = -1;
static int count_dot;
struct tbrec { /* one translated block, for hist= */
    uint64_t vaddr, execs;
    uint32_t n, bytes;
    struct tbrec *next;
    unsigned char code[];
};
static struct tbrec *tbs;
static const char *hist_path;
static int is_dot(uint32_t w) { /* A64 SDOT/UDOT: vector (size 10), by element (size 10) */
    return (w & 0x9FE0FC00u) == 0x0E809400u || (w & 0x9FC0F400u) == 0x0F80E000u;
}
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &count, n);
    if (hist_path) {
        size_t bytes = 0;
        for (size_t i = 0; i < n; i++) bytes += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
        struct tbrec *r = calloc(1, sizeof *r + bytes);
        if (r) {
            r->vaddr = qemu_plugin_tb_vaddr(tb);
            r->n = (uint32_t)n;
            r->bytes = (uint32_t)bytes;
            for (size_t i = 0, o = 0; i < n; i++) {
                struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
                size_t k = qemu_plugin_insn_size(insn);
                memcpy(r->code + o, qemu_plugin_insn_data(insn), k);
                o += k;
            }
            r->next = tbs;
            tbs = r;
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &r->execs, 1);
        }
    }
    for (size_t i = 0; count_dot && i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint32_t w;
        if (qemu_plugin_insn_size(insn) != 4)
            continue;
        memcpy(&w, qemu_plugin_insn_data(insn), 4);
        if (is_dot(w))
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &dots, 1);
    }
}
static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8) {
    if (num == mark_nr && (uint32_t)a1 == 0xffffffffu && hist_path && a3 == 3)
        for (struct tbrec *r = tbs; r; r = r->next) r->execs = 0;
    if (num == mark_nr && (uint32_t)a1 == 0xffffffffu && hist_path && a3 == 4) {
        FILE *f = fopen(hist_path, "w");
        for (struct tbrec *r = tbs; f && r; r = r->next) {
            if (!r->execs) continue;
            fprintf(f, "%llx %u %llu ", (unsigned long long)r->vaddr, r->n,
                    (unsigned long long)r->execs);
            for (uint32_t i = 0; i < r->bytes; i++) fprintf(f, "%02x", r->code[i]);
            fputc('\n', f);
        }
        if (f) fclose(f);
    }
    if (num == mark_nr && (uint32_t)a1 == 0xffffffffu)
        fprintf(stderr, "mark %llu insns %llu dot %llu\n", (unsigned long long)a3,
                (unsigned long long)count, (unsigned long long)dots);
}
static void done(qemu_plugin_id_t id, void *p) {
    if (count_dot)
        fprintf(stderr, "dot %llu\n", (unsigned long long)dots);
    fprintf(stderr, "insns %llu\n", (unsigned long long)count);
}
__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "mark=", 5) == 0)
            mark_nr = strtoll(argv[i] + 5, NULL, 10);
        else if (strncmp(argv[i], "hist=", 5) == 0)
            hist_path = argv[i] + 5;
        else if (strcmp(argv[i], "dot=1") == 0)
            count_dot = 1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    if (mark_nr >= 0 || hist_path)
        qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, done, NULL);
    return 0;
}
