// SPDX-License-Identifier: GPL-2.0
/*
 * ctl's settings (ctl.c, built here as it is in cprof.ko): each key's
 * bounds, every malformed write refused with -EINVAL and the settings read
 * back unchanged, -EBUSY while a profile runs, stop=1 alone.  The
 * profile's start and stop are fakes below: all ctl asks of session.c and
 * record.c.  The bytes a write(2) holds (NULs, its length, its offset)
 * are procfs.c's, tested end to end by k_ctl.
 */
#include "../ctl.c"

#include <linux/err.h>

#include "ktap.h"

/* The fakes: a profile runs while ctl_running is set. */
static bool ctl_running;
static unsigned int ctl_stops, ctl_record_stops;
static u32 ctl_stop_reason, ctl_begun_freq;

struct cprof_session *cprof_session_begin(const struct cprof_settings *set,
					  bool kernel_addrs)
{
	ctl_begun_freq = set->freq;
	return ERR_PTR(-ENODEV);
}

bool cprof_session_active(void)
{
	return ctl_running;
}

bool cprof_session_stop_current(u32 reason)
{
	ctl_stops++;
	ctl_stop_reason = reason;
	return ctl_running;
}

void cprof_record_stop(void)
{
	ctl_record_stops++;
}

#define CTL_TEXT_MAX	1024
static char ctl_before[CTL_TEXT_MAX], ctl_after[CTL_TEXT_MAX];
static char ctl_name[64];

/* What a read of /proc/cprof/ctl shows, into @buf. */
static void ctl_read(char *buf)
{
	struct seq_file m = { .buf = buf, .size = CTL_TEXT_MAX };

	cprof_ctl_show(&m);
	buf[min_t(size_t, m.count, CTL_TEXT_MAX - 1)] = '\0';
}

/* Is "KEY=VALUE" (@line) a line of what ctl shows? */
static bool ctl_shows(const char *line)
{
	size_t n = strlen(line);
	const char *p;

	ctl_read(ctl_after);
	for (p = ctl_after; (p = strstr(p, line)); p++)
		if ((p == ctl_after || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* Module parameters, checked by cprof_ctl_init() before anything is set. */
static const struct {
	const char *name;
	u32 freq, seconds, depth, budget, accesses;
} ctl_bad_params[] = {
	{ "freq=0",		0, 5, 64, 25, 256 },
	{ "freq=100001",	100001, 5, 64, 25, 256 },
	{ "seconds=86401",	77, 86401, 64, 25, 256 },
	{ "depth=0",		77, 5, 0, 25, 256 },
	{ "depth=128",		77, 5, 128, 25, 256 },
	{ "budget=0",		77, 5, 64, 0, 256 },
	{ "budget=51",		77, 5, 64, 51, 256 },
	{ "accesses=0",		77, 5, 64, 25, 0 },
	{ "accesses=4097",	77, 5, 64, 25, 4097 },
};

/* Each value at its bounds, each name: the line ctl then shows. */
static const char *const ctl_good[][2] = {
	{ "freq=1", "freq=1" }, { "freq=100000", "freq=100000" },
	{ "seconds=0", "seconds=0" }, { "seconds=86400", "seconds=86400" },
	{ "depth=1", "depth=1" }, { "depth=127", "depth=127" },
	{ "pid=0", "pid=0" }, { "pid=4194304", "pid=4194304" },
	{ "budget=1", "budget=1" }, { "budget=50", "budget=50" },
	{ "accesses=1", "accesses=1" }, { "accesses=4096", "accesses=4096" },
	{ "offcpu_depth=1", "offcpu_depth=1" },
	{ "offcpu_depth=127", "offcpu_depth=127" },
	{ "unwind_mb=0", "unwind_mb=0" }, { "unwind_mb=4096", "unwind_mb=4096" },
	{ "ustack=0", "ustack=0" }, { "ustack=8", "ustack=8" },
	{ "ustack=32768", "ustack=32768" },
	{ "cpus=0", "cpus=0" }, { "cpus=all", "cpus=all" },
	{ "idle=1", "idle=1" }, { "idle=0", "idle=0" },
	{ "mode=user", "mode=user" }, { "mode=kernel", "mode=kernel" },
	{ "mode=both", "mode=both" },
	{ "kind=offcpu", "kind=offcpu" }, { "kind=wall", "kind=wall" },
	{ "kind=threads", "kind=threads" }, { "kind=cpu", "kind=cpu" },
	{ "kind=threadcreate", "kind=threadcreate" },
	{ "kind=mutex", "kind=mutex" },
	{ "kind=trace", "kind=trace" },
	{ "kind=heap", "kind=heap" },
	{ "heap_rate=1", "heap_rate=1" },
	{ "heap_rate=1073741824", "heap_rate=1073741824" },
	{ "heap_kb=1", "heap_kb=1" }, { "heap_kb=262144", "heap_kb=262144" },
	{ "heap_malloc=0x7f0012345670", "heap_malloc=0x7f0012345670" },
	{ "heap_free=0", "heap_free=0x0" },
	{ "heap_posix_memalign=4096", "heap_posix_memalign=0x1000" },
	{ "freq=99\n", "freq=99" },
	{ "depth=12\nseconds=7\n", "seconds=7" },
};

/* Every one is -EINVAL, and leaves the settings as they were. */
static const char *const ctl_bad[] = {
	"", "\n", "\n\n", "freq=-1", "freq=0", "freq=100001",
	"freq=99999999999999999999", "freq=abc", "freq=12abc", "freq= 5",
	"freq=5 ", "freq=0x10", "freq=", "=5", "freq", "bogus=1", "FREQ=5",
	"depth=128", "depth=0", "seconds=-1", "seconds=86401", "mode=fast",
	"mode=", "idle=2", "idle=yes", "idle=", "cpus=", "cpus=9999",
	"cpus=0-", "cpus=a", "pid=-5", "pid=4194305", "budget=0",
	"budget=51", "unwind_mb=4097", "unwind_mb=-1", "accesses=0",
	"accesses=4097", "offcpu_depth=0", "offcpu_depth=128",
	"ustack=32776", "ustack=12", "ustack=-8", "kind=off", "kind=",
	"kind=CPU", "kind=thread", "heap_rate=0", "heap_rate=1073741825",
	"heap_kb=0", "heap_kb=262145", "heap_malloc=", "heap_malloc=x",
	"heap_memalign=1", "heap_=1", "heap_free=-1", "freq=50\nbogus=1", "freq=50\n\nseconds=5",
	"freq=50\nfreq=0", "freq=50\n\n", "stop=0", "stop=yes", "stop=",
	"stop=1\nfreq=50", "freq=50\nstop=1",
};

/* A write of @text: @want, and the settings as they were. */
static void ctl_refused(struct ktap *k, const char *text, int want,
			const char *name)
{
	int err;

	ctl_read(ctl_before);
	err = cprof_ctl_apply(text);
	ctl_read(ctl_after);
	ktap_check(k, err == want, "returned %d, want %d", err, want);
	ktap_check(k, !strcmp(ctl_before, ctl_after), "changed the settings");
	ktap_end(k, "%s is %s", name, want == -EBUSY ? "-EBUSY" : "-EINVAL");
}

static void ctl_cases(struct ktap *k)
{
	static const char all[] =
		"freq=123\nseconds=2\ndepth=10\npid=1\ncpus=0\nmode=user\n"
		"idle=1\nbudget=50\nunwind_mb=16\nustack=4096\nkind=wall\n"
		"accesses=4096\noffcpu_depth=1\nheap_rate=4096\nheap_kb=64\n"
		"heap_malloc=0x10\nheap_calloc=0x20\nheap_realloc=0x30\n"
		"heap_posix_memalign=0x40\nheap_free=0x50\n";
	char *text;
	int err, i;

	for (i = 0; i < ARRAY_SIZE(ctl_good); i++) {
		err = cprof_ctl_apply(ctl_good[i][0]);
		ktap_check(k, !err, "returned %d", err);
		ktap_check(k, ctl_shows(ctl_good[i][1]), "ctl shows no %s",
			   ctl_good[i][1]);
		ktap_end(k, "takes %s",
			 ktap_name(ctl_good[i][0], ctl_name, sizeof(ctl_name)));
	}

	/* every key in one write, read back whole in ctl's order */
	err = cprof_ctl_apply(all);
	ctl_read(ctl_after);
	ktap_check(k, !err, "returned %d", err);
	ktap_check(k, !strcmp(ctl_after,
			      "freq=123\nseconds=2\ndepth=10\npid=1\ncpus=0\n"
			      "mode=user\nidle=1\nbudget=50\nunwind_mb=16\n"
			      "ustack=4096\nkind=wall\naccesses=4096\n"
			      "offcpu_depth=1\nheap_rate=4096\n"
			      "heap_kb=64\nheap_malloc=0x10\n"
			      "heap_calloc=0x20\nheap_realloc=0x30\n"
			      "heap_posix_memalign=0x40\nheap_free=0x50\n"),
		   "read back as %s", ktap_name(ctl_after, ctl_name,
						sizeof(ctl_name)));
	ktap_end(k, "every key in one write reads back in ctl's order");

	cprof_ctl_apply("freq=77\nseconds=5\ncpus=all\nkind=cpu\n");
	for (i = 0; i < ARRAY_SIZE(ctl_bad); i++)
		ctl_refused(k, ctl_bad[i], -EINVAL,
			    ktap_name(ctl_bad[i], ctl_name, sizeof(ctl_name)));

	/* a line of CPROF_CTL_LINE_MAX bytes and one more */
	text = kzalloc(CPROF_CTL_LINE_MAX + 2, GFP_KERNEL);
	if (ktap_check(k, text, "no memory")) {
		memset(text, '0', CPROF_CTL_LINE_MAX + 1);
		memcpy(text, "freq=", 5);
		text[CPROF_CTL_LINE_MAX - 1] = '9';
		text[CPROF_CTL_LINE_MAX] = '\0';
		err = cprof_ctl_apply(text);
		ktap_check(k, !err && ctl_shows("freq=9"),
			   "%d bytes: returned %d", CPROF_CTL_LINE_MAX, err);
		cprof_ctl_apply("freq=77");
	}
	ktap_end(k, "a line of %d bytes is taken", CPROF_CTL_LINE_MAX);
	snprintf(ctl_name, sizeof(ctl_name), "a line of %d bytes",
		 CPROF_CTL_LINE_MAX + 1);
	if (text) {
		text[CPROF_CTL_LINE_MAX] = '9';
		ctl_refused(k, text, -EINVAL, ctl_name);
		kfree(text);
	} else {
		ktap_check(k, false, "no memory");
		ktap_end(k, "%s is -EINVAL", ctl_name);
	}
}

static void ctl_profile_cases(struct ktap *k)
{
	struct cprof_session *s;
	int err;

	ctl_running = true;
	ctl_refused(k, "freq=50", -EBUSY, "freq=50 while profiling");
	ctl_refused(k, "bogus=1", -EINVAL, "bogus=1 while profiling");

	ctl_stops = 0;
	ctl_record_stops = 0;
	ctl_read(ctl_before);
	err = cprof_ctl_apply("stop=1\n");
	ctl_read(ctl_after);
	ktap_check(k, !err, "returned %d", err);
	ktap_check(k, ctl_stops == 1 && ctl_stop_reason == CPROF_END_STOP,
		   "%u stops, reason %u", ctl_stops, ctl_stop_reason);
	ktap_check(k, ctl_record_stops == 1, "the ticks stopped %u times",
		   ctl_record_stops);
	ktap_check(k, !strcmp(ctl_before, ctl_after), "changed the settings");
	ktap_end(k, "stop=1 ends the profile and its ticks");

	ctl_stops = 0;
	ctl_refused(k, "stop=1\nfreq=50", -EINVAL,
		    "\"stop=1\\nfreq=50\" while profiling");
	ktap_check(k, !ctl_stops, "asked the profile to stop");
	ktap_end(k, "stop=1 with another line stops nothing");

	ctl_running = false;
	ctl_record_stops = 0;
	ctl_read(ctl_before);
	err = cprof_ctl_apply("stop=1");
	ctl_read(ctl_after);
	ktap_check(k, !err, "returned %d", err);
	ktap_check(k, !ctl_record_stops, "stopped ticks no profile runs");
	ktap_check(k, !strcmp(ctl_before, ctl_after), "changed the settings");
	ktap_end(k, "stop=1 with no profile changes nothing");

	err = cprof_ctl_apply("freq=55");
	ctl_begun_freq = 0;
	s = cprof_ctl_begin_session(false);
	ktap_check(k, !err && ctl_begun_freq == 55,
		   "returned %d, the session began with freq %u", err,
		   ctl_begun_freq);
	ktap_check(k, PTR_ERR(s) == -ENODEV, "returned not the session's");
	ktap_end(k, "a profile begins with the settings written");
}

static bool ctl_run(struct ktap *k)
{
	int err, i;

	for (i = 0; i < ARRAY_SIZE(ctl_bad_params); i++) {
		err = cprof_ctl_init(ctl_bad_params[i].freq,
				     ctl_bad_params[i].seconds,
				     ctl_bad_params[i].depth,
				     ctl_bad_params[i].budget,
				     ctl_bad_params[i].accesses);
		ktap_check(k, err == -EINVAL, "returned %d", err);
		if (!err)
			cprof_ctl_exit();
		ktap_end(k, "module parameter %s is -EINVAL",
			 ctl_bad_params[i].name);
	}
	if (cprof_ctl_init(77, 5, 64, 25, 256))
		return false;
	ktap_check(k, ctl_shows("freq=77") && ctl_shows("seconds=5") &&
		   ctl_shows("depth=64") && ctl_shows("budget=25") &&
		   ctl_shows("accesses=256") && ctl_shows("cpus=all") &&
		   ctl_shows("mode=both"),
		   "ctl shows %s", ktap_name(ctl_after, ctl_name,
					     sizeof(ctl_name)));
	ktap_end(k, "the module parameters are the first settings");
	ctl_cases(k);
	ctl_profile_cases(k);
	cprof_ctl_exit();
	/* unwind_mb reached utable.c's limit: the default again */
	cprof_utable_set_limit(CPROF_UNWIND_MB_DEFAULT);
	return true;
}

const struct ktap_suite ktap_ctl_suite = { "cprof_ctl", ctl_run };
