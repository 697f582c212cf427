#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A profile request whose client half-closes, or closes, after sending it.

  halfclose.py ADDR TOKEN_FILE half|close

ADDR is a port on 127.0.0.1 or the path of a Unix socket; TOKEN_FILE is
"-" for none.  half: shut down the sending side and print the status line
of the final answer (interim 1xx answers skipped), or "none".  close:
close the connection at once and print nothing.
"""
import socket
import sys

addr, token, mode = sys.argv[1:4]
auth = ''
if token != '-':
    auth = 'Authorization: Bearer %s\r\n' % open(token).read().strip()
req = ('GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\nHost: localhost\r\n'
       '%s\r\n' % auth).encode()
if addr.isdigit():
    s = socket.create_connection(('127.0.0.1', int(addr)))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(addr)
s.sendall(req)
if mode == 'close':
    s.close()
    sys.exit(0)
s.shutdown(socket.SHUT_WR)
s.settimeout(30)
got = b''
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    got += chunk
final = 'none'
for line in got.split(b'\r\n'):
    if line.startswith(b'HTTP/1.1 ') and not line.startswith(b'HTTP/1.1 1'):
        final = line.decode()
        break
print(final)
