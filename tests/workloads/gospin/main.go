// SPDX-License-Identifier: GPL-2.0

// gospin [SECONDS]: spin for SECONDS (default 5) in one small Go leaf shared
// by two callers, in a known call graph:
//
//	main.main -> main.one   -> main.spin   1 part of the work
//	          -> main.three -> main.spin   3 parts
//
// The Go compiler gives a leaf that needs no stack no frame at all (frame
// size 0: no SUBQ SP, BP not saved, no stack-bound check), while one, three
// and main save BP and point it at their frame.  A frame-pointer unwind
// from a sample in spin therefore reads its caller's frame as spin's and
// loses one or three; an unwinder that knows spin's frame size (Go's
// pclntab, or .debug_frame: Go writes no .eh_frame) finds
// spin <- one|three <- main, split 1:3.
//
// Built by the Makefile (GO111MODULE=off, no network).  Prints how many
// rounds it did.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// unit is the iterations per spin call: a few tens of microseconds.
const unit = 20000

var sink uint64

// rng draws each spin call's length.
var rng uint64 = 0x9e3779b97f4a7c15

// length is a spin call's iterations: unit on average, uniform in
// [unit/2, 3*unit/2).  Calls of one fixed length make rounds of one fixed
// period, and a sampling period near a multiple of it samples the same
// few places of each round (aliasing): under emulation, whose speed drifts
// with the host's load, the share of one then moved by 3 or 4 points from
// run to run.  Lengths drawn at random keep 1:3 on average and no phase.
func length() uint64 {
	rng ^= rng << 13
	rng ^= rng >> 7
	rng ^= rng << 17
	return unit/2 + rng%unit
}

// spin is a register-only loop: no calls, no locals on the stack.
//
//go:noinline
func spin(n uint64) uint64 {
	x := n | 1
	for ; n > 0; n-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// one and three add spin's result to sink after each call, so they stay on
// the stack while spin runs.
//
//go:noinline
func one() {
	sink += spin(length())
}

//go:noinline
func three() {
	sink += spin(length())
	sink += spin(length())
	sink += spin(length())
}

func main() {
	seconds := 5.0
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || v < 0 || v > 86400 {
			fmt.Fprintf(os.Stderr, "%s: bad duration '%s' (seconds, 0..86400)\n",
				os.Args[0], os.Args[1])
			os.Exit(2)
		}
		seconds = v
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	rounds := 0
	for {
		one()
		three()
		rounds++
		if !time.Now().Before(end) {
			break
		}
	}
	fmt.Printf("gospin: %d rounds of one:three = 1:3 calls of spin\n", rounds)
}
