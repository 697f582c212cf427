#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-escape.sh: every %s of a message cprof-dump prints (warning(),
# fail(), fprintf(stderr, ...), ksyms' ld_err(), tableload's append() of a
# warning, connguard's refusal lines) is a string nobody but cprof-dump chose, or goes through esc()
# or esc_n() (util.h): a string literal, a condition between such, a C
# library's or libelf's error message, or an argument ALLOWED below names
# with the reason it is safe (an entry that matches nothing is a finding).
# Then copies of userland with an argument unwrapped must be caught.  Run
# by tests/host/run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}

# FILE ARGUMENT: messages cprof-dump composed itself (of esc()'d strings).
ALLOWED='
answer.c msg           # boxed: a literal reason or strerror()
cachedir.c kind->what  # struct cachedir_kind: literals of its callers
cachedir.c kind->items # struct cachedir_kind: literals of its callers
cachedir.c kind->without # struct cachedir_kind: literals of its callers
cli.c msg              # modprofile: the module'"'"'s paths and errno
debugfetch.c why       # counts and strerror()
httpauth.c what        # an option'"'"'s name, a literal at each call
httpauth.c opt         # an option'"'"'s name, a literal at each call
httpauth.c la->shown   # listen.c: the address, esc()d
httpd.c la.shown       # listen.c: the address, esc()d
httpd.c who            # describe(): the method and URL, esc_n()d
httpd.c q.err          # parse_param(): the value, esc_n()d
httpd.c msg            # literals and answer reasons
httpd.c why            # httpauth: the client'"'"'s values, esc_n()d
httpd.c w.gone_in      # a literal phase
ksyms.c err            # ld_err(), itself checked here
kcache.c l->err        # ksyms__load_quiet(): ld_err(), checked here
kcache.c l->warn       # get(): a literal, the name of the entry esc()d
listen.c la->shown     # the address, esc()d where it is made
mhd.c lib->soname      # libs[]: literals
mhd.c lib->package     # libs[]: literals
mhd.c fn->name         # fns[]: literals (FN()'"'"'s #f)
pprof.c gz->zs.msg ? gz->zs.msg : "zlib init" # zlib'"'"'s message
resolve.c line         # the summaries, built of esc()d names
stream.c what          # stream__rec_name(): a literal
symcache.c why         # bad_entry(): a literal at each call
stream.c stream__rec_name(r->type) # a literal
tableload.c line       # append(), itself checked here
tableload.c cfi_stop_name(k) # a literal
util.c what            # parse_long(): an option'"'"'s name, a literal
windows.c why          # answer__build(): a literal reason or strerror()
'

# unescaped DIR: "FILE:LINE: ARGUMENT" for each %s argument of a message
# in DIR/*.c and its stages' DIR/*/*.c that is neither safe by its form nor
# ALLOWED (by the file's name); then an ALLOWED entry that matched nothing.
unescaped() {
	ALLOWED=$ALLOWED perl -e '
		use strict; use warnings;
		my %allow;
		for (split /\n/, $ENV{ALLOWED}) {
			s/#.*//; s/^\s+|\s+$//g;
			next unless length;
			my ($f, $a) = split / +/, $_, 2;
			$allow{"$f $a"} = 0;
		}
		my $bal; $bal = qr/\((?:[^()"\x27]++|"(?:[^"\\]|\\.)*+"|\x27(?:[^\x27\\]|\\.)*+\x27|(??{$bal}))*\)/s;
		my $safe_fn = qr/^(?:esc|esc_n|strerror|safe_strerror|gai_strerror|elf_errmsg|dwfl_errmsg)\s*\(/;
		sub safe {
			my $a = shift;
			return 1 if $a =~ /^"(?:[^"\\]|\\.)*"$/;
			return 1 if $a =~ $safe_fn && $a =~ /\)$/;
			# c ? x : y, the branches literals or safe calls
			if ($a =~ /^[^?"]*\?\s*("(?:[^"\\]|\\.)*"|[\w]+\s*$bal)\s*:\s*(.+)$/) {
				return safe($1) && safe($2);
			}
			return 0;
		}
		for my $path (@ARGV) {
			(my $f = $path) =~ s|.*/||;
			open my $fh, "<", $path or die "$path: $!";
			my $src = do { local $/; <$fh> };
			$src =~ s{/\*.*?\*/}{ (my $c = $&) =~ s/[^\n]//g; $c }gse;
			while ($src =~ /\b(warning|fail|ld_err|append|fprintf|connguard__refusal)\s*(?=\()/g) {
				my ($fn, $pos) = ($1, pos($src));
				my $line = 1 + (substr($src, 0, $pos) =~ tr/\n//);
				next unless substr($src, $pos) =~ /^($bal)/;
				my $inner = substr($1, 1, -1);
				my (@args, $cur, $d);
				($cur, $d) = ("", 0);
				while ($inner =~ /\G("(?:[^"\\]|\\.)*"|\x27(?:[^\x27\\]|\\.)*\x27|[(\[{]|[)\]}]|[^"\x27()\[\]{},]+|,)/gs) {
					my $t = $1;
					$d++ if $t =~ /^[(\[{]$/;
					$d-- if $t =~ /^[)\]}]$/;
					if ($t eq "," && !$d) { push @args, $cur; $cur = ""; next }
					$cur .= $t;
				}
				push @args, $cur;
				s/^\s+|\s+$//g, s/\s+/ /g for @args;
				# the format: after fprintf'"'"'s stream, a line'"'"'s buffer
				if ($fn eq "fprintf") { next unless $args[0] eq "stderr"; shift @args }
				shift @args if $fn eq "ld_err" || $fn eq "connguard__refusal";
				splice @args, 0, 3 if $fn eq "append";
				next if ($fn eq "ld_err" || $fn eq "connguard__refusal") &&
					$args[0] =~ /^const char \*/;
				my $fmt = shift @args // "";
				# "%" PRIu64 "...": the macro'"'"'s conversion in its place
				$fmt =~ s/"\s*PRI([a-zA-Z])\w*\s*"/$1/g;
				my $lit = join "", $fmt =~ /"((?:[^"\\]|\\.)*)"/g;
				my $i = 0;
				while ($lit =~ /%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?(?:hh|h|ll|l|z|j|t|L)?([a-zA-Z%])/g) {
					next if $3 eq "%";
					$i++ if defined $1 && $1 eq "*";
					$i++ if defined $2 && $2 eq "*";
					my $a = $args[$i++] // "(missing)";
					next if $3 ne "s" || safe($a);
					if (exists $allow{"$f $a"}) { $allow{"$f $a"}++; next }
					print "$path:$line: $a\n";
				}
			}
		}
		for (sort keys %allow) {
			print "ALLOWED: $_: matches no message\n" unless $allow{$_};
		}' "$1"/*.c "$1"/*/*.c
}

unescaped userland >"$tmp/found"
if [[ -s $tmp/found ]]; then
	not_ok "messages print a string not passed through esc():"
	sed 's/^/    /' "$tmp/found"
else
	ok "every %s of warning(), fail(), ld_err(), append(), connguard__refusal() and fprintf(stderr) is esc()'d, a literal, an error message or ALLOWED ($(grep -c '^[a-z]' <<<"$ALLOWED") entries)"
fi

# Damaged copies: each must be caught, naming the argument.
damage() {
	local what=$1 file=$2 expr=$3 want=$4
	rm -rf "$tmp/damaged" && mkdir -p "$tmp/damaged"
	(cd userland && cp --parents ./*.c ./*/*.c "$tmp/damaged/")
	sed -i -E "$expr" "$tmp/damaged/$file"
	if cmp -s "userland/$file" "$tmp/damaged/$file"; then
		not_ok "$what: the damage did not apply"
	elif unescaped "$tmp/damaged" | grep -qF -- "$file:" &&
		unescaped "$tmp/damaged" | grep -qF -- ": $want"; then
		ok "$what is caught: $(unescaped "$tmp/damaged" | grep -F -m1 -- ": $want" | sed 's|.*/||')"
	else
		not_ok "$what passes"
	fi
}
damage "a mapping's path unwrapped in a tableload warning" unwind/tableload.c \
	's/esc\(it->path\), \(int\)it->pid\);/it->path, (int)it->pid);/' 'it->path'
damage "a new warning naming a cgroup path" symbolize/resolve.c \
	's/^(\t*)(warning\("%s", line\);)/\1\2 warning("cgroup %s", cg->path);/' 'cg->path'
damage "an unwrapped name behind a condition" cli.c \
	's/esc\(in_name\), \(unsigned long long\)end->samples/in_name ? in_name : "-", (unsigned long long)end->samples/' \
	'in_name ? in_name : "-"'

report
