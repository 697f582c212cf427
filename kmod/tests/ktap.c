// SPDX-License-Identifier: GPL-2.0
/*
 * cprof_ktap.ko: the module's units tested in the kernel, below a VM
 * test's end to end.  Each suite builds the unit it tests from the same
 * source as cprof.ko (its test file includes the unit's .c), so cprof.ko
 * exports nothing for it and is built the same with or without it.
 * Loading it runs every suite and prints the results in KTAP version 1
 * to the kernel log (tests/vm/tests/k_ktap.sh reads them); it does
 * nothing else and may be removed at once.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ktap.h"

/* KTAP's lines start at the margin: no module name before them. */
#undef pr_fmt
#define pr_fmt(fmt) fmt

#define KTAP_OUT_MAX	(64 * 1024)	/* a suite's result lines */

/**
 * ktap_check() - one check of the current case
 * @k: the suite's results
 * @ok: whether the check holds
 * @fmt: what went wrong, when it does not (the case's reason, if first)
 *
 * Return: @ok.
 */
bool ktap_check(struct ktap *k, bool ok, const char *fmt, ...)
{
	va_list args;

	if (ok || k->failing)
		return ok;
	k->failing = true;
	va_start(args, fmt);
	vscnprintf(k->reason, sizeof(k->reason), fmt, args);
	va_end(args);
	return false;
}

/**
 * ktap_end() - end the current case: its result line
 * @k: the suite's results
 * @fmt: the case's name; no '#' or newline (ktap_name() makes one)
 *
 * "ok N name", or "not ok N name # reason" if a check failed; the next
 * check starts the next case.
 */
void ktap_end(struct ktap *k, const char *fmt, ...)
{
	const char *result = k->failing ? "not ok" : "ok";
	va_list args;

	k->cases++;
	k->len += scnprintf(k->out + k->len, k->size - k->len, "%s %u ",
			    result, k->cases);
	va_start(args, fmt);
	k->len += vscnprintf(k->out + k->len, k->size - k->len, fmt, args);
	va_end(args);
	if (k->failing) {
		k->failed++;
		k->len += scnprintf(k->out + k->len, k->size - k->len,
				    " # %s", k->reason);
	}
	k->len += scnprintf(k->out + k->len, k->size - k->len, "\n");
	k->failing = false;
}

/**
 * ktap_name() - text as a case's name may show it
 * @text: any text
 * @buf: where to write the name
 * @size: @buf's size; longer text is cut, ending in "..."
 *
 * Newlines as "\n", '#', '\' and other bytes than printable ASCII as
 * "\xHH", in double quotes.
 *
 * Return: @buf.
 */
const char *ktap_name(const char *text, char *buf, size_t size)
{
	size_t n = 0;

	n += scnprintf(buf + n, size - n, "\"");
	for (; *text && n + 8 < size; text++) {
		unsigned char c = *text;

		if (c == '\n')
			n += scnprintf(buf + n, size - n, "\\n");
		else if (c < ' ' || c > '~' || c == '#' || c == '\\')
			n += scnprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = c;
	}
	n += scnprintf(buf + n, size - n, *text ? "\"..." : "\"");
	return buf;
}

static const struct ktap_suite *const ktap_suites[] = {
	&ktap_ctl_suite,
	&ktap_utable_suite,
	&ktap_ring_suite,
};

/* Run one suite, its results kept in @out, and print it as subtest @nr. */
static void ktap_run(const struct ktap_suite *s, unsigned int nr, char *out)
{
	struct ktap k = { .out = out, .size = KTAP_OUT_MAX };
	char *line, *p;
	bool ran, ok;

	out[0] = '\0';
	ran = s->run(&k);
	ok = ran && !k.failed && k.len < k.size - 1;
	pr_info("    KTAP version 1\n");
	pr_info("    # Subtest: %s\n", s->name);
	pr_info("    1..%u\n", k.cases);
	for (p = k.out; (line = strsep(&p, "\n")) && *line;)
		pr_info("    %s\n", line);
	pr_info("# %s: pass:%u fail:%u total:%u\n", s->name,
		k.cases - k.failed, k.failed, k.cases);
	if (!ran)
		pr_info("not ok %u %s # could not set up its cases\n", nr,
			s->name);
	else if (k.len >= k.size - 1)
		pr_info("not ok %u %s # its results overflowed\n", nr, s->name);
	else
		pr_info("%s %u %s\n", ok ? "ok" : "not ok", nr, s->name);
}

static int __init ktap_init(void)
{
	char *out = kvmalloc(KTAP_OUT_MAX, GFP_KERNEL);
	unsigned int i;

	if (!out)
		return -ENOMEM;
	pr_info("KTAP version 1\n");
	pr_info("1..%zu\n", ARRAY_SIZE(ktap_suites));
	for (i = 0; i < ARRAY_SIZE(ktap_suites); i++)
		ktap_run(ktap_suites[i], i + 1, out);
	kvfree(out);
	return 0;
}

static void __exit ktap_exit(void)
{
}

module_init(ktap_init);
module_exit(ktap_exit);
MODULE_DESCRIPTION("cprof's in-kernel tests, reported in KTAP");
MODULE_LICENSE("GPL");
