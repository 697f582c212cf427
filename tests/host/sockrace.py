#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Race a --http-group socket's path against a user's symlink.

  sockrace.py DUMP DIR VICTIM ATTEMPTS UID GID

Runs as root.  DIR is a directory everyone may write (not sticky); a racer
running as UID:GID swaps the socket cprof-dump makes at DIR/pprof.sock for
a symlink to VICTIM (a root file) the moment it sees it, and removes the
symlink again for the next attempt.  ATTEMPTS times, cprof-dump serves
`--http unix:DIR/pprof.sock --http-group GID` and is stopped once it says
where it serves.  Prints "ATTEMPTS SWAPS CHANGED": the attempts made, the
swaps the racer made, and 1 if VICTIM's mode or group changed (it stops at
once then), else 0.
"""
import os
import signal
import stat
import subprocess
import sys
import time


def racer(sock, victim, stop):
    tmp = sock + '.swap'
    swaps = 0
    while not os.path.exists(stop):
        try:
            if not os.path.lexists(tmp):
                os.symlink(victim, tmp)
            if stat.S_ISSOCK(os.lstat(sock).st_mode):
                os.rename(tmp, sock)
                swaps += 1
                time.sleep(0.002)
                os.unlink(sock)
        except OSError:
            pass
    print(swaps)


def main():
    if sys.argv[1] == '--racer':
        racer(*sys.argv[2:5])
        return
    dump, d, victim, attempts, uid, gid = sys.argv[1:7]
    sock = os.path.join(d, 'pprof.sock')
    stop = d + '.stop'
    r = subprocess.Popen(['setpriv', '--reuid=' + uid, '--regid=' + gid,
                          '--clear-groups', sys.executable, __file__,
                          '--racer', sock, victim, stop],
                         stdout=subprocess.PIPE)
    before = os.stat(victim)
    changed = 0
    made = 0
    for made in range(1, int(attempts) + 1):
        p = subprocess.Popen([dump, '--http', 'unix:' + sock,
                              '--http-group', gid, '--proc-dir', d,
                              '--no-unwind-tables'],
                             stderr=subprocess.PIPE)
        p.stderr.readline()
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stderr.close()
        now = os.stat(victim)
        if (now.st_mode, now.st_gid) != (before.st_mode, before.st_gid):
            changed = 1
            break
    open(stop, 'w').close()
    swaps = r.communicate()[0].decode().strip()
    print(made, swaps, changed)


main()
