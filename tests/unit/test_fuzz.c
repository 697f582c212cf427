// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Bad input never crashes: thousands of randomly damaged streams (bytes
 * flipped, fields set to extremes, records cut or repeated) go through the
 * whole pipeline -- decoder, aggregation, model, pprof/folded/top writers.
 * Each is either rejected with one line naming a byte offset, or converted.
 * Run under ASan+UBSan by `make test`, this is where memory errors show.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pipeline.h"
#include "streambuild.h"
#include "test.h"

#define ROUNDS	3000

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void build(struct sb *b)
{
	uint64_t k[3] = { 0xffffffff81000100, 0xffffffff81000200, 0xffffffff81000300 };
	uint64_t u[4] = { 0x401000, 0x402000, 0x7f0000001000, 0x403000 };

	sb_init(b);
	sb_header(b, NULL);
	sb_mmap(b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", NULL, 0);
	sb_mmap(b, 1, 42, 0x7f0000000000, 0x7f0000100000, 0, "[vdso]", NULL, 0);
	sb_sample(b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 4, u);
	sb_sample(b, 11, 42, 43, 2, "x", 0, 3, k, 4, u);
	sb_throttle(b, 12, 2, SB_PERIOD_NS * 2);
	sb_sample(b, 13, 42, 44, 2, "x", 0, 3, k, 2, u);
	sb_lost(b, 13, 0, 5, 1);
	sb_sample(b, 14, 0, 0, 3, "swapper/3", CPROF_SAMPLE_KTHREAD, 1, k, 0, NULL);
	sb_end(b, 999000000, CPROF_END_SIGNAL, 7);
}

/* Damage a copy of the stream in one of a few ways. */
static size_t mutate(unsigned char *buf, size_t len, const struct sb *b)
{
	size_t at = next() % len, n, i;

	switch (next() % 5) {
	case 0:		/* flip some bytes */
		for (n = 1 + next() % 4; n--;)
			buf[next() % len] ^= 1 << (next() % 8);
		break;
	case 1:		/* a 16/32/64-bit field to an extreme */
		at &= ~(size_t)3;
		if (at + 8 <= len)
			memset(buf + at, next() % 2 ? 0xff : 0, 1 << (next() % 4));
		break;
	case 2:		/* cut */
		len = at;
		break;
	case 3:		/* a record's size field */
		i = next() % b->nr_recs;
		memcpy(buf + b->offs[i] + 4, &(uint32_t){ next() % 0x20000 }, 4);
		break;
	default:	/* a record's type */
		i = next() % b->nr_recs;
		buf[b->offs[i]] = next() % 8;
		break;
	}
	return len;
}

/* The whole pipeline on one input; -1 rejected, 0 converted. */
static int convert(const unsigned char *buf, size_t len, FILE *sink)
{
	int fd = memfd_create("in", 0), ret;

	if (len && write(fd, buf, len) != (ssize_t)len)
		abort();
	lseek(fd, 0, SEEK_SET);
	ret = pipeline_convert(fd, sink);
	close(fd);
	return ret;
}

int main(void)
{
	unsigned char *buf;
	int i, rejected = 0, converted = 0, bad_msg = 0;
	FILE *sink = fopen("/dev/null", "w");
	int save = dup(2), errfd = memfd_create("stderr", 0);
	struct sb b;

	build(&b);
	buf = malloc(b.len);
	test_cond("the undamaged stream converts", convert(b.buf, b.len, sink) == 0);
	dup2(errfd, 2);
	for (i = 0; i < ROUNDS; i++) {
		char msg[512];
		size_t len;
		ssize_t n;

		memcpy(buf, b.buf, b.len);
		len = mutate(buf, b.len, &b);
		if (ftruncate(errfd, 0) || lseek(errfd, 0, SEEK_SET)) {
			dup2(save, 2);
			test_cond("the captured stderr can be emptied", false);
			break;
		}
		if (convert(buf, len, sink)) {
			rejected++;
			fflush(stderr);
			n = pread(errfd, msg, sizeof(msg) - 1, 0);
			msg[n > 0 ? n : 0] = '\0';
			if (!strstr(msg, " at byte ") || strchr(msg, '\n') != msg + strlen(msg) - 1)
				bad_msg++;
		} else {
			converted++;
		}
	}
	dup2(save, 2);
	test_condf(rejected + converted == ROUNDS,
		   "%d damaged streams, none crashed: %d rejected, %d converted",
		   ROUNDS, rejected, converted);
	test_condf(bad_msg == 0, "every rejection is one line with a byte offset (%d not)",
		   bad_msg);
	test_cond("both outcomes were exercised", rejected > 100 && converted > 100);
	fclose(sink);
	free(buf);
	sb_free(&b);
	return test_report();
}
