#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_elfbomb: shared objects a user preloads into a process, made to cost
# root's `cprof-dump -d` its memory (it symbolizes in the process): one
# of 2 MiB whose compressed .symtab inflates to 2 GiB, and one of 8 Mi
# symbols (192 MiB of .symtab), each spinning in its constructor, beside
# cpuburn.  A 3 s profile exits 0 within 256 MiB of peak RSS (time -v),
# cpuburn's frames named from its symbols and one warning naming each
# file.  tests/unit/test_elfbomb.c shows the same of -i.
# vm-timeout: 120
set -euo pipefail
# userland only: the same on every kernel
[[ $(uname -r) == 6.1.*-amd64 && $(uname -r) != *-rt-* ]] || { echo "u_elfbomb: runs on 6.1 only"; exit 77; }
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

# In TMPDIR (a tmpfs), not OUT: the second is 192 MiB.
tmp=$(mktemp -d)
# Two builds of it, two build IDs: files sharing one may be symbolized
# from whichever of them was read first.
printf 'static volatile unsigned long n = N;\n__attribute__((constructor)) static void bomb_spin(void) { for (;;) n++; }\n' >"$tmp/bomb.c"
cc -DN=1 -fpic -shared -o "$tmp/bomb1.so" "$tmp/bomb.c"
cc -DN=2 -fpic -shared -o "$tmp/bomb2.so" "$tmp/bomb.c"
# Each rewritten: its .symtab replaced by one appended to the file
# (outside every PT_LOAD: ld.so loads it as before), the section headers
# after it.  zsymtab.so: SHF_COMPRESSED, an Elf64_Chdr claiming 2 GiB and
# a zlib stream of as many zeros (tests/vm/lib/zbomb.py).  manysyms.so:
# its symbols and 8 Mi copies of bomb_spin's, made global.
python3 -B - "$tmp/bomb1.so" "$tmp/zsymtab.so" "$tmp/bomb2.so" "$tmp/manysyms.so" "$REPO/tests/vm/lib" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[5])
import zbomb
SHDR = '<IIQQQQIIQQ'

def read(path):
    global src, shs, idx
    src = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', src, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', src, 0x3a)
    shs = [list(struct.unpack_from(SHDR, src, shoff + i * shentsize)) for i in range(shnum)]
    idx = next(i for i, s in enumerate(shs) if name(s[0], shs[shstrndx]) == b'.symtab')

def name(off, strtab):
    o = strtab[4] + off
    return src[o:src.index(0, o)]

def write(path, parts, flags):
    sh = [list(s) for s in shs]
    pad = -len(src) % 8
    sh[idx][2] |= flags
    sh[idx][4] = len(src) + pad
    sh[idx][5] = sum(map(len, parts))
    end = sh[idx][4] + sh[idx][5]
    with open(path, 'wb') as f:
        f.write(src)
        f.write(bytes(pad))
        for p in parts:
            f.write(p)
        f.write(bytes(-end % 8))
        for s in sh:
            f.write(struct.pack(SHDR, *s))
        f.seek(0x28)
        f.write(struct.pack('<Q', end + -end % 8))

read(sys.argv[1])
n = 2048 << 20
write(sys.argv[2], [struct.pack('<IIQQ', 1, 0, n, 8), zbomb.zeros(n)], 0x800)

read(sys.argv[3])
sym = shs[idx]
old = src[sym[4]:sym[4] + sym[5]]
ent = next(old[i:i + 24] for i in range(0, len(old), 24)
           if name(struct.unpack_from('<I', old, i)[0], shs[sym[6]]) == b'bomb_spin')
e = list(struct.unpack('<IBBHQQ', ent))
e[1] = 1 << 4 | 2	# STB_GLOBAL, STT_FUNC
write(sys.argv[4], [old] + [struct.pack('<IBBHQQ', *e) * (1 << 16)] * 128, 0)
EOF
bombs=("$tmp/zsymtab.so" "$tmp/manysyms.so")
for b in "${bombs[@]}"; do
	readelf -SW "$b" | grep -q ' \.symtab ' || fail "$b has no .symtab"
	echo "$b: $(stat -c %s "$b") bytes; $(readelf -SW "$b" | grep -o '\.symtab .*')"
done

kload
for b in "${bombs[@]}"; do
	LD_PRELOAD=$b spawn sleep 600
done
spawn "$WORKLOADS/cpuburn" 600
rc=0
/usr/bin/time -v -o "$OUT/time.txt" "$CPROF_DUMP" -d 3 -o "$OUT/cpu.pb.gz" 2>"$OUT/dump.err" || rc=$?
stop
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$OUT/time.txt")
echo "cprof-dump -d 3 beside both: exit status $rc, peak RSS ${rss:-?} kB, $(awk -F': ' '/Elapsed/ { print $2 }' "$OUT/time.txt") elapsed"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"
((rc == 0)) || fail "cprof-dump -d exited $rc"
((${rss:-0} > 0 && ${rss:-0} <= 256 * 1024)) || fail "cprof-dump's peak RSS is ${rss:-unknown} kB, more than 256 MiB"
for b in "${bombs[@]}"; do
	n=$(grep -cF "$b" "$OUT/dump.err" || true)
	((n == 1)) || fail "$n lines name $b, not one"
	grep -F "$b" "$OUT/dump.err" | grep -q 'past the bound of' || fail "the line naming $b gives no bound"
done
# -symbolize=none: else pprof reads the bombs itself, for what is left
pp -symbolize=none -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/cpu.pb.gz" >"$OUT/top.txt" || fail "go tool pprof cannot read the profile"
read -r l1 l2 l3 fb fa fmain < <(leaves "$OUT/top.txt")
echo "cpuburn's frames (cum samples): leaf1 $l1, leaf2 $l2, leaf3 $l3, b $fb, a $fa, main $fmain"
((l1 > 0 && l2 > 0 && l3 > 0 && fb > 0 && fa > 0 && fmain > 0)) ||
	fail "cpuburn's frames are not all named: $(head -n 15 "$OUT/top.txt")"
echo "u_elfbomb: ok"
