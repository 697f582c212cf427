/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fusehang.h - a FUSE file system of one file, "prog" (a copy of a given
 * file's bytes), served from /dev/fuse by a child process that stops
 * answering when told to: what a user's FUSE server that never answers
 * does to a reader.  Root only (it mounts).
 *
 *	struct fusehang h;
 *
 *	if (fusehang_start(&h, tmp_path("mnt"), "/bin/true"))
 *		test_skip("no FUSE here");
 *	... a process opens and maps h.mnt/prog ...
 *	fusehang_hang(&h);	(from now on no request is answered)
 *	... what reads it must not wait on it ...
 *	fusehang_stop(&h);	(the server ends: waiters get ENOTCONN)
 *
 * Only the requests a lookup, open, mmap and read of the one file make
 * are answered; any other gets ENOSYS.
 */
#ifndef CPROF_FUSEHANG_H
#define CPROF_FUSEHANG_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fusehang {
	pid_t server;
	int ctl;			/* a byte: hang; closed: end */
	char mnt[4096];
	char file[4200];		/* mnt/prog */
};

#define FUSEHANG_BUF	(FUSE_MIN_READ_BUFFER + (1 << 20))

static inline void fusehang_attr(struct fuse_attr *a, uint64_t ino,
				 uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->size = ino == 1 ? 0 : size;
	a->blocks = (a->size + 511) / 512;
	a->mode = ino == 1 ? S_IFDIR | 0755 : S_IFREG | 0755;
	a->nlink = ino == 1 ? 2 : 1;
	a->blksize = 4096;
}

static inline void fusehang_reply(int fd, uint64_t unique, int error,
				  const void *out, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 4096];
	struct fuse_out_header *h = (void *)buf;
	ssize_t n;

	if (len > sizeof(buf) - sizeof(*h))
		len = sizeof(buf) - sizeof(*h);
	h->len = sizeof(*h) + (error ? 0 : len);
	h->error = error;
	h->unique = unique;
	if (!error && len)
		memcpy(buf + sizeof(*h), out, len);
	n = write(fd, buf, h->len);
	(void)n;
}

/* The server: answer until told to hang, then read and drop. */
static inline void fusehang_serve(int fd, int ctl, const char *data,
				  size_t size)
{
	char *buf = malloc(FUSEHANG_BUF);
	bool hang = false;

	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = ctl, .events = POLLIN } };
		struct fuse_in_header *in = (void *)buf;
		const char *arg = buf + sizeof(*in);
		ssize_t n;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents) {
			char c;

			if (read(ctl, &c, 1) != 1)
				_exit(0);
			hang = true;
		}
		if (!(p[0].revents & POLLIN))
			continue;
		n = read(fd, buf, FUSEHANG_BUF);
		/* the connection aborted (ENODEV): nothing more comes */
		if (n < 0 && errno == ENODEV)
			_exit(0);
		if (n < (ssize_t)sizeof(*in))
			continue;
		if (hang || in->opcode == FUSE_FORGET ||
		    in->opcode == FUSE_BATCH_FORGET ||
		    in->opcode == FUSE_INTERRUPT)
			continue;
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = (const void *)arg;
			struct fuse_init_out o = {
				.major = FUSE_KERNEL_VERSION,
				.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
					 ii->minor : FUSE_KERNEL_MINOR_VERSION,
				.max_readahead = ii->max_readahead,
				.max_background = 16,
				.congestion_threshold = 12,
				.max_write = 65536,
				.time_gran = 1,
			};

			fusehang_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o = {
				.nodeid = 2, .generation = 1,
				.entry_valid = 3600, .attr_valid = 3600,
			};

			if (in->nodeid != 1 || strcmp(arg, "prog")) {
				fusehang_reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			fusehang_attr(&o.attr, 2, size);
			fusehang_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = { .attr_valid = 3600 };

			fusehang_attr(&o.attr, in->nodeid, size);
			fusehang_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { .fh = 1 };

			fusehang_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			const struct fuse_read_in *ri = (const void *)arg;
			size_t at = ri->offset < size ? ri->offset : size;
			size_t len = size - at < ri->size ? size - at : ri->size;

			fusehang_reply(fd, in->unique, 0, data + at,
				       len > 4096 ? 4096 : len);
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			fusehang_reply(fd, in->unique, 0, NULL, 0);
			break;
		case FUSE_DESTROY:
			fusehang_reply(fd, in->unique, 0, NULL, 0);
			_exit(0);
		default:
			fusehang_reply(fd, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

/* Mount it at mnt (made here) and serve src's bytes: 0, else -1. */
static inline int fusehang_start(struct fusehang *h, const char *mnt,
				 const char *src)
{
	char opts[128], *data = NULL;
	size_t size = 0;
	int fd, ctl[2];
	FILE *f = fopen(src, "re");

	memset(h, 0, sizeof(*h));
	h->server = -1;
	h->ctl = -1;
	if (f) {
		if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 &&
		    !fseek(f, 0, SEEK_SET) && (data = malloc(size)) &&
		    fread(data, 1, size, f) != size) {
			free(data);
			data = NULL;
		}
		fclose(f);
	}
	if (!data)
		return -1;
	snprintf(h->mnt, sizeof(h->mnt), "%s", mnt);
	snprintf(h->file, sizeof(h->file), "%s/prog", mnt);
	mkdir(mnt, 0755);
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		free(data);
		return -1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("cproftest", mnt, "fuse.cproftest", MS_NOSUID | MS_NODEV,
		  opts) || pipe2(ctl, O_CLOEXEC)) {
		close(fd);
		free(data);
		return -1;
	}
	h->server = fork();
	if (h->server == 0) {
		close(ctl[1]);
		fusehang_serve(fd, ctl[0], data, size);
		_exit(0);
	}
	close(ctl[0]);
	close(fd);
	free(data);
	h->ctl = ctl[1];
	if (h->server < 0) {
		umount2(mnt, MNT_DETACH);
		close(ctl[1]);
		return -1;
	}
	return 0;
}

static inline void fusehang_hang(struct fusehang *h)
{
	if (write(h->ctl, "h", 1) != 1)
		return;
	/* the server reads it before the next request comes */
	usleep(100000);
}

static inline void fusehang_stop(struct fusehang *h)
{
	if (h->server > 0) {
		kill(h->server, SIGKILL);
		waitpid(h->server, NULL, 0);
	}
	if (h->ctl >= 0)
		close(h->ctl);
	umount2(h->mnt, MNT_DETACH);
	h->server = -1;
	h->ctl = -1;
}

#endif /* CPROF_FUSEHANG_H */
