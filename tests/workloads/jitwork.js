// SPDX-License-Identifier: GPL-2.0
//
// jitwork.js [SECONDS]: three JavaScript functions that V8 compiles, each
// spinning for a set time per round, 1:2:4 (jitA 5 ms, jitB 10 ms, jitC
// 20 ms) under one caller, main, for SECONDS (default 3).  Each loops on
// its own (V8 compiles it on the stack, OSR) and main is called once, so
// no function is inlined into another.  Prints "jitwork PID" at the start.
'use strict';

function jitA(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 2000; i++)
			x += (i * i) % 7;
	return x;
}

function jitB(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 2000; i++)
			x += (i * i) % 11;
	return x;
}

function jitC(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 2000; i++)
			x += (i * i) % 13;
	return x;
}

function main(secs) {
	const stop = Date.now() + secs * 1000;
	let s = 0;
	while (Date.now() < stop) {
		s += jitA(5);
		s += jitB(10);
		s += jitC(20);
	}
	return s;
}

console.log('jitwork', process.pid);
main(Number(process.argv[2] || 3));
