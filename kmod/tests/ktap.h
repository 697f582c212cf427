/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel tests' reporter: each suite's cases end in one KTAP result
 * line ("ok N name" or "not ok N name # reason"), kept until the suite
 * ends, then printed to the kernel log under the suite's own header and
 * plan, indented as a subtest of cprof_ktap.ko's run.
 */
#ifndef CPROF_KTAP_H
#define CPROF_KTAP_H

#include <linux/compiler.h>
#include <linux/types.h>

struct ktap {
	char *out;		/* the suite's result lines */
	size_t len;
	size_t size;
	unsigned int cases;
	unsigned int failed;
	bool failing;	/* a check of the current case failed */
	char reason[160];	/* the first one's message */
};

bool ktap_check(struct ktap *k, bool ok, const char *fmt, ...) __printf(3, 4);
void ktap_end(struct ktap *k, const char *fmt, ...) __printf(2, 3);
const char *ktap_name(const char *text, char *buf, size_t size);

/* A suite of cases: run() ends each with ktap_end(); false if it could not run. */
struct ktap_suite {
	const char *name;
	bool (*run)(struct ktap *k);
};

extern const struct ktap_suite ktap_ctl_suite;
extern const struct ktap_suite ktap_utable_suite;
extern const struct ktap_suite ktap_ring_suite;

#endif /* CPROF_KTAP_H */
