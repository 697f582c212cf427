# SPDX-License-Identifier: GPL-2.0
"""zbomb: a zlib stream of n zero bytes (n a multiple of 1 MiB), a few
KiB a MiB, made without compressing n bytes: after a full flush, deflate
writes the same bytes for the same input, so the middle is one block
repeated; then an empty last block and the Adler-32 of n zero bytes
(A = 1, B = n mod 65521).  Imported by the VM tests' bombs."""
import zlib


def zeros(n):
    chunk = bytes(1 << 20)
    c = zlib.compressobj(9)
    head = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    body = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    adler = (n % 65521) << 16 | 1
    return b"".join([head, body * ((n >> 20) - 1), end,
                     adler.to_bytes(4, "big")])
