// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * modprofile - a profile the module runs, through its files.  See
 * modprofile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stream/modprofile.h"

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

int modprofile__start(struct modprofile *mp,
		      const struct modprofile_settings *s, int *err,
		      char *msg, size_t size)
{
	char ctl[4096], settings[768];
	int len;
	ssize_t n;

	mp->fd = -1;
	mp->ctl_fd = -1;
	snprintf(ctl, sizeof(ctl), "%s/ctl", s->proc_dir);
	len = snprintf(settings, sizeof(settings), "seconds=%ld\nkind=%s\n",
		       s->seconds, s->kind ? s->kind : "cpu");
	if (s->freq)
		len += snprintf(settings + len, sizeof(settings) - len,
				"freq=%ld\n", s->freq);
	/* the whole machine unless asked: not what an earlier profile left */
	len += snprintf(settings + len, sizeof(settings) - len, "pid=%ld\n",
			s->pid > 0 ? s->pid : 0);
	if (s->extra)
		len += snprintf(settings + len, sizeof(settings) - len, "%s",
				s->extra);
	if (len >= (int)sizeof(settings)) {
		*err = E2BIG;
		snprintf(msg, size, "settings too long for %s", ctl);
		return -1;
	}
	mp->ctl_fd = open(ctl, O_WRONLY | O_CLOEXEC);
	if (mp->ctl_fd < 0) {
		*err = errno;
		snprintf(msg, size, "failed to open %s: %s%s", ctl,
			 strerror(*err), refusal_hint(*err));
		return -1;
	}
	n = write(mp->ctl_fd, settings, len);
	if (n != len) {
		*err = n < 0 ? errno : EIO;
		snprintf(msg, size, "failed to configure the profile (%.*s) in %s: %s%s",
			 len - 1, settings, ctl,
			 n < 0 ? strerror(*err) : "short write",
			 refusal_hint(*err));
		modprofile__close(mp);
		return -1;
	}
	snprintf(mp->path, sizeof(mp->path), "%s/profile", s->proc_dir);
	mp->fd = open(mp->path, O_RDONLY | O_CLOEXEC);
	if (mp->fd < 0) {
		*err = errno;
		snprintf(msg, size, "failed to open %s: %s%s", mp->path,
			 strerror(*err), refusal_hint(*err));
		modprofile__close(mp);
		return -1;
	}
	return 0;
}

void modprofile__stop(const struct modprofile *mp)
{
	static const char stop[] = "stop=1\n";
	ssize_t unreported;

	if (mp->ctl_fd < 0)
		return;
	unreported = write(mp->ctl_fd, stop, sizeof(stop) - 1);
	(void)unreported;
}

void modprofile__close(struct modprofile *mp)
{
	if (mp->fd >= 0)
		close(mp->fd);
	if (mp->ctl_fd >= 0)
		close(mp->ctl_fd);
	mp->fd = -1;
	mp->ctl_fd = -1;
}
