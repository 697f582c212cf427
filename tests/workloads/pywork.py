# SPDX-License-Identifier: GPL-2.0
"""pywork: Python work of known proportions, for u_python and b_python.

    python3 pywork.py SECONDS [--no-zlib]

The main thread runs, in a loop, spread() (work_a, work_b and work_c, the
same loop 1:2:4 times as long) and recurse(), which calls itself 8 deep
and then loops 3 times as long as work_a: 10 parts, 1:2:4:3.  A second
thread (squeeze) compresses with zlib, whose C code runs under a Python
frame.  Each part times itself; a sampler thread in the process reads the
main thread's Python stack from sys._current_frames() every 2 ms, as an
outside sampler reads it.  It prints "pywork started" once its threads
run, "pywork squeezing" once squeeze has built its data (a generator
into bytes(), which takes longer the slower the host) and compresses,
and at the end (or on SIGTERM):

    pywork truth work_a=F work_b=F work_c=F recurse=F
    pywork sampler work_a=F work_b=F work_c=F recurse=F samples=N
    pywork lines work_a=L work_b=L work_c=L recurse=L squeeze=L

the shares (fractions of the four parts' time, and of the sampler's
samples with each function on the stack) and the line of each function's
loop, where a sample in it should point.
"""
import signal
import sys
import threading
import time
import zlib

UNIT = 3000
TIMES = {"work_a": 0, "work_b": 0, "work_c": 0, "recurse": 0}
SAMPLES = {k: 0 for k in TIMES}
stop = threading.Event()


def work_a(n):
    s = 0
    for i in range(n):  # work_a's loop
        s += i ^ 3
    return s


def work_b(n):
    s = 0
    for i in range(n):  # work_b's loop
        s += i ^ 3
    return s


def work_c(n):
    s = 0
    for i in range(n):  # work_c's loop
        s += i ^ 3
    return s


def recurse(depth, n):
    if depth:
        return recurse(depth - 1, n)
    s = 0
    for i in range(n):  # recurse's loop
        s += i ^ 3
    return s


def timed(name, fn, *args):
    t = time.perf_counter_ns()
    fn(*args)
    TIMES[name] += time.perf_counter_ns() - t


def spread():
    timed("work_a", work_a, UNIT)
    timed("work_b", work_b, 2 * UNIT)
    timed("work_c", work_c, 4 * UNIT)


def squeeze():
    data = bytes((i * 7919 >> 3) & 0xff for i in range(1 << 20))
    print("pywork squeezing", flush=True)
    while not stop.is_set():
        zlib.compress(data, 6)  # squeeze's call


def sampler(main_id):
    while not stop.is_set():
        time.sleep(0.002)
        frame = sys._current_frames().get(main_id)
        seen = set()
        while frame is not None:
            if frame.f_code.co_name in SAMPLES:
                seen.add(frame.f_code.co_name)
            frame = frame.f_back
        for name in seen:
            SAMPLES[name] += 1


def line_of(fn, marker):
    lines, first = __import__("inspect").getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return first + k
    return first


def shares(counts):
    total = sum(counts.values()) or 1
    return " ".join("%s=%.4f" % (k, v / total) for k, v in counts.items())


def main():
    secs = float(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threads = [threading.Thread(target=sampler,
                                args=(threading.get_ident(),))]
    if "--no-zlib" not in sys.argv:
        threads.append(threading.Thread(target=squeeze, name="squeeze"))
    for t in threads:
        t.start()
    print("pywork started", flush=True)
    end = time.monotonic() + secs
    while not stop.is_set() and time.monotonic() < end:
        spread()
        timed("recurse", recurse, 8, 3 * UNIT)
    stop.set()
    for t in threads:
        t.join()
    print("pywork truth", shares(TIMES))
    print("pywork sampler", shares(SAMPLES),
          "samples=%d" % sum(SAMPLES.values()))
    print("pywork lines",
          " ".join("%s=%d" % (f.__name__, line_of(f, "# %s's" % f.__name__))
                   for f in (work_a, work_b, work_c, recurse, squeeze)))


main()
