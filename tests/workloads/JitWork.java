// SPDX-License-Identifier: GPL-2.0
//
// java -cp DIR JitWork [SECONDS]: three Java methods, each spinning for a
// set time per round, 1:2:4 (jitA 5 ms, jitB 10 ms, jitC 20 ms) under
// main, for SECONDS (default 3).  Prints "jitwork PID" at the start and
// "warm" after the first second, when the JIT has compiled them.
public class JitWork {
	static long jitA(long ms) {
		long end = System.nanoTime() + ms * 1000000L, x = 0;
		while (System.nanoTime() < end)
			for (int i = 0; i < 2000; i++)
				x += (i * i) % 7;
		return x;
	}

	static long jitB(long ms) {
		long end = System.nanoTime() + ms * 1000000L, x = 0;
		while (System.nanoTime() < end)
			for (int i = 0; i < 2000; i++)
				x += (i * i) % 11;
		return x;
	}

	static long jitC(long ms) {
		long end = System.nanoTime() + ms * 1000000L, x = 0;
		while (System.nanoTime() < end)
			for (int i = 0; i < 2000; i++)
				x += (i * i) % 13;
		return x;
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
		long start = System.nanoTime(), stop = start + (long)(secs * 1e9), s = 0;
		boolean warm = false;

		System.out.println("jitwork " + ProcessHandle.current().pid());
		while (System.nanoTime() < stop) {
			s += jitA(5);
			s += jitB(10);
			s += jitC(20);
			if (!warm && System.nanoTime() - start > 1000000000L) {
				System.out.println("warm");
				warm = true;
			}
		}
		System.out.println("done " + (s > 0));
	}
}
