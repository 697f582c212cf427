# SPDX-License-Identifier: GPL-2.0
# pydeep.py SECONDS: 120 Python calls deep, then spin until SECONDS have
# passed; prints "deep started" when at the bottom.  The deepest Python
# stack the module's budget tests (k_budget, b_worst) walk.
import sys
import time


def rec(n, end):
    if n:
        return rec(n - 1, end)
    print("deep started", flush=True)
    x = 0
    while time.monotonic() < end:
        x += 1
    return x


rec(120, time.monotonic() + float(sys.argv[1]))
