# SPDX-License-Identifier: GPL-2.0
"""tracecheck.py TRACE.json TRACEPONG.out: a timeline of tracepong
(tests/workloads/tracepong.c, run on CPU 0) against what tracepong counted
itself.  Prints what it found, one line each; exits 1 after a "FAIL ..."
line for each check that failed:
  - every switch taking a tracepong thread off the CPU up to its own count
    (less the first thread's base count, read before the ping-pong) is a
    run ending in the trace (its count lies between the runs ended
    before and after it read it), or the trace counts records lost;
  - on CPU 0 the two threads' runs do not overlap and alternate;
  - wake-up flows go from each thread to the other, each ending on the
    other's track at or after its start, the first into the second thread
    its creation's;
  - the stacks the threads left the CPU with name their own functions;
  - both threads are named."""
import json
import sys

trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
other = trace["otherData"]
threads = {}
base = {}
order = []
start_ns = round_trips = None
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "start_ns":
        start_ns = int(f[1])
    elif f[0] == "thread":
        threads[int(f[1])] = (int(f[3]), int(f[5]), int(f[7]))
        order.append(int(f[1]))
    elif f[0] == "base":
        base[int(f[1])] = (int(f[3]), int(f[5]), int(f[7]))
    elif f[0] == "round_trips":
        round_trips = int(f[1])
failed = []


def check(cond, why):
    if not cond:
        failed.append(why)
        print("FAIL " + why)


def ns(us):
    return round(us * 1000)


# records the module or the writer could not keep: each may be a switch
lost = (other["records_lost"] + other["events_over_budget"] +
        other["events_not_kept"])
print("trace: %d events, %d records lost, %d left out over the budget, "
      "%d stacks lost" % (len(events), other["records_lost"],
                          other["events_over_budget"], other["stacks_lost"]))
tids = sorted(threads)
check(len(tids) == 2 and round_trips, "tracepong said no threads or round trips")
check(other["start_ns"] < start_ns and
      other["end_ns"] > max((t[2] for t in threads.values()), default=0),
      "the profile (%d to %d ns) does not cover tracepong's ping-pong (from %s)"
      % (other["start_ns"], other["end_ns"], start_ns))
runs = [e for e in events if e["ph"] == "X" and e["tid"] in threads]
names = {e["tid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "thread_name"}

for tid in tids:
    count, before, after = threads[tid]
    # a thread's switches before the profile: those up to its base count,
    # the runs ending after that count was read
    b_count, b_before, b_after = base.get(tid, (0, -1, -1))
    count -= b_count
    ends = [ns(e["ts"]) + ns(e["dur"]) for e in runs
            if e["tid"] == tid and e["args"]["left"] != "running at the end"]
    lo = sum(1 for t in ends if b_after < t < before)
    hi = sum(1 for t in ends if b_before <= t <= after)
    print("thread %d: %d switches by its own count, %d in the trace "
          "(%d to the moment it counted)" % (tid, count, len(ends), lo))
    check(lo <= count <= hi or (lost and lo <= count <= hi + lost),
          "thread %d: switched %d times by its own count, the trace has %d "
          "to %d of its runs ending then (%d records lost)"
          % (tid, count, lo, hi, lost))
    check(names.get(tid) == "tracepong",
          "thread %d is named %r" % (tid, names.get(tid)))

# the round trips' runs on CPU 0, in time order
end_ns = min(t[1] for t in threads.values()) if threads else 0
cpu0 = sorted((ns(e["ts"]), ns(e["dur"]), e["tid"]) for e in runs
              if e["args"]["cpu"] == 0 and start_ns <= ns(e["ts"]) <= end_ns)
overlaps = sum(1 for a, b in zip(cpu0, cpu0[1:]) if b[0] < a[0] + a[1])
turns = sum(1 for a, b in zip(cpu0, cpu0[1:]) if a[2] != b[2])
pairs = max(len(cpu0) - 1, 1)
print("CPU 0: %d runs of the two threads over %d round trips, %d of %d "
      "next runs the other thread's, %d overlapping" %
      (len(cpu0), round_trips or 0, turns, len(cpu0) - 1, overlaps))
check(len(cpu0) >= (round_trips or 1),
      "CPU 0: %d runs for %s round trips" % (len(cpu0), round_trips))
check(overlaps == 0, "CPU 0: %d runs start before the one before ends" % overlaps)
check(turns >= 0.9 * pairs,
      "CPU 0: only %d of %d next runs are the other thread's" % (turns, pairs))

# wake-up flows between them
starts = {e["id"]: e for e in events if e["ph"] == "s" and e["tid"] in threads}
ends = {e["id"]: e for e in events if e["ph"] == "f"}
flows = {(a, b): 0 for a in tids for b in tids if a != b}
bad = 0
for i, s in starts.items():
    wakee = s["args"]["wakee_tid"]
    if wakee not in threads or wakee == s["tid"]:
        continue
    flows[(s["tid"], wakee)] += 1
    f = ends.get(i)
    # the last wake-up of each may end after the trace
    if f and (f["tid"] != wakee or ns(f["ts"]) < ns(s["ts"])):
        bad += 1
print("wake-up flows: %s" % ", ".join("%d -> %d: %d" % (a, b, n)
                                      for (a, b), n in sorted(flows.items())))
check(all(n > 0 for n in flows.values()),
      "no wake-up flow one way between the threads: %s" % flows)
check(sum(flows.values()) + lost >= (round_trips or 1) // 2,
      "%d wake-up flows between the threads for %s round trips"
      % (sum(flows.values()), round_trips))
check(bad == 0, "%d flows end off the wakee's track or before they start" % bad)

# pong_side's thread, created once the profile ran: its first run has the
# wake-up of its creation (sched_wakeup_new) from ping_side's before it
if len(order) == 2:
    pong = order[1]
    first = min((ns(e["ts"]) for e in runs if e["tid"] == pong), default=None)
    born = [s for s in starts.values() if s["args"]["wakee_tid"] == pong and
            s["tid"] == order[0] and first is not None and
            ns(s["ts"]) <= first]
    print("thread %d: first run at %s ns, %d wake-ups from %d before it" %
          (pong, first, len(born), order[0]))
    check(born or lost, "thread %d: no wake-up from %d before its first run"
          % (pong, order[0]))

# the stacks they left the CPU with
# tracepong prints ping_side's thread first
for tid, func in zip(order, ("ping_side", "pong_side")):
    stacks = [e["args"]["stack"] for e in runs
              if e["tid"] == tid and "stack" in e["args"]]
    own = [s for s in stacks if func in s and
           any(f.startswith("pipe_") or "schedule" in f for f in s)]
    print("thread %d: %d runs ended with a stack, %d through %s and the "
          "kernel's pipe or scheduler" % (tid, len(stacks), len(own), func))
    check(own, "thread %d: no stack names %s and the kernel's pipe or "
          "scheduler: %s" % (tid, func, stacks[:1]))
sys.exit(1 if failed else 0)
