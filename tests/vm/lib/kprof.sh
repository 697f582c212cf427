# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the kernel-module VM tests (k_*.sh), sourced by them.  They
# read the stream with build/workloads/streamtext (independent of
# cprof-dump) and symbolize with /proc/kallsyms and nm, so a k_ test checks
# what the module wrote, not what the converter made of it.  They read the
# lines by field name (rawk, records.sh).

# shellcheck source=assert.sh
. "$REPO/tests/vm/lib/assert.sh"
# shellcheck source=records.sh
. "$REPO/tests/vm/lib/records.sh"

kload() { # [PARAM=VALUE]...
	insmod "$CPROF_KO" "$@" || fail "insmod $* failed"
}

ctl() { # LINE... : one write of all lines
	printf '%s\n' "$@" >/proc/cprof/ctl || fail "ctl write '$*' rejected"
}

# Polling loops use shell builtins only: in a starved VM, starting a program
# can take seconds.
stat_of() { # KEY
	local k v
	while read -r k v; do
		[[ $k == "$1" ]] && { echo "$v"; return 0; }
	done </proc/cprof/stats
	return 0
}

# wait_profiling [TENTHS]: until a profile runs, for at most TENTHS tenths
# of a second (default 100 times CPROF_SLOW); false if none did.
wait_profiling() {
	local i
	for ((i = 0; i < ${1:-$((100 * ${CPROF_SLOW:-1}))}; i++)); do
		[[ $(stat_of profiling) == 1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# wait_lines FILE N [TENTHS]: until FILE has N whole lines, their
# newlines written (a half-written line counted before, and p_mutex once
# read an empty pid after it), for at most TENTHS tenths of a second
# (default 100 times CPROF_SLOW); false if it did not.
wait_lines() {
	local i text
	for ((i = 0; i < ${3:-$((100 * ${CPROF_SLOW:-1}))}; i++)); do
		text=
		[[ -f $1 ]] && { IFS= read -r -d '' text <"$1" || true; }
		text=${text//[!$'\n']/}
		((${#text} >= $2)) && return 0
		sleep 0.1
	done
	return 1
}

# wait_started FILE WHAT [SECONDS]: until a workload's output FILE has a
# line starting with WHAT (it says it runs), for at most SECONDS (30 by
# default) times CPROF_SLOW; else fail, with the end of FILE.
wait_started() {
	local i
	for ((i = 0; i < ${3:-30} * 10 * ${CPROF_SLOW:-1}; i++)); do
		grep -q "^$2" "$1" && return 0
		sleep 0.1
	done
	fail "${2%% *} did not start: $(tail -n 5 "$1")"
}

# settle PID [TRIES]: wait (TRIES half-seconds, default 60: 30 s, at most)
# until PID's CPU time grows by less than a tenth of the time passing (a
# reader done loading unwind tables)
settle() {
	local i a b
	for ((i = 0; i < ${2:-60}; i++)); do
		a=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null) || return 0
		sleep 0.5
		b=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null) || return 0
		((b - a < 5)) && return 0
	done
}

# first_tick FILE: (run in the background before a reader starts) the ms
# from now until the module's tick count moves, into FILE.
first_tick() {
	local t0=${EPOCHREALTIME/./} base
	base=$(stat_of ticks)
	while [[ $(stat_of ticks) == "$base" ]]; do
		sleep 0.01
	done
	echo $(((${EPOCHREALTIME/./} - t0) / 1000)) >"$1"
}

# median [N...]: of the numbers given, or of those on stdin (one a line)
# if none are: the middle one of an odd count, the mean of the middle two
# of an even one ("nan" of none).
# shellcheck disable=SC2120 # arguments, or none: stdin
median() {
	if (($#)); then printf '%s\n' "$@"; else cat; fi | sort -g |
		awk '{ v[NR] = $1 }
		END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]
		      else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# startstop_ms KIND...: for each KIND, a line of how long opening and
# closing /proc/cprof/profile took, three times, in ms ("open/close"):
# the open registers the kind's hooks (text patched), the close removes
# them and waits for them to be gone.  Leaves kind=cpu set.
startstop_ms() {
	local kind i line t0 t1 t2
	for kind in "$@"; do
		ctl "kind=$kind" seconds=1
		line=""
		for ((i = 0; i < 3; i++)); do
			t0=$EPOCHREALTIME
			exec 3</proc/cprof/profile
			t1=$EPOCHREALTIME
			exec 3<&-
			t2=$EPOCHREALTIME
			line+=" $(awk -v a="$t0" -v b="$t1" -v c="$t2" \
				'BEGIN { printf "%.1f/%.1f", (b - a) * 1000, (c - b) * 1000 }')"
		done
		echo "start/stop, ms: $kind:$line"
	done
	ctl kind=cpu
}

# wait_table FILE [TENTHS]: until the module holds FILE's unwind table (its
# inode in /proc/cprof/unwind's list), for at most TENTHS tenths of a second
# (default 600 times CPROF_SLOW); false if it did not.
wait_table() {
	local i ino
	ino=$(stat -L -c %i "$1") || return 1
	for ((i = 0; i < ${2:-$((600 * ${CPROF_SLOW:-1}))}; i++)); do
		awk -v ino="$ino" '$2 == ino { f = 1 } END { exit !f }' /proc/cprof/unwind && return 0
		sleep 0.1
	done
	return 1
}

# slow_ms MS: MS stretched by CPROF_SLOW, for bounds on wall time.
slow_ms() {
	echo $(($1 * ${CPROF_SLOW:-1}))
}

# reader_start FILE [TENTHS]: a reader (pid READER) copies the stream to
# FILE; fails unless the profile starts within TENTHS (wait_profiling's
# default if not given).
# reader_stop: "stop=1" in ctl ends the profile, and the reader reads on to
# the END record.
reader_start() {
	cat /proc/cprof/profile >"$1" &
	READER=$!
	wait_profiling ${2:+"$2"} || fail "the profile did not start"
}
reader_stop() {
	ctl stop=1
	wait "$READER" || fail "reading /proc/cprof/profile failed"
	READER=
}

# read_stalled SECONDS: the profile to stdout as a reader that falls
# behind reads it: its first 4 KiB, then nothing for SECONDS, then the rest
# to the END record.
read_stalled() {
	perl -e 'open(my $f, "<", "/proc/cprof/profile") or die "open: $!\n";
		binmode $f; binmode STDOUT;
		my ($b, $r);
		defined($r = sysread($f, $b, 4096)) or die "read: $!\n";
		print $b;
		sleep $ARGV[0];
		while (($r = sysread($f, $b, 65536))) { print $b }
		defined $r or die "read: $!\n";' "$1"
}

# with_reader RAW CMD [ARG...]: CMD while a reader copies the stream to RAW,
# from the profile's start (waited for up to 30 s) to "stop=1".  For
# commands run by perf record (export -f with_reader wait_profiling
# stat_of), so it fails nothing itself.
with_reader() {
	local raw=$1 r
	shift
	cat /proc/cprof/profile >"$raw" &
	r=$!
	wait_profiling $((300 * ${CPROF_SLOW:-1}))
	"$@"
	echo stop=1 >/proc/cprof/ctl
	wait "$r"
}

# unload_cycles N FREQ: N times, load cprof, start a FREQ Hz profile with a
# reader blocked in read(), and rmmod a moment later; prints each rmmod's
# time and sets COMPLETE to the number of readers whose stream ended well
# with reason "unload" (a reader that had not read yet gets EOF or EIO).
unload_cycles() {
	local i reader t0
	COMPLETE=0
	for ((i = 1; i <= $1; i++)); do
		kload freq="$2" seconds=30
		cat /proc/cprof/profile >"$OUT/cycle.raw" 2>/dev/null &
		reader=$!
		sleep 0.$((RANDOM % 7 + 2))
		t0=${EPOCHREALTIME/./}
		rmmod cprof || fail "cycle $i: rmmod failed"
		wait "$reader" || true
		echo "cycle $i: rmmod took $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
		if [[ -s $OUT/cycle.raw ]] &&
			"$WORKLOADS/streamtext" <"$OUT/cycle.raw" >"$OUT/cycle.txt" 2>/dev/null &&
			rawk '$1 == "E" && $E_reason == 2 { ok = 1 } END { exit !ok }' "$OUT/cycle.txt"; then
			COMPLETE=$((COMPLETE + 1))
		fi
	done
}

# profile FILE: run one profile with the current settings into FILE and
# write its text form to FILE.txt.
profile() {
	cat /proc/cprof/profile >"$1" || fail "reading /proc/cprof/profile failed"
	"$WORKLOADS/streamtext" <"$1" >"$1.txt" || fail "$1 is not a well-formed stream"
}

# symbolize STREAM.txt > OUT: one line per sample, its layout sym (rawk),
#   pid tid cpu flags comm K kframe;kframe... U uframe;uframe...
# innermost first; frames as function names ("?" when unknown; "-" for
# none), the same pid, tid, cpu, flags and comm as the stream's.  User
# frames are resolved for the executables named in BINARIES (space
# separated, env) from the stream's mapping records and nm.  Every frame
# but a part's first is a return address and is looked up at address - 1.
record_layout sym 1 pid tid cpu flags comm K kernel U user
symbolize() {
	local txt=$1 bin syms
	syms=$(mktemp)
	# /proc/kallsyms and nm print "address type name": the text symbols as
	# "K address name" and "U binary address name"
	awk '$2 ~ /^[tTwW]$/ { print "K", $1, $3 }' /proc/kallsyms >"$syms"
	for bin in ${BINARIES:-}; do
		nm --defined-only "$bin" | awk -v b="$bin" '$2 ~ /^[tTwW]$/ { print "U", b, $1, $3 }' >>"$syms"
	done
	sort -k1,1 -k2,2 "$syms" -o "$syms"
	rawk '
	# the low 48 bits: exact in a double, and unique within kernel text
	function hex(s,   i, c, v) {
		v = 0; s = tolower(s)
		if (length(s) > 12) s = substr(s, length(s) - 11)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	# binary search in arrays A (addresses) / N (names) of n entries
	function lookup(A, N, n, x,   lo, hi, mid) {
		lo = 1; hi = n
		if (n == 0 || x < A[1]) return "?"
		while (lo < hi) {
			mid = int((lo + hi + 1) / 2)
			if (A[mid] <= x) lo = mid; else hi = mid - 1
		}
		return N[lo]
	}
	FNR == NR {
		if ($1 == "K") { nk++; KA[nk] = hex($2); KN[nk] = $3 }
		else { b = $2; nu[b]++; UA[b, nu[b]] = hex($3); UN[b, nu[b]] = $4 }
		next
	}
	$1 == "M" {
		nm_++; MP[nm_] = $M_pid; MS[nm_] = hex($M_start); ME[nm_] = hex($M_end)
		MO[nm_] = hex($M_pgoff); MF[nm_] = $M_path; next
	}
	$1 != "S" { next }
	{
		pid = $S_pid; nkf = $S_nr_kernel; nuf = $S_nr_user; fl = $S_flags
		k = ""; u = ""
		for (i = 0; i < nkf; i++) {
			x = hex($(S_ip + i)) - (i ? 1 : 0)
			k = k (i ? ";" : "") lookup(KA, KN, nk, x)
		}
		for (i = 0; i < nuf; i++) {
			x = hex($(S_ip + nkf + i))
			if (i || (fl % 2 == 0 && int(fl / 64) % 2 == 0)) x -= 1
			name = "?"
			for (m = nm_; m >= 1; m--) {
				if (MP[m] != pid || x < MS[m] || x >= ME[m]) continue
				f = MF[m]
				if (!(f in nu)) break
				n = nu[f]
				delete A; delete N
				for (j = 1; j <= n; j++) { A[j] = UA[f, j]; N[j] = UN[f, j] }
				name = lookup(A, N, n, x - MS[m] + MO[m])
				break
			}
			u = u (i ? ";" : "") name
		}
		# in the order of the layout sym
		print pid, $S_tid, $S_cpu, fl, $S_comm, "K", (k == "" ? "-" : k), "U", (u == "" ? "-" : u)
	}' "$syms" "$txt"
	rm -f "$syms"
}
