// SPDX-License-Identifier: GPL-2.0
//
// jitcall.js [SECONDS]: one worker, work, called by three functions for
// 1:2:4 of its time (jsOne 2 ms, jsTwo 4 ms, jsFour 8 ms a round), under
// main, for SECONDS (default 3).  V8 compiles the four as they run, tier
// after tier (run with --no-turbo-inlining, work stays a frame of its
// own).  Prints "jitcall PID" at the start.
'use strict';

function work(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 500; i++)
			x += (i * i) % 7;
	return x;
}

function jsOne() {
	return work(2);
}

function jsTwo() {
	return work(4);
}

function jsFour() {
	return work(8);
}

function main(secs) {
	const stop = Date.now() + secs * 1000;
	let s = 0;
	while (Date.now() < stop)
		s += jsOne() + jsTwo() + jsFour();
	return s;
}

console.log('jitcall', process.pid);
main(Number(process.argv[2] || 3));
