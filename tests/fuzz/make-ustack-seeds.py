#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# tests/fuzz/make-ustack-seeds.py DIR: write fuzz_ustack's seeds, one per
# CFA rule the module follows, each a table of two rows (the rule from
# file offset 0x100, none from 0x200) and a stack copy that the rule walks
# up (fuzz_ustack.c says how an input is laid out).
import struct
import sys

SP = 0x7FFD0000


def table(base, cfa_off, fp_rule=0, fp_off=0, flags=0):
    hdr = struct.pack("<IIQIIQqII", 0x32545543, 48, 1, 0, 2, 0, 0, flags, 2)
    rules = struct.pack("<BBhi", base, fp_rule, fp_off, cfa_off)
    rules += struct.pack("<BBhi", 0, 0, 0, 0)
    return hdr + rules + struct.pack("<II", 0x100, 0x200) + struct.pack("<HH", 0, 1)


def seed(tab, words, frame=0, regs=None, regflags=0):
    regs = list(regs or [0] * 16)
    regs[0] = 0x120  # fuzz_ustack's ip: 0x400000 + regs[0]
    regs[7] = SP
    copy = b"".join(struct.pack("<Q", w) for w in words)
    rec = struct.pack("<HHI", frame, 0, len(copy)) + struct.pack("<16Q", *regs)
    return struct.pack("<I", len(tab)) + bytes([tab[0] | regflags]) + tab[1:] + rec + copy


def pair(lo, hi):
    return ((hi & 0xFFFF) << 16 | (lo & 0xFFFF)) - (1 << 32 if hi & 0x8000 else 0)


seeds = {
    "sp-leaf": seed(table(1, 8), [0x400150, 0]),
    "fp-rbp": seed(table(2, 16, 1, -16), [0, SP + 32, 0x400180, 0, 0]),
    "plt": seed(table(3, 0), [0x400150, 0x400160, 0]),
    "end": seed(table(4, 0), [0]),
    "sp-deref": seed(table(6, pair(8, 16)), [0, SP + 16, 0, 0x400110, 0]),
    "fp-deref": seed(table(7, pair(-8, 0), 2, -16), [0, 0, SP + 40, 0x400110, 0]),
    "reg": seed(table(8, pair(8, 12)), [0, 0x400130, 0],
                regs=[0] * 12 + [SP + 8] + [0] * 3, regflags=1),
    "fp-table": seed(table(1, 8, flags=1), [0x400150, 0], frame=1),
    "no-table": struct.pack("<I", 0) + struct.pack("<HHI", 0, 0, 24)
    + struct.pack("<16Q", *([0x300] + [0] * 5 + [SP + 8, SP] + [0] * 8))
    + struct.pack("<3Q", 0, SP + 16, 0x400500),
}
for name, data in seeds.items():
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(data)
