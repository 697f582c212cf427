// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * live - run a profile through the module's files.  See live.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live.h"

/* Why the module refused an open, and what to do about it. */
static const char *refusal_hint(int err)
{
	switch (err) {
	case ENOENT:
		return " (is cprof.ko loaded?)";
	case EACCES:
		return " (profiling needs CAP_PERFMON or CAP_SYS_ADMIN in the host's initial user namespace: run as root outside a container or user namespace, or grant CAP_PERFMON)";
	case EPERM:
		return " (the kernel is locked down: lockdown=confidentiality refuses profiling until the next boot)";
	case EBUSY:
		return " (another profile is running)";
	default:
		return "";
	}
}

int live__start(struct live *l, const struct live_settings *s, int *err,
		char *msg, size_t size)
{
	char ctl[4096], settings[128];
	int len;
	ssize_t n;

	l->fd = -1;
	l->ctl_fd = -1;
	snprintf(ctl, sizeof(ctl), "%s/ctl", s->proc_dir);
	len = snprintf(settings, sizeof(settings), "seconds=%ld\n", s->seconds);
	if (s->freq)
		len += snprintf(settings + len, sizeof(settings) - len,
				"freq=%ld\n", s->freq);
	if (s->pid >= 0)
		len += snprintf(settings + len, sizeof(settings) - len,
				"pid=%ld\n", s->pid);
	l->ctl_fd = open(ctl, O_WRONLY | O_CLOEXEC);
	if (l->ctl_fd < 0) {
		*err = errno;
		snprintf(msg, size, "failed to open %s: %s%s", ctl,
			 strerror(*err), refusal_hint(*err));
		return -1;
	}
	n = write(l->ctl_fd, settings, len);
	if (n != len) {
		*err = n < 0 ? errno : EIO;
		snprintf(msg, size, "failed to configure the profile (%.*s) in %s: %s%s",
			 len - 1, settings, ctl,
			 n < 0 ? strerror(*err) : "short write",
			 refusal_hint(*err));
		live__close(l);
		return -1;
	}
	snprintf(l->path, sizeof(l->path), "%s/profile", s->proc_dir);
	l->fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (l->fd < 0) {
		*err = errno;
		snprintf(msg, size, "failed to open %s: %s%s", l->path,
			 strerror(*err), refusal_hint(*err));
		live__close(l);
		return -1;
	}
	return 0;
}

void live__stop(const struct live *l)
{
	static const char stop[] = "stop=1\n";
	ssize_t unreported;

	if (l->ctl_fd < 0)
		return;
	unreported = write(l->ctl_fd, stop, sizeof(stop) - 1);
	(void)unreported;
}

void live__close(struct live *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->ctl_fd >= 0)
		close(l->ctl_fd);
	l->fd = -1;
	l->ctl_fd = -1;
}
