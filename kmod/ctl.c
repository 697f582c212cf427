// SPDX-License-Identifier: GPL-2.0
/*
 * Settings: read as "key=value" lines from /proc/cprof/ctl, written the same
 * way.  A write is parsed whole into a copy; only if every line is valid is
 * the copy installed, so a bad write changes nothing.  Settings are frozen
 * while a profile runs (-EBUSY): the stream header describes them.
 */
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cprof.h"
#include "ctl.h"
#include "record.h"
#include "session.h"
#include "utable.h"

#define CPROF_CTL_LINE_MAX	256

static struct cprof_settings cprof_set;
/* Orders changes of the settings against a profile's start and stop. */
static DEFINE_MUTEX(cprof_lock);

static const char * const cprof_mode_names[] = {
	[CPROF_MODE_BOTH]	= "both",
	[CPROF_MODE_USER]	= "user",
	[CPROF_MODE_KERNEL]	= "kernel",
};

static const char * const cprof_kind_names[] = {
	[CPROF_KIND_CPU]	= "cpu",
	[CPROF_KIND_OFFCPU]	= "offcpu",
	[CPROF_KIND_WALL]	= "wall",
	[CPROF_KIND_THREADS]	= "threads",
	[CPROF_KIND_THREADCREATE] = "threadcreate",
	[CPROF_KIND_MUTEX]	= "mutex",
	[CPROF_KIND_TRACE]	= "trace",
	[CPROF_KIND_HEAP]	= "heap",
};

static int cprof_parse_u32(const char *val, u32 min, u32 max, u32 *out)
{
	u32 v;

	if (kstrtou32(val, 10, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A user address: decimal or 0x hexadecimal, 0 for none. */
static int cprof_parse_addr(const char *val, u64 *out)
{
	return kstrtou64(val, 0, out) ? -EINVAL : 0;
}

static int cprof_parse_cpus(const char *val, struct cprof_settings *s)
{
	if (!strcmp(val, "all")) {
		s->all_cpus = true;
		return 0;
	}
	if (!*val || cpulist_parse(val, s->cpus) || cpumask_empty(s->cpus) ||
	    !cpumask_subset(s->cpus, cpu_possible_mask))
		return -EINVAL;
	s->all_cpus = false;
	return 0;
}

static int cprof_parse_line(char *line, struct cprof_settings *s,
			    bool *stop)
{
	char *val = strchr(line, '=');
	int i;

	if (!val)
		return -EINVAL;
	*val++ = '\0';
	if (!strcmp(line, "stop")) {
		*stop = true;
		return strcmp(val, "1") ? -EINVAL : 0;
	}
	if (!strcmp(line, "freq"))
		return cprof_parse_u32(val, 1, CPROF_FREQ_MAX, &s->freq);
	if (!strcmp(line, "seconds"))
		return cprof_parse_u32(val, 0, CPROF_SECONDS_MAX, &s->seconds);
	if (!strcmp(line, "depth"))
		return cprof_parse_u32(val, 1, CPROF_MAX_DEPTH, &s->depth);
	if (!strcmp(line, "pid"))
		return cprof_parse_u32(val, 0, PID_MAX_LIMIT, &s->pid);
	if (!strcmp(line, "budget"))
		return cprof_parse_u32(val, 1, CPROF_BUDGET_MAX, &s->budget);
	if (!strcmp(line, "accesses"))
		return cprof_parse_u32(val, 1, CPROF_ACCESSES_MAX,
				       &s->accesses);
	if (!strcmp(line, "offcpu_depth"))
		return cprof_parse_u32(val, 1, CPROF_MAX_DEPTH,
				       &s->offcpu_depth);
	if (!strcmp(line, "unwind_mb"))
		return cprof_parse_u32(val, 0, CPROF_UNWIND_MB_MAX,
				       &s->unwind_mb);
	if (!strcmp(line, "ustack")) {
		if (cprof_parse_u32(val, 0, CPROF_USTACK_MAX, &s->ustack) ||
		    s->ustack % 8)
			return -EINVAL;
		return 0;
	}
	if (!strcmp(line, "heap_rate"))
		return cprof_parse_u32(val, 1, CPROF_HEAP_RATE_MAX,
				       &s->heap_rate);
	if (!strcmp(line, "heap_kb"))
		return cprof_parse_u32(val, 1, CPROF_HEAP_KB_MAX, &s->heap_kb);
	if (!strcmp(line, "heap_malloc"))
		return cprof_parse_addr(val, &s->heap_fn[CPROF_HEAP_MALLOC]);
	if (!strcmp(line, "heap_calloc"))
		return cprof_parse_addr(val, &s->heap_fn[CPROF_HEAP_CALLOC]);
	if (!strcmp(line, "heap_realloc"))
		return cprof_parse_addr(val, &s->heap_fn[CPROF_HEAP_REALLOC]);
	if (!strcmp(line, "heap_posix_memalign"))
		return cprof_parse_addr(val, &s->heap_fn[CPROF_HEAP_MEMALIGN]);
	if (!strcmp(line, "heap_free"))
		return cprof_parse_addr(val, &s->heap_fn[CPROF_HEAP_FREE]);
	if (!strcmp(line, "cpus"))
		return cprof_parse_cpus(val, s);
	if (!strcmp(line, "idle")) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return -EINVAL;
		s->idle = val[0] == '1';
		return 0;
	}
	if (!strcmp(line, "mode")) {
		for (i = 0; i < ARRAY_SIZE(cprof_mode_names); i++) {
			if (!strcmp(val, cprof_mode_names[i])) {
				s->mode = i;
				return 0;
			}
		}
	}
	if (!strcmp(line, "kind")) {
		for (i = 0; i < ARRAY_SIZE(cprof_kind_names); i++) {
			/* a kind number this module does not have */
			if (cprof_kind_names[i] &&
			    !strcmp(val, cprof_kind_names[i])) {
				s->kind = i;
				return 0;
			}
		}
	}
	return -EINVAL;
}

static int cprof_ctl_apply_locked(const char *text)
{
	bool profiling = cprof_session_active();
	struct cprof_settings s;
	char *buf, *p, *line;
	int n = 0, err = 0;
	bool stop = false;

	lockdep_assert_held(&cprof_lock);
	if (cprof_settings_alloc(&s))
		return -ENOMEM;
	buf = kstrdup(text, GFP_KERNEL);
	if (!buf) {
		err = -ENOMEM;
		goto free_mask;
	}
	cprof_settings_copy(&s, &cprof_set);
	p = buf;
	while (!err && (line = strsep(&p, "\n"))) {
		if (!*line && !p)
			break;		/* after the final newline */
		if (!*line || strlen(line) > CPROF_CTL_LINE_MAX)
			err = -EINVAL;
		else
			err = cprof_parse_line(line, &s, &stop);
		n++;
	}
	if (!err && !n)
		err = -EINVAL;
	if (!err && stop && n > 1)
		err = -EINVAL;		/* stop=1 goes alone */
	/*
	 * The ticks stop now, not when the reader next runs: it may be
	 * stopped itself (job control), and what it drains must end here.
	 */
	if (!err && stop && cprof_session_stop_current(CPROF_END_STOP)) {
		cprof_record_stop();
	} else if (!err && !stop && profiling) {
		err = -EBUSY;
	} else if (!err && !stop) {
		cprof_settings_copy(&cprof_set, &s);
		cprof_utable_set_limit(cprof_set.unwind_mb);
	}
	kfree(buf);
free_mask:
	cprof_settings_free(&s);
	return err;
}

/**
 * cprof_ctl_apply() - apply "key=value" lines (the last may lack its newline)
 * @text: the lines, NUL-terminated
 *
 * All or nothing: -EINVAL for any bad line, an empty write or an over-long
 * line; -EBUSY when a profile runs.  "stop=1" alone is the exception: it
 * ends the profile running now, if any (never a later one).
 *
 * Context: process; may sleep.
 * Return: 0 or a negative errno.
 */
int cprof_ctl_apply(const char *text)
{
	int err;

	mutex_lock(&cprof_lock);
	err = cprof_ctl_apply_locked(text);
	mutex_unlock(&cprof_lock);
	return err;
}

/**
 * cprof_ctl_show() - print the settings as "key=value" lines
 * @m: the seq_file of a read of /proc/cprof/ctl
 *
 * Context: process; may sleep.
 */
void cprof_ctl_show(struct seq_file *m)
{
	const struct cprof_settings *s = &cprof_set;

	mutex_lock(&cprof_lock);
	seq_printf(m, "freq=%u\n", s->freq);
	seq_printf(m, "seconds=%u\n", s->seconds);
	seq_printf(m, "depth=%u\n", s->depth);
	seq_printf(m, "pid=%u\n", s->pid);
	if (s->all_cpus)
		seq_puts(m, "cpus=all\n");
	else
		seq_printf(m, "cpus=%*pbl\n", cpumask_pr_args(s->cpus));
	seq_printf(m, "mode=%s\n", cprof_mode_names[s->mode]);
	seq_printf(m, "idle=%d\n", s->idle);
	seq_printf(m, "budget=%u\n", s->budget);
	seq_printf(m, "unwind_mb=%u\n", s->unwind_mb);
	seq_printf(m, "ustack=%u\n", s->ustack);
	seq_printf(m, "kind=%s\n", cprof_kind_names[s->kind]);
	seq_printf(m, "accesses=%u\n", s->accesses);
	seq_printf(m, "offcpu_depth=%u\n", s->offcpu_depth);
	seq_printf(m, "heap_rate=%u\n", s->heap_rate);
	seq_printf(m, "heap_kb=%u\n", s->heap_kb);
	seq_printf(m, "heap_malloc=%#llx\n", s->heap_fn[CPROF_HEAP_MALLOC]);
	seq_printf(m, "heap_calloc=%#llx\n", s->heap_fn[CPROF_HEAP_CALLOC]);
	seq_printf(m, "heap_realloc=%#llx\n", s->heap_fn[CPROF_HEAP_REALLOC]);
	seq_printf(m, "heap_posix_memalign=%#llx\n",
		   s->heap_fn[CPROF_HEAP_MEMALIGN]);
	seq_printf(m, "heap_free=%#llx\n", s->heap_fn[CPROF_HEAP_FREE]);
	mutex_unlock(&cprof_lock);
}

/**
 * cprof_ctl_begin_session() - start a profile with the settings as they are
 * @kernel_addrs: as cprof_session_begin()
 *
 * The settings cannot change between the check that no profile runs and
 * the session's start: "stop=1" and a settings write wait for it.
 *
 * Context: process; may sleep.
 * Return: as cprof_session_begin().
 */
struct cprof_session *cprof_ctl_begin_session(bool kernel_addrs)
{
	struct cprof_session *s;

	mutex_lock(&cprof_lock);
	s = cprof_session_begin(&cprof_set, kernel_addrs);
	mutex_unlock(&cprof_lock);
	return s;
}

/**
 * cprof_ctl_init() - the settings at load time, from the module parameters
 * @freq: samples per second per CPU
 * @seconds: profile length; 0 until stopped
 * @depth: frames per stack, kernel and user each
 * @budget: handler time, % of a CPU
 * @accesses: user accesses a tick or a recorded switch may make
 *
 * Context: module init.
 * Return: 0, -EINVAL for a value out of range, or -ENOMEM.
 */
int cprof_ctl_init(u32 freq, u32 seconds, u32 depth, u32 budget,
		   u32 accesses)
{
	struct cprof_settings *s = &cprof_set;

	if (!freq || freq > CPROF_FREQ_MAX ||
	    seconds > CPROF_SECONDS_MAX || !depth || depth > CPROF_MAX_DEPTH ||
	    !budget || budget > CPROF_BUDGET_MAX ||
	    !accesses || accesses > CPROF_ACCESSES_MAX)
		return -EINVAL;
	if (cprof_settings_alloc(s))
		return -ENOMEM;
	s->freq = freq;
	s->seconds = seconds;
	s->depth = depth;
	s->budget = budget;
	s->accesses = accesses;
	s->offcpu_depth = CPROF_OFFCPU_DEPTH_DEFAULT;
	s->heap_rate = CPROF_HEAP_RATE_DEFAULT;
	s->heap_kb = CPROF_HEAP_KB_DEFAULT;
	s->unwind_mb = CPROF_UNWIND_MB_DEFAULT;
	s->ustack = CPROF_USTACK_DEFAULT;
	s->mode = CPROF_MODE_BOTH;
	s->all_cpus = true;
	return 0;
}

/**
 * cprof_ctl_exit() - free the settings
 *
 * Context: module exit or a failed init, after the procfs files are gone.
 */
void cprof_ctl_exit(void)
{
	cprof_settings_free(&cprof_set);
}
