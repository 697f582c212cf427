# SPDX-License-Identifier: GPL-2.0
"""pyfresh: a Python program that makes new code objects while it runs.

    python3 pyfresh.py SECONDS

Every few milliseconds it compiles a new function, fresh_N, and runs it
for a while; it keeps every function alive, so that no code object's
address is used again by a newer one.  A profile of it meets a code
object its module has not named yet on most ticks.  It prints
"pyfresh started" once it runs and, at the end, "pyfresh made N".
"""
import sys
import time

SOURCE = """
def fresh_{n}(loops):
    total = 0
    for i in range(loops):
        total += i
    return total
"""


def main():
    end = time.monotonic() + float(sys.argv[1])
    kept = []
    print("pyfresh started", flush=True)
    while time.monotonic() < end:
        name = "fresh_%d" % len(kept)
        scope = {}
        exec(compile(SOURCE.format(n=len(kept)), "<" + name + ">", "exec"),
             scope)
        kept.append(scope[name])
        kept[-1](3000)
    print("pyfresh made %d" % len(kept), flush=True)


main()
