# SPDX-License-Identifier: Apache-2.0
"""Where a runtime's executed instructions go, without symbols: reads the per-block counts that
tools/qemu_insn_count.c writes with `hist=PATH` (HIST=1 tools/count-insns-model.sh: one
inference of MobileNetV2) and the guest's /proc/self/maps beside them, disassembles every block
that ran (aarch64-linux-gnu-objdump) and prints

  - executed instructions per mapped file (libraries);
  - executed instructions per mnemonic, overall and per file;
  - the hottest regions: blocks grouped into address windows of --gap bytes, with their
    instruction mix and, with --show N, the disassembly of the N hottest blocks.

    python3 tools/insn_hist.py HIST MAPS [--top 30] [--show 0] [--gap 512] [--lib SUBSTR]

A proxy as the counts are (docs/raspberry-pi.md): instructions, not cycles.
"""

import argparse
import bisect
import collections
import os
import subprocess
import sys
import tempfile

OBJDUMP = os.environ.get("OBJDUMP", "aarch64-linux-gnu-objdump")


def read_maps(path):
    spans = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(v, 16) for v in parts[0].split("-"))
            off = int(parts[2], 16)
            name = parts[5] if len(parts) > 5 else "[anon]"
            spans.append((lo, hi, off, name))
    spans.sort()
    return spans


def where(spans, starts, addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and spans[i][0] <= addr < spans[i][1]:
        lo, _, off, name = spans[i]
        return os.path.basename(name), addr - lo + off
    return "[unmapped]", addr


def disassemble(blocks):
    """{vaddr: [(mnemonic, text)]} for blocks [(vaddr, bytes)], one objdump run per block
    batch (each block written at its own offset of one file)."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for k in range(0, len(blocks), 2000):
            batch = blocks[k:k + 2000]
            path = os.path.join(d, "b.bin")
            offs = []
            with open(path, "wb") as f:
                for va, code in batch:
                    offs.append((f.tell(), va, len(code)))
                    f.write(code)
            txt = subprocess.run([OBJDUMP, "-D", "-b", "binary", "-maarch64", path],
                                 capture_output=True, text=True, check=True).stdout
            ins = {}
            for line in txt.splitlines():
                parts = line.split("\t")
                if len(parts) < 3 or not parts[0].strip().endswith(":"):
                    continue
                try:
                    a = int(parts[0].strip()[:-1], 16)
                except ValueError:
                    continue
                ins[a] = (parts[2].split()[0] if parts[2].split() else "?",
                          " ".join(parts[2:]).strip())
            for o, va, n in offs:
                out[va] = [ins.get(o + 4 * i, ("?", "?")) for i in range(n // 4)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hist")
    ap.add_argument("maps")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--gap", type=int, default=512)
    ap.add_argument("--lib", default="")
    a = ap.parse_args()
    spans = read_maps(a.maps)
    starts = [s[0] for s in spans]
    recs = collections.defaultdict(lambda: [0, b""])
    with open(a.hist) as f:
        for line in f:
            va, n, ex, hx = line.split()
            r = recs[int(va, 16)]
            r[0] += int(ex)
            r[1] = bytes.fromhex(hx)
    dis = disassemble([(va, code) for va, (_, code) in recs.items()])
    total = 0
    per_lib = collections.Counter()
    mn_all = collections.Counter()
    mn_lib = collections.defaultdict(collections.Counter)
    regions = collections.defaultdict(lambda: [0, collections.Counter(), []])
    for va, (ex, code) in recs.items():
        lib, off = where(spans, starts, va)
        ins = dis[va]
        n = ex * len(ins)
        total += n
        per_lib[lib] += n
        for m, _ in ins:
            mn_all[m] += ex
            mn_lib[lib][m] += ex
        if a.lib and a.lib not in lib:
            continue
        reg = regions[(lib, off // a.gap)]
        reg[0] += n
        for m, _ in ins:
            reg[1][m] += ex
        reg[2].append((n, va, off, ex, ins))
    print(f"total {total / 1e6:.2f} M executed instructions")
    print("\nper file:")
    for lib, n in per_lib.most_common():
        if n >= total * 0.001:
            top = ", ".join(f"{m} {c / 1e6:.2f}" for m, c in mn_lib[lib].most_common(12))
            print(f"  {n / 1e6:8.2f} M  {lib}\n              {top}")
    print("\nper mnemonic (all):")
    print("  " + ", ".join(f"{m} {c / 1e6:.2f}" for m, c in mn_all.most_common(40)))
    print(f"\nhottest {a.gap}-byte regions{' of ' + a.lib if a.lib else ''}:")
    shown = 0
    for (lib, _), (n, mix, blocks) in sorted(regions.items(), key=lambda kv: -kv[1][0])[:a.top]:
        lo = min(b[2] for b in blocks)
        mixs = ", ".join(f"{m} {c / 1e6:.2f}" for m, c in mix.most_common(10))
        print(f"  {n / 1e6:7.2f} M  {lib}+{lo:#x}: {mixs}")
        for bn, va, off, ex, ins in sorted(blocks, reverse=True):
            if shown >= a.show:
                break
            shown += 1
            print(f"    block {lib}+{off:#x}: {len(ins)} insns x {ex} = {bn / 1e6:.2f} M")
            for _, t in ins:
                print(f"      {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
